// Softmax cross-entropy on a group of logits in the lanes layout ([classes][L], lanes.h):
//   loss_r = log Σ_j exp(z_rj) − z_{r,y_r},      ∂loss_r/∂z_r = softmax(z_r) − e_{y_r}.
// Evaluated with the max subtracted, so large logits cannot overflow.
#pragma once

#include <cmath>
#include <cstdint>

#include "models/cnn/lanes.h"

namespace asyncdp::models::cnn {

struct SoftmaxSummary {
  double loss_sum = 0.0;  // Σ_r loss_r
  int64_t correct = 0;    // examples whose first maximal logit is the label
};

// Lanes 0 .. count − 1 hold examples. Optional outputs: losses (count entries) and grad ([classes][L],
// zero in lanes ≥ count) may be null.
template <typename Scalar>
SoftmaxSummary SoftmaxCrossEntropy(int classes, int count, const Scalar* logits, const int32_t* labels,
                                   Scalar* losses, Scalar* grad) {
  constexpr int L = Lanes<Scalar>::kCount;
  SoftmaxSummary summary;
  for (int r = 0; r < count; ++r) {
    int best = 0;
    Scalar max = logits[r];
    for (int c = 1; c < classes; ++c) {
      if (logits[c * L + r] > max) {
        max = logits[c * L + r];
        best = c;
      }
    }
    Scalar sum_exp{0};
    for (int c = 0; c < classes; ++c) sum_exp += std::exp(logits[c * L + r] - max);
    const Scalar log_norm = max + std::log(sum_exp);
    const Scalar loss = log_norm - logits[labels[r] * L + r];
    summary.loss_sum += static_cast<double>(loss);
    if (best == labels[r]) ++summary.correct;
    if (losses != nullptr) losses[r] = loss;
    if (grad != nullptr) {
      for (int c = 0; c < classes; ++c) grad[c * L + r] = std::exp(logits[c * L + r] - log_norm);
      grad[labels[r] * L + r] -= Scalar{1};
    }
  }
  if (grad != nullptr) {
    for (int c = 0; c < classes; ++c) {
      for (int r = count; r < L; ++r) grad[c * L + r] = Scalar{0};
    }
  }
  return summary;
}

}  // namespace asyncdp::models::cnn
