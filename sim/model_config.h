// Maps the [model] section of a run configuration onto the model factory (models/factory.h).
#pragma once

#include <memory>

#include "data/dataset.h"
#include "models/model.h"
#include "sim/config.h"

namespace asyncdp::sim {

// λ = 0 in the configuration means the paper's 1/N_c for the regularised objective (logistic_l2, Table 1;
// docs/theory.md §2); ridge kinds keep 0 (none). `records` is N_c (or the records a check-in run uses).
void ResolveL2Lambda(ModelConfig& config, int64_t records);

// Builds the configured model for data shaped like `train`; `records_per_client` is N_c (used by the
// literal regulariser convention λ/(2N)). Throws ConfigError naming the model.* key on a mismatch.
std::unique_ptr<models::Model> MakeModelFromConfig(const ModelConfig& config, const data::Dataset& train,
                                                   int64_t records_per_client);

}  // namespace asyncdp::sim
