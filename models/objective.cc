#include "models/objective.h"

#include <cstdint>

#include "core/check.h"

namespace asyncdp::models {

double ObjectiveValue(const Model& model, std::span<const data::Dataset* const> parts,
                      std::span<const float> params) {
  double weighted = 0.0;
  int64_t records = 0;
  for (const data::Dataset* part : parts) {
    if (part->rows() == 0) continue;
    weighted += static_cast<double>(part->rows()) * model.Evaluate(params, *part).loss;
    records += part->rows();
  }
  ASYNCDP_CHECK_MSG(records > 0, "the objective needs at least one row");
  return weighted / static_cast<double>(records);
}

}  // namespace asyncdp::models
