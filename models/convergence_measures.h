// What the convergence theory's rates are about, measured on a run's model ŵ_t (evaluation points of a
// run, or any parameter vector):
//
//   F(ŵ)                 the training objective (models/objective.h), over every client's shard
//   F(ŵ) − F(w*)         suboptimality against a reference optimum (models/reference_optimum.h), taken
//                        against F(w*) evaluated the same way, so float rounding (~1e-7 |F|) cancels;
//                        the convex rates bound its expectation (≈ 1/t strongly convex, ≈ 1/√t convex)
//   ||ŵ − w*||²          distance to the minimiser, meaningful when it is unique (logistic_l2, the
//                        strongly convex case whose rate is stated for it)
//   ||∇F(ŵ)||            the norm of the full, unclipped training gradient: non-convex SGD bounds control
//                        min_t E||∇F(ŵ_t)||², not the loss
//
// Pure functions of their arguments (apart from the workspace's scratch).
#pragma once

#include <cstdint>
#include <span>

#include "data/dataset.h"
#include "models/model.h"
#include "models/objective.h"
#include "models/reference_optimum.h"

namespace asyncdp::models {

struct ConvergencePoint {
  double suboptimality = 0.0;  // F(params) − reference.evaluated_objective
  double distance_sq = 0.0;    // ||params − w*||²
};

// Both measures of `params` against `reference`, which must have been computed for the same model and
// parts (sizes are CHECKed).
ConvergencePoint MeasureConvergence(const Model& model, std::span<const data::Dataset* const> parts,
                                    const ReferenceOptimum& reference, std::span<const float> params);

// ||(1/N) Σ_r ∇f(params; x_r)|| over all N rows of `data` (unclipped per-example gradients, summed in
// double over chunks of the workspace's size). `workspace` comes from model.NewWorkspace(chunk) and is
// used with batches of at most `chunk` rows. 0 for empty data.
double GradientNorm(const Model& model, const data::Dataset& data, std::span<const float> params,
                    Workspace& workspace, int64_t chunk);

}  // namespace asyncdp::models
