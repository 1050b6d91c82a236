#include "huber_regression.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace example {
namespace {

using asyncdp::data::Dataset;

// The label as a regression target: class 1 → +1, class 0 → −1.
double Target(const Dataset& data, int64_t row) { return data.labels[static_cast<size_t>(row)] == 1 ? 1.0 : -1.0; }

// h'(r): the residual, capped at ±1.
double HuberSlope(double r) { return std::clamp(r, -1.0, 1.0); }

// ‖x_row‖² over the row's stored entries (sparse) or all features (dense).
double SquaredNorm(const Dataset& data, int64_t row) {
  if (!data.is_sparse) return data.dense.row(row).cast<double>().squaredNorm();
  double s = 0.0;
  for (asyncdp::data::SparseMatrix::InnerIterator it(data.sparse, row); it; ++it) s += double(it.value()) * it.value();
  return s;
}

}  // namespace

Eigen::VectorXf HuberRegression::InitialParams(uint64_t) const { return Eigen::VectorXf::Zero(NumParams()); }

std::unique_ptr<asyncdp::models::Workspace> HuberRegression::NewWorkspace(int64_t) const {
  return std::make_unique<asyncdp::models::Workspace>();  // no scratch: the gradient is h'(r)·(x, 1)
}

double HuberRegression::Residual(std::span<const float> params, const Dataset& data, int64_t row) const {
  double z = params[static_cast<size_t>(d_)];
  if (data.is_sparse) {
    for (asyncdp::data::SparseMatrix::InnerIterator it(data.sparse, row); it; ++it) {
      z += double(params[static_cast<size_t>(it.col())]) * it.value();
    }
  } else {
    for (int64_t j = 0; j < d_; ++j) z += double(params[static_cast<size_t>(j)]) * data.dense(row, j);
  }
  return z - Target(data, row);
}

double HuberRegression::Loss(std::span<const float> params, const Dataset& data, int64_t row) const {
  const double r = std::abs(Residual(params, data, row));
  return r <= 1.0 ? 0.5 * r * r : r - 0.5;
}

asyncdp::models::ClipStats HuberRegression::ClippedGradientSum(std::span<const float> params, const Dataset& data,
                                                               std::span<const int64_t> batch, double clip,
                                                               std::span<float> grad_sum,
                                                               asyncdp::models::Workspace&,
                                                               std::span<float> norms) const {
  std::fill(grad_sum.begin(), grad_sum.end(), 0.0f);
  asyncdp::models::ClipStats stats;
  for (size_t k = 0; k < batch.size(); ++k) {
    const int64_t row = batch[k];
    const double slope = HuberSlope(Residual(params, data, row));
    // ‖h'(r)·(x, 1)‖ = |h'(r)|·sqrt(‖x‖² + 1): the full per-example gradient's norm, clipped to C.
    const double norm = std::abs(slope) * std::sqrt(SquaredNorm(data, row) + 1.0);
    if (!norms.empty()) norms[k] = static_cast<float>(norm);
    const double scale = norm > clip ? clip / norm : 1.0;
    stats.clipped += norm > clip ? 1 : 0;
    stats.norm_sum += norm;
    const auto g = static_cast<float>(slope * scale);
    if (data.is_sparse) {
      for (asyncdp::data::SparseMatrix::InnerIterator it(data.sparse, row); it; ++it) {
        grad_sum[static_cast<size_t>(it.col())] += g * it.value();
      }
    } else {
      for (int64_t j = 0; j < d_; ++j) grad_sum[static_cast<size_t>(j)] += g * data.dense(row, j);
    }
    grad_sum[static_cast<size_t>(d_)] += g;
  }
  stats.examples = static_cast<int64_t>(batch.size());
  return stats;
}

asyncdp::models::Evaluation HuberRegression::Evaluate(std::span<const float> params, const Dataset& data) const {
  asyncdp::models::Evaluation e;
  double loss = 0.0;
  int64_t correct = 0;
  for (int64_t row = 0; row < data.rows(); ++row) {
    loss += Loss(params, data, row);
    const double prediction = Residual(params, data, row) + Target(data, row);  // wᵀx + b
    correct += (prediction >= 0.0) == (Target(data, row) > 0.0) ? 1 : 0;
  }
  e.examples = data.rows();
  e.loss = e.examples > 0 ? loss / double(e.examples) : 0.0;
  e.accuracy = e.examples > 0 ? double(correct) / double(e.examples) : 0.0;
  return e;
}

void RegisterHuberRegression() {
  asyncdp::models::RegisterModel(
      "huber",
      [](const asyncdp::models::ModelOptions& options, int64_t num_features, int num_classes,
         const asyncdp::data::ImageShape&) -> std::unique_ptr<asyncdp::models::Model> {
        if (num_classes > 2) {
          throw asyncdp::ConfigError("model.kind", "'huber' regresses a binary label; the data has " +
                                                       std::to_string(num_classes) + " classes");
        }
        if (options.l2_lambda != 0.0)
          throw asyncdp::ConfigError("model.l2_lambda", "'huber' has no regulariser");
        return std::make_unique<HuberRegression>(num_features);
      },
      asyncdp::models::ModelReads{});  // none of the optional options: setting one is refused
}

}  // namespace example
