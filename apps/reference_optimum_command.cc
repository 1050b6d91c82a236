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
#include "sim/experiment.h"
#include "sim/output_dir.h"
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
  sim::TrainConfig config =
      args.config_path.empty() ? sim::TrainConfig{} : sim::LoadConfigFile(args.config_path);
  for (const auto& assignment : args.overrides) sim::ApplyOverride(config, assignment);
  // F does not depend on the privacy settings; skipping them skips σ calibration.
  config.dp.enabled = false;
  // The objective only (data, shards, model, regulariser): keys about a training run's outputs (eval.*,
  // output.*) are not this command's to refuse — it reads none of them.
  sim::ValidateConfig(config, /*refuse_unused_keys=*/false);
  if (args.quiet) spdlog::set_level(spdlog::level::warn);
  const auto start = std::chrono::steady_clock::now();
  const sim::Experiment experiment = sim::BuildExperiment(config);
  std::vector<data::Dataset> shards;  // the clients' shards as data sets of their own (F's parts)
  for (const auto& shard : experiment.data.shards) shards.push_back(shard.Copy());
  std::vector<const data::Dataset*> parts;
  int64_t records = 0;
  for (const auto& shard : shards) {
    parts.push_back(&shard);
    records += shard.rows();
  }
  const nlohmann::json key = sim::ReferenceObjectiveKey(experiment.config, records);
  if (args.reuse && CanReuse(args.out_dir, key, args.tolerance)) {
    spdlog::info("reference-optimum: {} already holds w* of this objective; kept", args.out_dir);
    std::ifstream in(std::filesystem::path(args.out_dir) / "summary.json");
    std::cout << in.rdbuf();
    return;
  }
  models::ReferenceOptimumOptions options;
  options.gradient_tolerance = args.tolerance;
  options.max_iterations = args.max_iterations;
  const models::ReferenceOptimum ref = models::ComputeReferenceOptimum(*experiment.model, parts, options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!ref.converged) {
    spdlog::warn("reference-optimum: {} stopped after {} iterations at ||grad F|| = {:.3g} > {:.3g}",
                 ref.method, ref.iterations, ref.gradient_norm, args.tolerance);
  }
  const nlohmann::json summary = sim::ReferenceOptimumJson(ref, key, args.tolerance, seconds);
  sim::OutputDirectory out(args.out_dir);
  out.Write("config.resolved.toml", "# asyncdp " ASYNCDP_VERSION
                                    " reference-optimum configuration (dp is not used)\n" +
                                        sim::ToToml(experiment.config));
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
  cmd->add_option("--config", args->config_path, "TOML run configuration (the run whose objective to solve)");
  cmd->add_option("--set", args->overrides, "Override a key: --set data.train=a9a.gz (repeatable)")
      ->take_all();
  cmd->add_option("--out", args->out_dir, "Output directory")->capture_default_str();
  cmd->add_option("--tolerance", args->tolerance, "Stop when ||grad F(w)|| <= this")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-iterations", args->max_iterations, "Iteration cap; 0 = the method's default")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--reuse", args->reuse,
                "Keep OUT if it already holds w* of the same objective and tolerance");
  cmd->add_flag("--quiet", args->quiet, "Only warnings on stderr");
  cmd->callback([args] { RunReferenceOptimum(*args); });
}

}  // namespace asyncdp::apps
