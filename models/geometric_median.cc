#include "models/geometric_median.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/check.h"
#include "models/linear_kernel.h"
#include "models/param_init.h"

namespace asyncdp::models {
namespace {

using linear_internal::DenseRows;
using linear_internal::SparseRows;
using linear_internal::WithRows;

// θ in double and the gradient accumulator, sized d, allocated once per caller.
class GeometricMedianWorkspace final : public Workspace {
 public:
  explicit GeometricMedianWorkspace(int64_t d) : theta(d), accum(d) {}
  Eigen::VectorXd theta;
  Eigen::VectorXd accum;
};

// ||θ − x_r|| from the expansion (models/geometric_median.h); 0 when x_r is within the coincidence radius.
template <typename Rows>
double Distance(const Rows& rows, int64_t r, const double* theta, double theta_sq) {
  double dot = 0.0, x_sq = 0.0;
  rows.DotAndSquaredNorm(r, theta, dot, x_sq);
  const double dist_sq = theta_sq - 2.0 * dot + x_sq;
  const double radius = kCoincidenceRadius * kCoincidenceRadius * (theta_sq + x_sq);
  return dist_sq <= radius ? 0.0 : std::sqrt(dist_sq);
}

// accum (size d, overwritten) = Σ_r clip_C(∇f(θ; x_r)); norms[i] = the pre-clip norm (1, or 0 at x_r = θ).
template <typename Rows, typename N>
ClipStats ClippedSum(const Rows& rows, int64_t num_rows, std::span<const double> theta,
                     std::span<const int64_t> batch, double clip, Eigen::Ref<Eigen::VectorXd> accum,
                     std::span<N> norms) {
  ASYNCDP_CHECK(static_cast<int64_t>(theta.size()) == accum.size());
  ASYNCDP_CHECK(norms.empty() || norms.size() == batch.size());
  ASYNCDP_CHECK(clip > 0.0);
  const Eigen::Map<const Eigen::VectorXd> t(theta.data(), static_cast<Eigen::Index>(theta.size()));
  const double theta_sq = t.squaredNorm();
  // The clip factor of a unit-norm gradient: c = min(1, C / 1) (§2.1).
  const double factor = std::min(1.0, clip);
  accum.setZero();
  ClipStats stats;
  stats.examples = static_cast<int64_t>(batch.size());
  double coefficient_sum = 0.0;  // Σ_r a_r
  for (size_t i = 0; i < batch.size(); ++i) {
    const int64_t r = batch[i];
    ASYNCDP_CHECK(r >= 0 && r < num_rows);
    const double dist = Distance(rows, r, theta.data(), theta_sq);
    const double norm = dist > 0.0 ? 1.0 : 0.0;
    if (!norms.empty()) norms[i] = static_cast<N>(norm);
    if (norm == 0.0) continue;
    stats.norm_sum += norm;
    stats.clipped += norm > clip;
    const double a = factor / dist;
    coefficient_sum += a;
    rows.Axpy(r, -a, accum.data());  // − a_r x_r
  }
  accum += coefficient_sum * t;  // + (Σ a_r) θ
  return stats;
}

}  // namespace

GeometricMedianModel::GeometricMedianModel(const GeometricMedianOptions& options)
    : options_(options), num_features_(options.num_features) {
  ASYNCDP_CHECK(num_features_ >= 1);
  ASYNCDP_CHECK(options.init_stddev >= 0.0);
}

Eigen::VectorXf GeometricMedianModel::InitialParams(uint64_t seed) const {
  Eigen::VectorXf params = Eigen::VectorXf::Zero(num_features_);
  FillInitNormal(seed, 0, options_.init_stddev, std::span<float>(params.data(), num_features_));
  return params;
}

std::unique_ptr<Workspace> GeometricMedianModel::NewWorkspace(int64_t /*max_batch*/) const {
  return std::make_unique<GeometricMedianWorkspace>(num_features_);
}

void GeometricMedianModel::CheckData(const data::Dataset& data) const {
  if (data.is_sparse) {
    ASYNCDP_CHECK_MSG(data.features() <= num_features_, "sparse data has more features than the model");
  } else {
    ASYNCDP_CHECK_MSG(data.features() == num_features_, "dense data's width differs from the model's");
  }
}

ClipStats GeometricMedianModel::ClippedGradientSum(std::span<const float> params, const data::Dataset& data,
                                                   std::span<const int64_t> batch, double clip,
                                                   std::span<float> grad_sum, Workspace& workspace,
                                                   std::span<float> norms) const {
  CheckData(data);
  ASYNCDP_CHECK(static_cast<int64_t>(params.size()) == num_features_);
  ASYNCDP_CHECK(static_cast<int64_t>(grad_sum.size()) == num_features_);
  auto& ws = static_cast<GeometricMedianWorkspace&>(workspace);
  ASYNCDP_CHECK(ws.theta.size() == num_features_);
  ws.theta = Eigen::Map<const Eigen::VectorXf>(params.data(), num_features_).cast<double>();
  const std::span<const double> theta(ws.theta.data(), static_cast<size_t>(num_features_));
  const ClipStats stats = WithRows(data, [&](const auto& rows) {
    return ClippedSum(rows, data.rows(), theta, batch, clip, ws.accum, norms);
  });
  Eigen::Map<Eigen::VectorXf>(grad_sum.data(), num_features_) = ws.accum.cast<float>();
  return stats;
}

Evaluation GeometricMedianModel::Evaluate(std::span<const float> params, const data::Dataset& data) const {
  CheckData(data);
  ASYNCDP_CHECK(static_cast<int64_t>(params.size()) == num_features_);
  Evaluation e;
  e.examples = data.rows();
  e.accuracy = std::numeric_limits<double>::quiet_NaN();  // no class is predicted
  if (e.examples == 0) return e;
  const Eigen::VectorXd theta =
      Eigen::Map<const Eigen::VectorXf>(params.data(), num_features_).cast<double>();
  const double theta_sq = theta.squaredNorm();
  double sum = 0.0;
  WithRows(data, [&](const auto& rows) {
    for (int64_t r = 0; r < data.rows(); ++r) sum += Distance(rows, r, theta.data(), theta_sq);
  });
  e.loss = sum / static_cast<double>(e.examples);
  return e;
}

double GeometricMedianModel::ExampleLossDouble(std::span<const double> params, const data::Dataset& data,
                                               int64_t row) const {
  CheckData(data);
  ASYNCDP_CHECK(static_cast<int64_t>(params.size()) == num_features_);
  ASYNCDP_CHECK(row >= 0 && row < data.rows());
  const Eigen::Map<const Eigen::VectorXd> theta(params.data(), num_features_);
  return WithRows(data,
                  [&](const auto& rows) { return Distance(rows, row, params.data(), theta.squaredNorm()); });
}

ClipStats GeometricMedianModel::ClippedGradientSumDouble(std::span<const double> params,
                                                         const data::Dataset& data,
                                                         std::span<const int64_t> batch, double clip,
                                                         std::span<double> grad_sum,
                                                         std::span<double> norms) const {
  CheckData(data);
  ASYNCDP_CHECK(static_cast<int64_t>(params.size()) == num_features_);
  ASYNCDP_CHECK(static_cast<int64_t>(grad_sum.size()) == num_features_);
  Eigen::Map<Eigen::VectorXd> accum(grad_sum.data(), num_features_);
  return WithRows(data, [&](const auto& rows) {
    return ClippedSum(rows, data.rows(), params, batch, clip, accum, norms);
  });
}

}  // namespace asyncdp::models
