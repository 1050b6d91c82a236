// The geometric median as an ERM problem (unsupervised; labels are ignored): the per-example loss is
//
//   f(θ; x) = ||θ − x||_2,          F(θ) = (1/N) Σ_r ||θ − x_r||_2,          θ ∈ R^d
//
// F is convex and 1-Lipschitz (every per-example (sub)gradient has norm ≤ 1) but not strongly convex; its
// minimiser is the geometric median of the rows (models/reference_optimum.h finds it by Weiszfeld's
// iteration). The per-example gradient is the unit vector
//
//   ∇f(θ; x) = (θ − x) / ||θ − x||     (θ ≠ x),          0 at θ = x (the minimum-norm subgradient)
//
// so its pre-clip norm is 1 and clipping to C scales it by c = min(1, C). Like the linear models
// (models/linear_kernel.h), ClippedGradientSum never forms a per-example vector: with
// a_r = c / ||θ − x_r||,
//
//   Σ_r c (θ − x_r)/||θ − x_r|| = (Σ_r a_r) θ − Σ_r a_r x_r                    — O(nnz) per example,
//
//   ||θ − x_r||² = ||θ||² − 2 θ·x_r + ||x_r||²                                 — O(d) once per batch,
//
// all in double (the expansion cancels when θ is close to x_r; the float path converts θ to double in its
// Workspace, once per batch). A row within kCoincidenceRadius · sqrt(||θ||² + ||x_r||²) of θ is taken to
// be at θ (gradient 0, pre-clip norm 0): closer than that the expansion no longer resolves the direction.
//
// Evaluate: loss = F(θ) on the rows; accuracy = NaN (the model predicts no class).
// Parameter layout: params[j] = θ_j, NumParams() = d (no bias). Sparse data may have fewer columns than d;
// dense data must have exactly d columns.
//
// Thread safety: immutable after construction; share freely. A Workspace belongs to one caller.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "models/double_path.h"
#include "models/model.h"

namespace asyncdp::models {

struct GeometricMedianOptions {
  // d >= 1, the number of feature columns.
  int64_t num_features = 0;
  // Initial θ ~ N(0, init_stddev²) i.i.d. (StreamPurpose::kModelInit). Default 0.01, like the linear
  // models; 0 gives θ = 0.
  double init_stddev = 0.01;
};

// Relative distance below which a row counts as coincident with θ (see above). The expansion's rounding
// error in ||θ − x||² is ~1e-16 (||θ||² + ||x||²), so at this radius the distance is still good to ~1%.
inline constexpr double kCoincidenceRadius = 1e-7;

class GeometricMedianModel final : public Model, public DoublePrecisionPath {
 public:
  // Options must be valid (MakeModel validates user input); violations are CHECK failures.
  explicit GeometricMedianModel(const GeometricMedianOptions& options);

  std::string Name() const override { return "geometric_median"; }
  int64_t NumParams() const override { return num_features_; }
  Eigen::VectorXf InitialParams(uint64_t seed) const override;
  std::unique_ptr<Workspace> NewWorkspace(int64_t max_batch) const override;
  ClipStats ClippedGradientSum(std::span<const float> params, const data::Dataset& data,
                               std::span<const int64_t> batch, double clip, std::span<float> grad_sum,
                               Workspace& workspace, std::span<float> norms = {}) const override;
  Evaluation Evaluate(std::span<const float> params, const data::Dataset& data) const override;

  double ExampleLossDouble(std::span<const double> params, const data::Dataset& data,
                           int64_t row) const override;
  ClipStats ClippedGradientSumDouble(std::span<const double> params, const data::Dataset& data,
                                     std::span<const int64_t> batch, double clip, std::span<double> grad_sum,
                                     std::span<double> norms = {}) const override;

  const GeometricMedianOptions& options() const { return options_; }

 private:
  void CheckData(const data::Dataset& data) const;

  GeometricMedianOptions options_;
  int64_t num_features_;
};

}  // namespace asyncdp::models
