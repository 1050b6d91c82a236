// The reference optimum w* of a run's convex objective as a file: what `asyncdp reference-optimum` writes
// (summary.json) and what a run reads back through eval.reference_optimum to record its suboptimality
// F(ŵ_t) − F(w*) at every evaluation (models/convergence_measures.h, docs/theory.md "Convergence").
//
// The objective key names everything F depends on (data, its split over clients, resolved model options),
// so a run refuses a w* computed for a different objective instead of reporting a meaningless difference.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "models/reference_optimum.h"
#include "sim/config.h"

namespace asyncdp::sim {

// Everything F depends on for a resolved configuration whose shards hold `records` rows in total.
nlohmann::json ReferenceObjectiveKey(const TrainConfig& config, int64_t records);

// What a reference-optimum result is, in its summary.json's `privacy`: w* and F(w*) are solved from the
// training rows without noise, so no epsilon covers them (docs/design.md, "Released fields").
inline constexpr const char* kReferenceOptimumPrivacy =
    "none: w* and F(w*) are solved from the training rows without noise and are covered by no epsilon; "
    "a non-private diagnostic for suboptimality curves, not a result to release";

// summary.json of a reference-optimum result: w*, F(w*) as a run evaluates it, and `objective_key`.
nlohmann::json ReferenceOptimumJson(const models::ReferenceOptimum& reference, const nlohmann::json& objective_key,
                                    double gradient_tolerance, double wall_seconds);

// Reads `path` (a reference-optimum directory or its summary.json) and checks it belongs to the objective
// `expected_key` with `num_params` parameters. Throws ConfigError on key "eval.reference_optimum" when the
// file is missing, malformed, not converged, or for another objective (the differing key is named).
models::ReferenceOptimum LoadReferenceOptimum(const std::string& path, const nlohmann::json& expected_key,
                                              int64_t num_params);

}  // namespace asyncdp::sim
