#include "models/convergence_measures.h"

#include <Eigen/Dense>

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/check.h"

namespace asyncdp::models {

ConvergencePoint MeasureConvergence(const Model& model, std::span<const data::Dataset* const> parts,
                                    const ReferenceOptimum& reference, std::span<const float> params) {
  ASYNCDP_CHECK(static_cast<int64_t>(params.size()) == reference.params.size());
  ASYNCDP_CHECK(static_cast<int64_t>(params.size()) == model.NumParams());
  ConvergencePoint point;
  point.suboptimality = ObjectiveValue(model, parts, params) - reference.evaluated_objective;
  const Eigen::Map<const Eigen::VectorXf> w(params.data(), static_cast<Eigen::Index>(params.size()));
  point.distance_sq = (w.cast<double>() - reference.params).squaredNorm();
  return point;
}

double GradientNorm(const Model& model, const data::Dataset& data, std::span<const float> params,
                    Workspace& workspace, int64_t chunk) {
  ASYNCDP_CHECK(chunk >= 1);
  if (data.rows() == 0) return 0.0;
  const int64_t n = model.NumParams();
  std::vector<float> partial(static_cast<size_t>(n));
  Eigen::VectorXd total = Eigen::VectorXd::Zero(n);
  std::vector<int64_t> rows(static_cast<size_t>(std::min(chunk, data.rows())));
  for (int64_t start = 0; start < data.rows(); start += chunk) {
    const int64_t count = std::min(chunk, data.rows() - start);
    std::iota(rows.begin(), rows.begin() + count, start);
    model.ClippedGradientSum(params, data, std::span<const int64_t>(rows.data(), static_cast<size_t>(count)),
                             kNoClip, partial, workspace);
    total += Eigen::Map<const Eigen::VectorXf>(partial.data(), n).cast<double>();
  }
  return total.norm() / static_cast<double>(data.rows());
}

}  // namespace asyncdp::models
