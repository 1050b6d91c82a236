// Generalised linear models on sparse (LIBSVM) or dense inputs: one weight per feature plus a bias,
// w_bar = (w, b), prediction from z = w·x + b, and a scalar loss l(z, y) (models/linear_losses.h):
//
//   kLogistic  binary logistic regression, the plain convex objective of Section 4 and Appendix D, objectives; docs/theory.md §2 (66);
//              with L2 (lambda > 0) the strongly convex objective (9) — "logistic_l2"
//   kSquared   linear regression with squared loss on the class index
//   kHinge     linear SVM with the hinge loss
//
// Each per-example loss is f = l(z, y) + (mu/2) ||w_bar_reg||^2 (models/regularizer.h); its gradient,
// regulariser included, is clipped as a whole. ClippedGradientSum never forms a per-example gradient: the
// norm comes from three dot products and the clipped sum from one scaled scatter per example
// (models/linear_kernel.h has the derivation). Cost O(nnz) per example, O(d) per batch; no allocation.
//
// Parameter layout: params[0..d) = w (feature j), params[d] = b. NumParams() = d + 1.
// Inputs: sparse data may have fewer columns than d (a test file missing the last features); dense data
// must have exactly d columns.
//
// Thread safety: immutable after construction; share freely. The workspace is unused (empty).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "models/double_path.h"
#include "models/model.h"
#include "models/regularizer.h"

namespace asyncdp::models {

enum class LinearLoss { kLogistic, kSquared, kHinge };

struct LinearModelOptions {
  LinearLoss loss = LinearLoss::kLogistic;
  // d >= 1, the number of feature columns.
  int64_t num_features = 0;
  // Classes of the data (binary losses need <= 2; kSquared predicts the nearest of num_classes indices).
  int num_classes = 2;
  L2Options l2;
  // Initial weights ~ N(0, init_stddev^2) i.i.d. (StreamPurpose::kModelInit), bias 0. Default 0.01: close
  // to the customary w = 0 start of convex problems, yet seed-dependent. 0 gives exactly w = 0.
  double init_stddev = 0.01;
};

class LinearModel final : public Model, public DoublePrecisionPath {
 public:
  // Options must be valid (MakeModel validates user input); violations are CHECK failures.
  explicit LinearModel(const LinearModelOptions& options);

  // "logistic", "logistic_l2" (logistic with lambda > 0), "linear" or "svm".
  std::string Name() const override;
  int64_t NumParams() const override { return num_features_ + 1; }
  Eigen::VectorXf InitialParams(uint64_t seed) const override;
  std::unique_ptr<Workspace> NewWorkspace(int64_t max_batch) const override;
  ClipStats ClippedGradientSum(std::span<const float> params, const data::Dataset& data,
                               std::span<const int64_t> batch, double clip, std::span<float> grad_sum,
                               Workspace& workspace, std::span<float> norms = {}) const override;
  Evaluation Evaluate(std::span<const float> params, const data::Dataset& data) const override;

  double ExampleLossDouble(std::span<const double> params, const data::Dataset& data,
                           int64_t row) const override;
  ClipStats ClippedGradientSumDouble(std::span<const double> params, const data::Dataset& data,
                                     std::span<const int64_t> batch, double clip,
                                     std::span<double> grad_sum, std::span<double> norms = {}) const override;

  const LinearModelOptions& options() const { return options_; }
  // mu of the per-example regulariser (lambda or lambda/N).
  double l2_coefficient() const { return mu_; }

 private:
  void CheckData(const data::Dataset& data) const;

  LinearModelOptions options_;
  int64_t num_features_;
  double mu_;
};

}  // namespace asyncdp::models
