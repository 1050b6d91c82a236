#include "sim/reference_optimum_io.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/error.h"

namespace asyncdp::sim {
namespace {

constexpr const char* kKey = "eval.reference_optimum";

}  // namespace

nlohmann::json ReferenceObjectiveKey(const TrainConfig& c, int64_t records) {
  return {{"data.train", c.data.train},
          {"data.format", c.data.format},
          {"data.features", c.data.features},
          {"data.partition", c.data.partition},
          {"data.dirichlet_alpha", c.data.dirichlet_alpha},
          {"data.rows_per_client", c.data.rows_per_client},
          {"data.test", c.data.test},
          {"data.test_fraction", c.data.test_fraction},
          {"clients.count", c.clients.count},
          {"seed", c.seed},
          {"model.kind", c.model.kind},
          {"model.l2_lambda", c.model.l2_lambda},
          {"model.regularizer_convention", c.model.regularizer_convention},
          {"model.regularize_bias", c.model.regularize_bias},
          {"records", records}};
}

nlohmann::json ReferenceOptimumJson(const models::ReferenceOptimum& ref, const nlohmann::json& objective_key,
                                    double gradient_tolerance, double wall_seconds) {
  return {{"kind", "reference_optimum"},
          {"privacy", kReferenceOptimumPrivacy},
          {"model", ref.model},
          {"method", ref.method},
          {"objective", ref.objective},
          {"evaluated_objective", ref.evaluated_objective},
          {"gradient_norm", ref.gradient_norm},
          {"gradient_tolerance", gradient_tolerance},
          {"converged", ref.converged},
          {"iterations", ref.iterations},
          {"records", ref.records},
          {"wall_seconds", wall_seconds},
          {"objective_key", objective_key},
          {"params", std::vector<double>(ref.params.data(), ref.params.data() + ref.params.size())}};
}

models::ReferenceOptimum LoadReferenceOptimum(const std::string& path, const nlohmann::json& expected_key,
                                              int64_t num_params) {
  std::filesystem::path file(path);
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) file /= "summary.json";
  std::ifstream in(file);
  if (!in) throw ConfigError(kKey, "cannot read " + file.string() + " (expected a reference-optimum result)");
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.value("kind", "") != "reference_optimum" || !j.contains("params") ||
      !j["params"].is_array() || !j.contains("evaluated_objective") || !j["evaluated_objective"].is_number()) {
    throw ConfigError(kKey, file.string() + " is not the summary.json of `asyncdp reference-optimum`");
  }
  if (!j.value("converged", false)) {
    throw ConfigError(kKey, file.string() + ": the solver did not converge; suboptimality against it would be wrong");
  }
  const nlohmann::json key = j.value("objective_key", nlohmann::json::object());
  for (const auto& [name, value] : expected_key.items()) {
    if (!key.contains(name) || key[name] != value) {
      throw ConfigError(kKey, file.string() + " is the optimum of another objective: " + name + " = " +
                                  (key.contains(name) ? key[name].dump() : "missing") + ", this run has " +
                                  value.dump());
    }
  }
  models::ReferenceOptimum ref;
  ref.model = j.value("model", "");
  ref.method = j.value("method", "");
  ref.objective = j.value("objective", 0.0);
  ref.evaluated_objective = j["evaluated_objective"].get<double>();
  ref.gradient_norm = j.value("gradient_norm", 0.0);
  ref.iterations = j.value("iterations", int64_t{0});
  ref.records = j.value("records", int64_t{0});
  ref.converged = true;
  const auto& params = j["params"];
  if (static_cast<int64_t>(params.size()) != num_params) {
    throw ConfigError(kKey, file.string() + " has " + std::to_string(params.size()) + " parameters, the model " +
                                std::to_string(num_params));
  }
  ref.params.resize(num_params);
  for (int64_t i = 0; i < num_params; ++i) {
    if (!params[i].is_number() || !std::isfinite(params[i].get<double>())) {
      throw ConfigError(kKey, file.string() + ": parameter " + std::to_string(i) + " is not a finite number");
    }
    ref.params[i] = params[i].get<double>();
  }
  if (!std::isfinite(ref.evaluated_objective)) {
    throw ConfigError(kKey, file.string() + ": evaluated_objective is not finite");
  }
  return ref;
}

}  // namespace asyncdp::sim
