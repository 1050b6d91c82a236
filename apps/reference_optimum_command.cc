// asyncdp reference-optimum: w* of a run's convex training objective (models/reference_optimum.h), for
// measuring F(ŵ_t) − F(w*) against it. Builds the run's data and model exactly as `asyncdp train` does
// (same shards, same resolved λ), solves the full-batch, non-private problem over every client's shard,
// and writes OUT/summary.json (also printed on stdout: objective, gradient norm, iterations, w*) and
// OUT/config.resolved.toml. With --reuse, an OUT that already holds the optimum of the same objective
// (same "objective_key") to at least the requested tolerance is kept and nothing is recomputed.
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "models/reference_optimum.h"
#include "sim/config_io.h"
#include "sim/config_usage.h"
#include "sim/output_dir.h"
#include "sim/reference_objective.h"
#include "sim/reference_optimum_io.h"

namespace asyncdp::apps {
namespace {

struct ReferenceOptimumArgs {
  std::string config_path;
  std::vector<std::string> overrides;
  std::string out_dir = "results/reference_optimum";
  double tolerance = models::ReferenceOptimumOptions{}.gradient_tolerance;
  int64_t max_iterations = 0;
  bool reuse = false;
  bool quiet = false;
  bool objective_keys = false;
};

// The summary of an earlier run in `dir` if it is a reference optimum of `key` at `tolerance` or tighter.
bool CanReuse(const std::string& dir, const nlohmann::json& key, double tolerance) {
  std::ifstream in(std::filesystem::path(dir) / "summary.json");
  if (!in) return false;
  const nlohmann::json old = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return old.is_object() && old.value("kind", "") == "reference_optimum" && old.value("converged", false) &&
         old.contains("objective_key") && old["objective_key"] == key &&
         old.value("gradient_tolerance", 1.0) <= tolerance;
}

void RunReferenceOptimum(const ReferenceOptimumArgs& args) {
  if (args.objective_keys) {  // for scripts that derive this command's overrides from a run's
    for (const std::string& key : sim::ReferenceObjectiveKeys()) std::cout << key << "\n";
    return;
  }
  sim::TrainConfig config =
      args.config_path.empty() ? sim::TrainConfig{} : sim::LoadConfigFile(args.config_path);
  sim::ApplyOverrides(config, args.overrides);
  // The file is a run's configuration, read for its objective only; an override of a key F does not read
  // would change nothing but the echo, so it is refused.
  sim::RefuseUnreadOverrides(config, "reference-optimum", [&config](const std::string& key) {
    return sim::ReferenceObjectiveUnreadReason(key, config);
  });
  // BuildReferenceObjective validates the configuration with its privacy settings off (F does not depend
  // on them), without refusing the file's run-output keys (eval.*, output.*): it reads none of them.
  if (args.quiet) spdlog::set_level(spdlog::level::warn);
  const auto start = std::chrono::steady_clock::now();
  const sim::ReferenceObjective objective = sim::BuildReferenceObjective(config);
  const nlohmann::json& key = objective.key;
  if (args.reuse && CanReuse(args.out_dir, key, args.tolerance)) {
    spdlog::info("reference-optimum: {} already holds w* of this objective; kept", args.out_dir);
    std::ifstream in(std::filesystem::path(args.out_dir) / "summary.json");
    std::cout << in.rdbuf();
    return;
  }
  // Judged before the solve, not after it (a file at --out was refused only once w* had been found).
  sim::CheckOutputTarget(args.out_dir);
  models::ReferenceOptimumOptions options;
  options.gradient_tolerance = args.tolerance;
  options.max_iterations = args.max_iterations;
  const models::ReferenceOptimum ref = sim::SolveReferenceObjective(objective, options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!ref.converged) {
    spdlog::warn("reference-optimum: {} stopped after {} iterations at ||grad F|| = {:.3g} > {:.3g}",
                 ref.method, ref.iterations, ref.gradient_norm, args.tolerance);
  }
  const nlohmann::json summary = sim::ReferenceOptimumJson(ref, key, args.tolerance, seconds);
  sim::OutputDirectory out(args.out_dir);
  out.Write("config.resolved.toml", "# asyncdp " ASYNCDP_VERSION
                                    " reference-optimum configuration (dp is not used)\n" +
                                        sim::ToToml(objective.experiment.config));
  out.Write("summary.json", summary.dump(2) + "\n");
  out.Commit();
  spdlog::info(
      "reference-optimum: {} F(w*) = {:.12g}, ||grad F|| = {:.3g} after {} iterations, {:.2f} s -> {}",
      ref.model, ref.objective, ref.gradient_norm, ref.iterations, seconds, args.out_dir);
  std::cout << summary.dump(2) << "\n";
}

}  // namespace

void RegisterReferenceOptimumCommand(CLI::App& app) {
  auto args = std::make_shared<ReferenceOptimumArgs>();
  CLI::App* cmd = app.add_subcommand(
      "reference-optimum",
      "Solve a run's convex training objective to a tight gradient tolerance (non-private, full batch):\n"
      "w* and F(w*) for suboptimality curves. logistic, logistic_l2: Newton-CG; geometric_median: "
      "Weiszfeld.\n"
      "Writes OUT/summary.json (also printed on stdout) and OUT/config.resolved.toml.");
  std::vector<CLI::Option*> solve_options;
  solve_options.push_back(cmd->add_option("--config", args->config_path,
                                          "TOML run configuration (the run whose objective to solve)")
                              ->check(NonEmptyPath()));
  solve_options.push_back(
      cmd->add_option(
             "--set", args->overrides,
             "Override a key the objective reads: --set data.train=a9a.gz (repeatable; an override of "
             "any other key is refused)")
          ->take_all());
  solve_options.push_back(
      cmd->add_option("--out", args->out_dir, "Output directory")->capture_default_str()->check(NonEmptyPath()));
  solve_options.push_back(cmd->add_option("--tolerance", args->tolerance, "Stop when ||grad F(w)|| <= this")
                              ->capture_default_str()
                              ->check(CLI::PositiveNumber));
  solve_options.push_back(
      cmd->add_option("--max-iterations", args->max_iterations, "Iteration cap; 0 = the method's default")
          ->capture_default_str()
          ->check(CLI::NonNegativeNumber));
  solve_options.push_back(cmd->add_flag(
      "--reuse", args->reuse, "Keep OUT if it already holds w* of the same objective and tolerance"));
  cmd->add_flag("--quiet", args->quiet, "Only warnings on stderr");
  CLI::Option* keys =
      cmd->add_flag("--objective-keys", args->objective_keys,
                    "Print the configuration keys F reads (the ones --set accepts), one per line, and exit");
  for (CLI::Option* option : solve_options) keys->excludes(option);  // they would change nothing
  cmd->callback([args] { RunReferenceOptimum(*args); });
}

}  // namespace asyncdp::apps
