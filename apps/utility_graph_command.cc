// asyncdp utility-graph: the utility graph of Section 3.3, utility graph; docs/theory.md §6 (sim/utility_graph.h). Trains w* with
// clipping and no noise for every C, measures the accuracy of noisy copies w* + N(0, C²σ²I) relative to
// w* for every σ, and writes OUT/utility_graph.csv, OUT/summary.json (also printed on stdout),
// OUT/config.resolved.toml (the base configuration) and OUT/wstar_C<C>.metrics.csv (each w* run).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "sim/config_io.h"
#include "sim/config_usage.h"
#include "sim/output_dir.h"
#include "sim/utility_graph.h"

namespace asyncdp::apps {
namespace {

struct UtilityGraphArgs {
  std::string config_path;
  std::vector<std::string> overrides;
  std::string clips;
  std::string sigmas;
  int64_t draws = 10;
  double threshold = 0.9;
  std::string out_dir = "results/utility_graph";
  bool quiet = false;
};

void RunUtilityGraphCommand(const UtilityGraphArgs& args) {
  sim::TrainConfig config =
      args.config_path.empty() ? sim::TrainConfig{} : sim::LoadConfigFile(args.config_path);
  sim::ApplyOverrides(config, args.overrides);
  sim::RequireWStarRun(config);  // first: under check-ins most keys' reasons would be about check-ins
  // An override of a key the graph does not read (one it sets itself, or one its w* runs do not read)
  // would change nothing but the echo: refused.
  sim::RefuseUnreadOverrides(config, "utility-graph", [&config](const std::string& key) {
    return sim::UtilityGraphUnreadReason(key, config);
  });
  // A base for the utility graph's own runs (w* per C, then noisy copies): it reports test accuracy only, so
  // the run-output keys of the configuration (eval.*, output.*) are not refused here.
  sim::ValidateConfig(config, /*refuse_unused_keys=*/false);
  sim::UtilityGraphOptions options;
  options.clips = sim::ParseNumberGrid(args.clips, "--clips");
  options.sigmas = sim::ParseNumberGrid(args.sigmas, "--sigmas");
  options.draws = args.draws;
  options.threshold = args.threshold;
  sim::ValidateUtilityGraphOptions(options);
  if (args.quiet) spdlog::set_level(spdlog::level::warn);

  // The output directory is judged before the graph's runs, not after (a file or a foreign directory at
  // --out was refused only once every curve had been computed).
  sim::CheckOutputTarget(args.out_dir);
  const sim::UtilityGraph graph = sim::RunUtilityGraph(config, options, /*progress=*/!args.quiet);
  const nlohmann::json summary = sim::UtilityGraphSummary(graph);
  sim::OutputDirectory out(args.out_dir);
  const std::string header =
      "# asyncdp " ASYNCDP_VERSION
      " utility-graph base configuration (w* runs set dp.enabled = false, dp.clip = C)\n";
  out.Write("config.resolved.toml", header + sim::ToToml(config));
  out.Write("utility_graph.csv", sim::UtilityGraphCsv(graph));
  for (const auto& curve : graph.curves) {
    out.Write(fmt::format("wstar_C{}.metrics.csv", curve.clip), curve.wstar_metrics_csv);
  }
  out.Write("summary.json", summary.dump(2) + "\n");
  out.Commit();
  spdlog::info("utility-graph: {} curves x {} sigmas x {} draws in {:.2f} s -> {}", graph.curves.size(),
               options.sigmas.size(), options.draws, graph.wall_seconds, args.out_dir);
  std::cout << summary.dump(2) << "\n";
}

}  // namespace

void RegisterUtilityGraphCommand(CLI::App& app) {
  auto args = std::make_shared<UtilityGraphArgs>();
  CLI::App* cmd = app.add_subcommand(
      "utility-graph",
      "Utility graph (Section 3.3, utility graph; docs/theory.md §6): train w* with clipping C and no noise, then report the\n"
      "accuracy of w* + N(0, C^2 sigma^2 I) relative to w* for every sigma. Writes\n"
      "OUT/utility_graph.csv and OUT/summary.json (also printed on stdout).");
  cmd->add_option("--config", args->config_path,
                  "TOML run configuration of the w* training (docs/config.md)")
      ->check(NonEmptyPath());
  cmd->add_option("--set", args->overrides,
                  "Override a key: --set schedule.iterations=20000 (repeatable; a key the graph "
                  "does not read is refused)")
      ->take_all();
  cmd->add_option("--clips", args->clips, "Clipping constants C: 0.025,0.05,0.1 or first:last:step")
      ->required();
  cmd->add_option("--sigmas", args->sigmas, "Noise multipliers: 0,2,...,24 or 0:24:2 or an explicit list")
      ->required();
  cmd->add_option("--draws", args->draws, "Noisy copies per (C, sigma) point (mean, std, min, max reported)")
      ->capture_default_str();
  cmd->add_option("--threshold", args->threshold, "Accuracy fraction read off as acceptable (10% drop = 0.9)")
      ->capture_default_str();
  cmd->add_option("--out", args->out_dir, "Output directory")->capture_default_str()->check(NonEmptyPath());
  cmd->add_flag("--quiet", args->quiet, "Only warnings on stderr; no progress line");
  cmd->callback([args] { RunUtilityGraphCommand(*args); });
}

}  // namespace asyncdp::apps
