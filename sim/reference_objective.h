// The training objective F of a run's configuration (docs/theory.md §8), as `asyncdp reference-optimum`
// solves it: the run's shards and model built exactly as `asyncdp train` builds them (same split, same
// resolved λ), F(w) = (1/N) Σ_r f(w; x_r) over every client's records. And which keys of a configuration F
// reads: the command refuses an override (--set) of any other key, since it could only change the echo.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "models/reference_optimum.h"
#include "sim/config.h"
#include "sim/experiment.h"

namespace asyncdp::sim {

struct ReferenceObjective {
  Experiment experiment;             // the run's data split and model (dp off: F reads no privacy key)
  std::vector<data::Dataset> parts;  // each client's shard as a data set of its own: F's parts
  nlohmann::json key;                // ReferenceObjectiveKey: what a run checks a w* against
};

// Builds F for `config`, validated (its dp section switched off: F does not depend on it, and σ is not
// calibrated). Throws ConfigError for a configuration `asyncdp train` would refuse, apart from unread keys.
ReferenceObjective BuildReferenceObjective(TrainConfig config);

// w* of F to the options' gradient tolerance (models/reference_optimum.h).
models::ReferenceOptimum SolveReferenceObjective(const ReferenceObjective& objective,
                                                 const models::ReferenceOptimumOptions& options);

// The configuration keys F depends on (those ReferenceObjectiveKey names), sorted.
std::vector<std::string> ReferenceObjectiveKeys();

// Why changing `key` leaves F of `config` unchanged, or nullopt when F reads it: a key outside the
// objective key (F reads only the data, its split over the clients, the seed and the model's objective
// options), or one of the objective key that this configuration does not read either (config_usage.h, e.g.
// data.dirichlet_alpha under an iid split).
std::optional<std::string> ReferenceObjectiveUnreadReason(const std::string& key, const TrainConfig& config);

}  // namespace asyncdp::sim
