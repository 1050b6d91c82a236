// The training objective F(w) = Σ_p rows(p) · Evaluate(w, part p).loss / N over a run's parts (every
// client's shard): the float path the run itself evaluates with. Used by the convergence measures
// (models/convergence_measures.h) and by the reference optimum (models/reference_optimum.h), which
// evaluates F(w*) the same way so that float rounding cancels in F(w) − F(w*); a unit of its own so that
// neither of those two depends on the other for it.
#pragma once

#include <span>

#include "data/dataset.h"
#include "models/model.h"

namespace asyncdp::models {

// F(params) over `parts` (rows-weighted mean of Model::Evaluate's loss). At least one row in total.
double ObjectiveValue(const Model& model, std::span<const data::Dataset* const> parts,
                      std::span<const float> params);

}  // namespace asyncdp::models
