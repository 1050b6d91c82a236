#include "sim/reference_objective.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

#include "sim/config_io.h"
#include "sim/config_usage.h"
#include "sim/reference_optimum_io.h"

namespace asyncdp::sim {
namespace {

TrainConfig WithoutPrivacy(TrainConfig config) {
  config.dp.enabled = false;
  return config;
}

}  // namespace

std::vector<std::string> ReferenceObjectiveKeys() {
  std::vector<std::string> keys;
  const nlohmann::json names = ReferenceObjectiveKey(TrainConfig{}, 0);  // named: items() does not own it
  for (const auto& [key, value] : names.items()) {
    if (key != "records") keys.push_back(key);
  }
  return keys;
}

ReferenceObjective BuildReferenceObjective(TrainConfig config) {
  config = WithoutPrivacy(std::move(config));
  // The objective only: a training run's output keys (eval.*, output.*) in the file are not refused here.
  ValidateConfig(config, /*refuse_unused_keys=*/false);
  ReferenceObjective objective{BuildExperiment(config), {}, {}};
  int64_t records = 0;
  for (const auto& shard : objective.experiment.data.shards) {
    objective.parts.push_back(shard.Copy());
    records += shard.rows();
  }
  objective.key = ReferenceObjectiveKey(objective.experiment.config, records);
  return objective;
}

models::ReferenceOptimum SolveReferenceObjective(const ReferenceObjective& objective,
                                                 const models::ReferenceOptimumOptions& options) {
  std::vector<const data::Dataset*> parts;
  for (const auto& part : objective.parts) parts.push_back(&part);
  return models::ComputeReferenceOptimum(*objective.experiment.model, parts, options);
}

std::optional<std::string> ReferenceObjectiveUnreadReason(const std::string& key, const TrainConfig& config) {
  const std::vector<std::string> keys = ReferenceObjectiveKeys();
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
    return fmt::format(
        "F(w) (docs/theory.md §8) depends on {} only; the run's other keys (privacy, "
        "schedule, protocol, evaluation, outputs) are read by `asyncdp train`",
        fmt::join(keys, ", "));
  }
  return UnusedKeyReason(key, WithoutPrivacy(config));
}

}  // namespace asyncdp::sim
