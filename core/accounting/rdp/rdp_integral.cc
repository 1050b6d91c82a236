#include "core/accounting/rdp/rdp_integral.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>

#include "core/accounting/log_math.h"
#include "core/check.h"

namespace asyncdp::accounting {
namespace {

// 10-point Gauss-Legendre nodes/weights on [-1, 1] (positive half; symmetric).
constexpr std::array<double, 5> kNodes = {0.1488743389816312, 0.4333953941292472, 0.6794095682990244,
                                          0.8650633666889845, 0.9739065285171717};
constexpr std::array<double, 5> kWeights = {0.2955242247147529, 0.2692667193099963, 0.2190863625159820,
                                            0.1494513491505806, 0.0666713443086881};
constexpr int kNodesPerPanel = 2 * static_cast<int>(kNodes.size());

// Unit-width panels of 10-point Gauss-Legendre over x in [kLo, kLo + panels]. In the standardised
// coordinate x = z / sigma both humps of the integrand (near x = 0 and x = alpha / sigma) are Gaussians of
// unit width, for which this rule is exact to double precision; outside [-9, max(9, alpha/sigma + 9)]
// they carry less than 1e-18 of their mass.
constexpr double kLo = -9.0;
constexpr double kHalfWidth = 9.0;

int PanelsFor(double alpha, double sigma) {
  return static_cast<int>(std::ceil(std::max(kHalfWidth, alpha / sigma + kHalfWidth) - kLo));
}

// (1 + w)^alpha - 1 - alpha w given log1p(w), without cancellation for small |w| (w >= -1).
double PowerRemainder(double w, double log1p_w, double alpha) {
  if (std::abs(w) < 1e-4) {
    // Binomial series C(a,2) w^2 + C(a,3) w^3 + C(a,4) w^4; the next term is below 1e-16 relative.
    const double c2 = alpha * (alpha - 1.0) / 2.0;
    const double c3 = c2 * (alpha - 2.0) / 3.0;
    const double c4 = c3 * (alpha - 3.0) / 4.0;
    return w * w * (c2 + w * (c3 + w * c4));
  }
  return std::expm1(alpha * log1p_w) - alpha * w;
}

}  // namespace

SubsampledGaussianMoments::SubsampledGaussianMoments(double q, double sigma, double max_order)
    : sigma_(sigma) {
  ASYNCDP_CHECK(q > 0.0 && q < 1.0 && sigma > 0.0 && max_order > 1.0);
  // z = sigma x with x ~ N(0, 1); the likelihood ratio is 1 + w(x), w = q (e^u - 1), u = x/sigma - 1/(2
  // sigma^2).
  const int panels = PanelsFor(max_order, sigma);
  const double shift = 0.5 / (sigma * sigma);
  const double log_norm = -0.5 * std::log(2.0 * std::numbers::pi);
  nodes_.reserve(static_cast<size_t>(panels) * kNodesPerPanel);
  for (int p = 0; p < panels; ++p) {
    const double center = kLo + p + 0.5;
    for (size_t i = 0; i < kNodes.size(); ++i) {
      for (double side : {-0.5, 0.5}) {
        Node node;
        const double x = center + side * kNodes[i];
        node.log_weight = std::log(0.5 * kWeights[i]) + log_norm - 0.5 * x * x;
        node.weight = std::exp(node.log_weight);
        node.w = q * std::expm1(x / sigma - shift);
        node.log1p_w = std::log1p(node.w);
        nodes_.push_back(node);
      }
    }
  }
}

double SubsampledGaussianMoments::LogMoment(double alpha) const {
  ASYNCDP_CHECK(alpha > 1.0);
  const size_t n = static_cast<size_t>(PanelsFor(alpha, sigma_)) * kNodesPerPanel;
  ASYNCDP_CHECK_MSG(n <= nodes_.size(), "order above the table's max_order");
  double peak = -kInf;
  for (size_t i = 0; i < n; ++i) peak = std::max(peak, nodes_[i].log_weight + alpha * nodes_[i].log1p_w);
  if (peak <= 20.0) {
    // A - 1 = E[(1 + w)^alpha - 1 - alpha w], because E[w] = q (E[e^u] - 1) = 0 exactly: removing the
    // first-order term analytically keeps full relative precision when A - 1 is tiny (small q). Every
    // term is below e^20 (peak), so nothing overflows.
    double a_minus_1 = 0.0;
    for (size_t i = 0; i < n; ++i)
      a_minus_1 += nodes_[i].weight * PowerRemainder(nodes_[i].w, nodes_[i].log1p_w, alpha);
    return std::log1p(a_minus_1);
  }
  // A >= e^20 (so A - 1 ~ A): sum exp(log term - peak) and add the peak back.
  double total = 0.0;
  for (size_t i = 0; i < n; ++i) total += std::exp(nodes_[i].log_weight + alpha * nodes_[i].log1p_w - peak);
  return peak + std::log(total);
}

double LogSubsampledGaussianMoment(double q, double sigma, double alpha) {
  return SubsampledGaussianMoments(q, sigma, alpha).LogMoment(alpha);
}

double LogSubsampledGaussianMomentSeries(double q, double sigma, double alpha) {
  ASYNCDP_CHECK(q > 0.0 && q < 1.0 && sigma > 0.0 && alpha > 1.0);
  // MTZ19 Section 3.3: split the integral at z0, where q e^u = 1 - q, and expand the power binomially on
  // each side:
  //   A_1 = sum_k C(a,k) (1-q)^(a-k) q^k exp((k^2 - k)/(2 s^2)) * erfc((k - z0) / (sqrt2 s)) / 2
  //   A_2 = sum_k C(a,k) (1-q)^k q^(a-k) exp(((a-k)^2 - (a-k))/(2 s^2)) * erfc((z0 - (a-k)) / (sqrt2 s)) / 2
  // C(a, k) alternates in sign for k > a, so positive and negative terms are accumulated separately.
  const double s2 = sigma * sigma;
  const double z0 = s2 * std::log(1.0 / q - 1.0) + 0.5;
  const double log_q = std::log(q);
  const double log_1mq = std::log1p(-q);
  const double log_half = std::log(0.5);
  double log_positive = -kInf;
  double log_negative = -kInf;
  double log_abs_binomial = 0.0;  // ln |C(alpha, 0)|
  bool positive = true;
  for (int64_t k = 0;; ++k) {
    const double kd = static_cast<double>(k);
    if (k > 0) {
      const double factor = (alpha - kd + 1.0) / kd;  // C(a,k) = C(a,k-1) (a - k + 1) / k
      log_abs_binomial += std::log(std::abs(factor));
      if (factor < 0.0) positive = !positive;
    }
    const double j = alpha - kd;
    const double term0 = log_abs_binomial + kd * log_q + j * log_1mq + (kd * kd - kd) / (2.0 * s2) +
                         log_half + LogErfc((kd - z0) / (std::numbers::sqrt2 * sigma));
    const double term1 = log_abs_binomial + j * log_q + kd * log_1mq + (j * j - j) / (2.0 * s2) + log_half +
                         LogErfc((z0 - j) / (std::numbers::sqrt2 * sigma));
    const double pair = LogAddExp(term0, term1);
    if (positive) {
      log_positive = LogAddExp(log_positive, pair);
    } else {
      log_negative = LogAddExp(log_negative, pair);
    }
    // Past the order the terms shrink (eventually monotonically, alternating in sign), so the remainder is
    // below the last term; stop at 1e-16 relative to the sum.
    if (kd > alpha + 1.0 && pair < log_positive - 37.0) break;
    ASYNCDP_CHECK_MSG(k < 50'000'000, "MTZ19 series did not converge");
  }
  return LogSubExp(log_positive, log_negative);
}

}  // namespace asyncdp::accounting
