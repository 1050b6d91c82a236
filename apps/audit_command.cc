// asyncdp audit: an empirical privacy audit of the real protocol (docs/audit.md). Trains the configured
// run many times with and without a canary record in one client's data, measures how well an observer
// tells the two apart, and checks the resulting lower bound on epsilon against every accountant's
// reported epsilon. Prints one verdict line on stdout; exit code 3 on VIOLATION.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "core/error.h"
#include "core/sampling.h"
#include "sim/audit/audit.h"
#include "sim/config_io.h"
#include "sim/config_usage.h"
#include "sim/output_dir.h"

namespace asyncdp::apps {
namespace {

struct AuditArgs {
  std::string config_path;
  std::vector<std::string> overrides;
  std::string out_dir;
  std::string mode = "multi";
  std::string view = "white-box";
  std::string canary = "dirac";
  std::string statistic = "auto";
  std::string accounted_sampling;  // --test-accounted-sampling, parsed into options.accounted_sampling
  sim::audit::AuditOptions options;
  bool quiet = false;
  std::vector<std::string> given;  // the flags written on the command line, as "--runs"
};

bool Given(const AuditArgs& args, const std::string& flag) {
  return std::find(args.given.begin(), args.given.end(), flag) != args.given.end();
}

void RunAudit(AuditArgs& args) {
  sim::TrainConfig config =
      args.config_path.empty() ? sim::TrainConfig{} : sim::LoadConfigFile(args.config_path);
  sim::ApplyOverrides(config, args.overrides);
  // `asyncdp audit` trains asynchronous rounds many times with its own canary and options (the flags below).
  sim::audit::RequireAuditableRun(config);
  // The audit.* keys configure the one-run audit of `asyncdp train`: refused when written at all, in the file
  // too and at their default value (`audit.client = 0`) — whoever writes them means this audit, which has
  // flags for them.
  for (const std::string& key : config.given.All()) {
    if (!key.starts_with("audit.")) continue;
    throw asyncdp::ConfigError(
        key, "`asyncdp audit` does not read it: " + *sim::audit::AuditUnreadReason(key, config));
  }
  // The other keys it does not read (the runtime and its threads, a run's evaluation and outputs) are refused
  // as overrides; in the file they are the run's.
  sim::RefuseUnreadOverrides(config, "audit", [&config](const std::string& key) {
    return sim::audit::AuditUnreadReason(key, config);
  });
  sim::ValidateConfig(config);
  sim::audit::AuditOptions& options = args.options;
  options.mode = sim::audit::ParseAuditMode(args.mode);
  if (!args.accounted_sampling.empty()) {
    options.accounted_sampling = ParseSamplingModel(args.accounted_sampling, "--test-accounted-sampling");
  }
  // A flag of the other mode is refused, not ignored: the one-run audit trains once (no runs per side, no
  // parallel trainings); the multi-run audit plants one canary.
  const bool one_run = options.mode == sim::audit::AuditMode::kOneRun;
  for (const char* flag : {"--runs", "--jobs"}) {
    if (one_run && Given(args, flag)) {
      throw ConfigError(
          flag, "applies to --mode multi only: the one-run audit trains once (its size is --canaries)");
    }
  }
  if (!one_run && Given(args, "--canaries")) {
    throw ConfigError(
        "--canaries",
        "applies to --mode one-run only: the multi-run audit plants one canary (its size is --runs)");
  }
  options.view = sim::audit::ParseAuditView(args.view);
  options.canary = sim::audit::ParseCanaryKind(args.canary);
  options.statistic = sim::audit::ParseAuditStatistic(args.statistic);
  options.Validate();
  if (args.quiet) spdlog::set_level(spdlog::level::warn);
  std::string out_dir = args.out_dir;
  if (out_dir.empty()) {
    const std::string stem = args.config_path.empty()
                                 ? "audit"
                                 : std::filesystem::path(args.config_path).stem().string() + "_audit";
    out_dir = "results/" + stem;
  }
  sim::CheckOutputTarget(out_dir);  // judged before the trainings, not after them
  const sim::audit::AuditReport report = sim::audit::RunAudit(config, options);
  sim::audit::WriteAuditOutputs(report, out_dir);
  spdlog::info(
      "audit: {} trainings in {:.2f} s ({:.2f} ms each) -> {}", report.trainings, report.wall_seconds,
      1e3 * report.wall_seconds / static_cast<double>(std::max<int64_t>(1, report.trainings)), out_dir);
  std::cout << sim::audit::VerdictLine(report) << "\n";
  if (report.violation) {
    spdlog::error(
        "privacy audit VIOLATION: an accountant under-reports epsilon for this configuration (or the "
        "protocol adds less noise than it accounts); see {}/audit.json",
        out_dir);
    throw CommandExit{kExitViolation};
  }
}

}  // namespace

void RegisterAuditCommand(CLI::App& app) {
  auto args = std::make_shared<AuditArgs>();
  CLI::App* cmd = app.add_subcommand(
      "audit",
      "Empirical privacy audit: train with and without a canary record, lower-bound epsilon from the runs "
      "and\n"
      "check it against every accountant's reported epsilon. Prints one verdict line; exit code 3 on "
      "VIOLATION.\n"
      "Writes OUT/audit.json, config.resolved.toml, scores.csv, histogram.csv, roc.csv (docs/audit.md).");
  cmd->add_option("--config", args->config_path, "TOML run configuration (keys: docs/config.md)")
      ->check(NonEmptyPath());
  cmd->add_option("--set", args->overrides, "Override a key: --set dp.sigma=4 (repeatable)")->take_all();
  cmd->add_option("--out", args->out_dir, "Output directory (default results/<config name>_audit)")
      ->check(NonEmptyPath());
  cmd->add_option("--runs", args->options.runs, "Multi-run: trainings per side (with / without the canary)")
      ->capture_default_str();
  cmd->add_option("--mode", args->mode, "multi (N runs a side) | one-run (m canaries, one training)")
      ->capture_default_str();
  cmd->add_option("--canaries", args->options.canaries,
                  "One-run: canaries m, each planted with probability 1/2")
      ->capture_default_str();
  cmd->add_option("--view", args->view, "white-box (the server sees every (i, U)) | final-model")
      ->capture_default_str();
  cmd->add_option(
         "--canary", args->canary,
         "dirac (gradient canary, other records train normally) | opposite (replace-one worst case) | "
         "client (user-level: the client's whole data set, dp.unit = client) | "
         "mislabelled (a real record with another label; needs --view final-model)")
      ->capture_default_str();
  cmd->add_option("--statistic", args->statistic,
                  "auto | sum | likelihood-ratio | loss (mislabelled canaries)")
      ->capture_default_str();
  cmd->add_option("--client", args->options.client, "The audited client")->capture_default_str();
  cmd->add_option("--confidence", args->options.confidence, "Confidence of eps_lower and of the verdict")
      ->capture_default_str();
  cmd->add_option("--jobs", args->options.jobs, "Parallel trainings (0 = all cores)")->capture_default_str();
  cmd->add_flag("--quiet", args->quiet, "Only warnings on stderr");
  // Fault injection for the audit's own tests (hidden from --help: they make the report wrong on purpose).
  cmd->add_option("--test-noise-scale", args->options.noise_scale,
                  "TEST ONLY: add noise_scale * sigma while accounting sigma")
      ->group("");
  cmd->add_option("--test-accounted-sampling", args->accounted_sampling,
                  "TEST ONLY: account as if batches came from this sampler")
      ->group("");
  cmd->callback([args, cmd] {
    for (const char* flag : {"--runs", "--jobs", "--canaries"}) {
      if (cmd->count(flag) > 0) args->given.emplace_back(flag);
    }
    RunAudit(*args);
  });
}

}  // namespace asyncdp::apps
