// Scalar losses l(z, y) of the generalised linear models, z = w·x + b (models/linear_model.h). Each is a
// stateless policy with Value (per example), Derivatives (dl/dz for a block of examples, as Eigen array
// expressions so that exp and friends are vectorised) and Predict, templated on the scalar type so the
// float fast path and the double gradient-check path share one formula.
//
// Labels are class indices (data/dataset.h): binary data sets have classes {0, 1}, class 0 being the
// negative/zero label.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <Eigen/Core>

namespace asyncdp::models {

// Logistic regression, labels y in {0, 1} (Section 4 and Appendix D, objectives; docs/theory.md §2, (66)):
//   l(z, y) = -[y ln s(z) + (1 - y) ln(1 - s(z))] = softplus(z) - y z,   s(z) = 1 / (1 + e^{-z})
//   dl/dz   = s(z) - y
struct LogisticLoss {
  static constexpr bool kBinary = true;
  template <typename S>
  static S Value(S z, int32_t label) {
    // softplus(z) = max(z, 0) + ln(1 + e^{-|z|}): no overflow for large |z|.
    return std::max(z, S{0}) + std::log1p(std::exp(-std::abs(z))) - static_cast<S>(label) * z;
  }
  // a = s(z) - y elementwise; y holds the labels as reals. e^{-z} = inf for very negative z gives s = 0
  // exactly, so no branch is needed.
  template <typename Z, typename Y, typename A>
  static void Derivatives(const Z& z, const Y& y, A& a) {
    using S = typename A::Scalar;
    a = S{1} / (S{1} + (-z).exp()) - y;
  }
  template <typename S>
  static int Predict(S z, int /*num_classes*/) {
    return z >= S{0} ? 1 : 0;  // s(z) >= 1/2
  }
};

// Linear regression with squared loss (the usual ERM losses: l = (y - <theta, x>)^2, with a bias here).
// The target y is the class index as a real number (binary data: y in {0, 1}); the prediction is the
// nearest class index, clamped to [0, num_classes - 1].
//   l(z, y) = (z - y)^2,   dl/dz = 2 (z - y)
struct SquaredLoss {
  static constexpr bool kBinary = false;
  template <typename S>
  static S Value(S z, int32_t label) {
    const S r = z - static_cast<S>(label);
    return r * r;
  }
  template <typename Z, typename Y, typename A>
  static void Derivatives(const Z& z, const Y& y, A& a) {
    using S = typename A::Scalar;
    a = S{2} * (z - y);
  }
  template <typename S>
  static int Predict(S z, int num_classes) {
    const S nearest = std::round(z);
    return static_cast<int>(std::clamp(nearest, S{0}, static_cast<S>(num_classes - 1)));
  }
};

// Linear SVM with the hinge loss (the usual ERM losses, the usual convex surrogate of the 0-1 loss), with
// y = 2·label - 1 in {-1, +1}:
//   l(z, y) = max(0, 1 - y z),   dl/dz = -y if y z < 1, else 0 (the subgradient 0 at the kink y z = 1)
struct HingeLoss {
  static constexpr bool kBinary = true;
  template <typename S>
  static S Value(S z, int32_t label) {
    const S y = label == 1 ? S{1} : S{-1};
    return std::max(S{0}, S{1} - y * z);
  }
  template <typename Z, typename Y, typename A>
  static void Derivatives(const Z& z, const Y& label, A& a) {
    using S = typename A::Scalar;
    const auto y = S{2} * label - S{1};
    a = (y * z < S{1}).select(-y, S{0});
  }
  template <typename S>
  static int Predict(S z, int /*num_classes*/) {
    return z >= S{0} ? 1 : 0;
  }
};

}  // namespace asyncdp::models
