// asyncdp train: runs the asynchronous DP-SGD framework from a TOML config (docs/config.md).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "apps/mpi_launch.h"
#include "core/error.h"
#if ASYNCDP_WITH_MPI
#include "apps/mpi_session.h"
#endif
#include "sim/config_io.h"
#include "sim/output_dir.h"
#include "sim/train.h"

namespace asyncdp::apps {
namespace {

struct TrainArgs {
  std::string config_path;
  std::vector<std::string> overrides;
  std::string out_dir;
  bool config_doc = false;
  bool print_config = false;
  bool quiet = false;
};

// `writes`: this process publishes the outputs (false on an MPI client rank; rank 0 writes them).
void TrainAndWrite(const TrainArgs& args, const sim::TrainConfig& config, bool progress, bool writes) {
  std::string out_dir = args.out_dir;
  if (out_dir.empty()) {
    const std::string stem =
        args.config_path.empty() ? "train" : std::filesystem::path(args.config_path).stem().string();
    out_dir = "results/" + stem;
  }
  // The output directory is judged before the run: a --out that is a file or another tool's folder was
  // refused only once the training (minutes for LeNet) was done, and its results were lost.
  if (writes) sim::CheckOutputTarget(out_dir);
  const sim::TrainResult result = sim::RunTraining(config, sim::TrainOptions{.progress = progress});
  if (!result.primary) return;  // an MPI client rank: rank 0 writes the outputs
  sim::WriteTrainOutputs(result, out_dir);
  const sim::SummaryCore& s = result.summary_core;
  spdlog::info("done: test accuracy {}, epsilon {} (delta {:.3g}), {:.2f} s wall -> {}",
               s.accuracy.test_accuracy ? fmt::format("{:.4f}", *s.accuracy.test_accuracy)
                                        : std::string("none (diverged)"),
               sim::HeadlineText(s.epsilon), s.delta, s.wall_seconds, out_dir);
  std::cout << result.summary.dump(2) << "\n";
  // audit.canaries > 0: the one-run audit's verdict, as `asyncdp audit` reports it (exit code 3).
  if (result.audit && result.audit->violation()) throw CommandExit{kExitViolation};
  if (sim::TruncationRefused(result)) {
    spdlog::error("the run is truncated: {} client(s) did not finish (summary.json: unfinished); exit code {} "
                  "(protocol.allow_truncation = true accepts truncated runs)",
                  result.runtime.unfinished.size(), kExitTruncated);
    throw CommandExit{kExitTruncated};
  }
}

#if ASYNCDP_WITH_MPI
// Every rank of `mpirun -np P asyncdp train ...` runs this. A failure on any rank is reported by that
// rank and ends the whole job (MPI_Abort): exit code != 0, and no output directory, which is only
// published after a successful run.
void TrainOverMpi(const TrainArgs& args, const sim::TrainConfig& config) {
  MpiSession session;
  // One voice: rank 0 logs the run. Every rank resolves the same experiment, so its warnings (a client that
  // cannot reach its target, a sampler note) would otherwise print once per rank; a rank's own failure is
  // still reported below.
  if (session.rank() != 0) spdlog::set_level(spdlog::level::err);
  try {
    TrainAndWrite(args, config, !args.quiet && session.rank() == 0, /*writes=*/session.rank() == 0);
  } catch (const InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    session.Abort(2);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    session.Abort(1);
  }
}
#endif

void RunTrain(const TrainArgs& args) {
  if (args.config_doc) {
    std::cout << sim::RenderConfigDoc();
    return;
  }
  sim::TrainConfig config = args.config_path.empty() ? sim::TrainConfig{} : sim::LoadConfigFile(args.config_path);
  sim::ApplyOverrides(config, args.overrides);
  sim::ValidateConfig(config);
  if (args.quiet) spdlog::set_level(spdlog::level::warn);
  if (args.print_config) {
    // What the run's config.resolved.toml would record (data-derived defaults, the calibrated sigma), on
    // stdout; nothing is trained or written. Once: every rank of an mpirun would print it.
    if (const int ranks = LaunchedRanks(); ranks > 1) {
      throw InputError(
          "--print-config",
          fmt::format("started as one of {} MPI ranks: --print-config resolves the configuration "
                      "without running it; start asyncdp without mpirun",
                      ranks));
    }
    std::cout << sim::ResolvedConfigToml(sim::ResolveTrainConfig(config));
    return;
  }
  // Started as one of P > 1 ranks, a run on the virtual or threads runtime would run whole in every rank and
  // write the same --out P times.
  if (const int ranks = LaunchedRanks(); ranks > 1 && config.protocol.runtime != sim::RuntimeKind::kMpi) {
    throw InputError(
        "protocol.runtime",
        fmt::format("started as one of {} MPI ranks, but protocol.runtime = \"{}\" runs the whole "
                    "simulation in each rank (each would write the same output): set "
                    "protocol.runtime = \"mpi\" to spread the clients over the ranks, or start "
                    "asyncdp without mpirun",
                    ranks, sim::ToString(config.protocol.runtime)));
  }
#if ASYNCDP_WITH_MPI
  if (config.protocol.runtime == asyncdp::sim::RuntimeKind::kMpi) {
    TrainOverMpi(args, config);
    return;
  }
#endif
  TrainAndWrite(args, config, !args.quiet, /*writes=*/true);
}

}  // namespace

void RegisterTrainCommand(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  CLI::App* cmd = app.add_subcommand(
      "train",
      "Run asynchronous DP-SGD (clients, server, delay rule) and report accuracy and epsilon.\n"
      "Writes OUT/config.resolved.toml, metrics.csv, clients.csv and summary.json (also printed on stdout).");
  CLI::Option* config =
      cmd->add_option("--config", args->config_path, "TOML run configuration (keys: docs/config.md)")
          ->check(NonEmptyPath());
  CLI::Option* set =
      cmd->add_option("--set", args->overrides, "Override a key: --set dp.sigma=4 (repeatable)")->take_all();
  CLI::Option* out =
      cmd->add_option("--out", args->out_dir, "Output directory (default results/<config name>)")
          ->check(NonEmptyPath());
  CLI::Option* doc = cmd->add_flag("--config-doc", args->config_doc,
                                   "Print every configuration key with its default (Markdown)");
  CLI::Option* print = cmd->add_flag(
      "--print-config", args->print_config,
      "Print the resolved configuration (as the run's config.resolved.toml would hold it: data-derived "
      "defaults, sigma calibrated to dp.epsilon) and exit without training or writing anything");
  // Refused, not ignored: the key reference reads no configuration, and a printed configuration writes no
  // output directory.
  for (CLI::Option* option : {config, set, out, print}) doc->excludes(option);
  print->excludes(out);
  cmd->add_flag("--quiet", args->quiet, "Only warnings on stderr; no progress line");
  cmd->callback([args] { RunTrain(*args); });
}

}  // namespace asyncdp::apps
