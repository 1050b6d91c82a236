// A complete example of bringing your own model to asyncdp (docs/models.md): Huber regression of the label
// (class 0 → −1, class 1 → +1) on the features, f(w, b; x, y) = h(wᵀx + b − y) with the Huber loss
// h(r) = r²/2 for |r| ≤ 1 and |r| − 1/2 otherwise. Convex and 1-Lipschitz in the residual, so its
// per-example gradient h'(r)·(x, 1) is bounded by ‖(x, 1)‖ — a robust regression that DP-SGD clips little.
//
// What a model implements (models/model.h): its parameter count and initial parameters, a workspace, the
// per-example clipped gradient sum (the hot primitive: clip each example's full gradient to C, sum, no noise
// — the client adds it once), and the evaluation (mean loss and accuracy on a data set).
#pragma once

#include <memory>

#include "models/factory.h"
#include "models/model.h"

namespace example {

class HuberRegression final : public asyncdp::models::Model {
 public:
  explicit HuberRegression(int64_t num_features) : d_(num_features) {}

  std::string Name() const override { return "huber"; }
  int64_t NumParams() const override { return d_ + 1; }  // w, then the bias b
  Eigen::VectorXf InitialParams(uint64_t seed) const override;
  std::unique_ptr<asyncdp::models::Workspace> NewWorkspace(int64_t max_batch) const override;
  asyncdp::models::ClipStats ClippedGradientSum(std::span<const float> params, const asyncdp::data::Dataset& data,
                                                std::span<const int64_t> batch, double clip, std::span<float> grad_sum,
                                                asyncdp::models::Workspace& workspace,
                                                std::span<float> norms = {}) const override;
  asyncdp::models::Evaluation Evaluate(std::span<const float> params,
                                       const asyncdp::data::Dataset& data) const override;

  // The per-example loss, for tests (finite differences) and the evaluation.
  double Loss(std::span<const float> params, const asyncdp::data::Dataset& data, int64_t row) const;

 private:
  double Residual(std::span<const float> params, const asyncdp::data::Dataset& data, int64_t row) const;
  int64_t d_;
};

// model.kind = "huber": registers the model (call once, before a configuration is read).
void RegisterHuberRegression();

}  // namespace example
