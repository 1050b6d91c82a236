// Building blocks of the independent hockey-stick oracle (hockey_stick.h): a normal density and tail of
// its own (std::erfc), Gaussian mixtures, the subsampled data-set pairs and their loss, and Gauss-Legendre
// quadrature with adaptive refinement. No include from core/accounting.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <vector>

namespace asyncdp::oracle {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

inline double NormalPdf(double z) { return std::exp(-0.5 * z * z) / std::sqrt(2.0 * std::numbers::pi); }
// P(Z > z), accurate in the upper tail.
inline double NormalTail(double z) { return 0.5 * std::erfc(z / std::numbers::sqrt2); }

// A mixture of N(mean_j, sigma^2).
struct Mixture {
  std::vector<double> weights;
  std::vector<double> means;
  double sigma = 1.0;

  double Density(double x) const {
    double sum = 0.0;
    for (size_t j = 0; j < weights.size(); ++j) sum += weights[j] * NormalPdf((x - means[j]) / sigma);
    return sum / sigma;
  }
  double LogDensity(double x) const {
    double peak = -kInf;
    for (size_t j = 0; j < weights.size(); ++j) {
      const double z = (x - means[j]) / sigma;
      peak = std::max(peak, std::log(weights[j]) - 0.5 * z * z);
    }
    double sum = 0.0;
    for (size_t j = 0; j < weights.size(); ++j) {
      const double z = (x - means[j]) / sigma;
      sum += std::exp(std::log(weights[j]) - 0.5 * z * z - peak);
    }
    return peak + std::log(sum) - std::log(sigma * std::sqrt(2.0 * std::numbers::pi));
  }
  // P(X > x).
  double Tail(double x) const {
    double sum = 0.0;
    for (size_t j = 0; j < weights.size(); ++j) sum += weights[j] * NormalTail((x - means[j]) / sigma);
    return sum;
  }
  double LowestMean() const { return *std::min_element(means.begin(), means.end()); }
  double HighestMean() const { return *std::max_element(means.begin(), means.end()); }
};

// A pair (A, B) whose log-likelihood ratio l(x) = ln a(x) - ln b(x) is non-decreasing in x.
struct Pair {
  Mixture a;
  Mixture b;
  // For the subsampled pairs below, l has a closed-form inverse (else bisection is used): kRemove is
  // l(x) = ln(1 - q + q e^u) with u = (2 shift x - shift^2) / (2 sigma^2); kAdd is its mirror image.
  enum class Shape { kGeneric, kRemove, kAdd } shape = Shape::kGeneric;
  double q = 0.0, shift = 0.0;

  double Loss(double x) const { return a.LogDensity(x) - b.LogDensity(x); }
  // x with l(x) = t, for the kRemove / kAdd shapes: solve 1 - q + q e^u = e^{+-t} for u.
  double InverseLoss(double t) const {
    const double sigma = a.sigma;
    auto u_of = [&](double v) {  // ln((e^v - 1 + q) / q); -inf / nan below the range
      return v > 30.0 ? v - std::log(q) + std::log1p(-(1.0 - q) * std::exp(-v)) : std::log1p(std::expm1(v) / q);
    };
    if (shape == Shape::kRemove) return sigma * sigma * u_of(t) / shift + 0.5 * shift;
    return -sigma * sigma * u_of(-t) / shift - 0.5 * shift;
  }
  // sup of l: +inf when A has a component to the right of every component of B.
  double LossSup() const {
    if (a.HighestMean() > b.HighestMean()) return kInf;
    double weight_a = 0.0, weight_b = 0.0;  // weights at the common highest mean
    for (size_t j = 0; j < a.means.size(); ++j)
      if (a.means[j] == a.HighestMean()) weight_a += a.weights[j];
    for (size_t j = 0; j < b.means.size(); ++j)
      if (b.means[j] == b.HighestMean()) weight_b += b.weights[j];
    return std::log(weight_a / weight_b);
  }
};

// Remove direction of a shift-`shift` subsampled pair: A = (1-q) N(0) + q N(shift), B = N(0).
inline Pair RemovePair(double q, double sigma, double shift) {
  if (q >= 1.0) return {{{1.0}, {shift}, sigma}, {{1.0}, {0.0}, sigma}, Pair::Shape::kRemove, 1.0, shift};
  return {{{1.0 - q, q}, {0.0, shift}, sigma}, {{1.0}, {0.0}, sigma}, Pair::Shape::kRemove, q, shift};
}
// Add direction, mirrored x -> -x so that the loss increases: A = N(0), B = (1-q) N(0) + q N(-shift).
inline Pair AddPair(double q, double sigma, double shift) {
  if (q >= 1.0) return {{{1.0}, {0.0}, sigma}, {{1.0}, {-shift}, sigma}, Pair::Shape::kAdd, 1.0, shift};
  return {{{1.0}, {0.0}, sigma}, {{1.0 - q, q}, {0.0, -shift}, sigma}, Pair::Shape::kAdd, q, shift};
}

// 10-point Gauss-Legendre on [lo, hi] split into panels no wider than `width`.
inline double Integrate(const std::function<double(double)>& f, double lo, double hi, double width) {
  static constexpr double kNodes[] = {0.1488743389816312, 0.4333953941292472, 0.6794095682990244,
                                      0.8650633666889845, 0.9739065285171717};
  static constexpr double kWeights[] = {0.2955242247147529, 0.2692667193099963, 0.2190863625159820,
                                        0.1494513491505806, 0.0666713443086881};
  if (!(hi > lo)) return 0.0;
  const int panels = std::max(1, static_cast<int>(std::ceil((hi - lo) / width)));
  const double h = (hi - lo) / panels;
  double sum = 0.0;
  for (int p = 0; p < panels; ++p) {
    const double center = lo + (p + 0.5) * h;
    for (int i = 0; i < 5; ++i) {
      sum += kWeights[i] * (f(center - 0.5 * h * kNodes[i]) + f(center + 0.5 * h * kNodes[i]));
    }
  }
  return 0.5 * h * sum;
}

// Adaptive version: each panel of `Integrate` is split in halves (at most 14 times) until the 10-point rule
// on the panel and on its two halves agree to `tolerance` (absolute, per panel) or `relative`. delta_{T-1}(eps - l(x)) has narrow
// features where l is nearly flat (the remove pair's loss tends to ln(1-q) as x -> -inf, so a small change
// of eps' moves the root a long way); fixed panels would miss them.
inline double GaussLegendre10(const std::function<double(double)>& f, double a, double b) {
  static constexpr double kNodes[] = {0.1488743389816312, 0.4333953941292472, 0.6794095682990244,
                                      0.8650633666889845, 0.9739065285171717};
  static constexpr double kWeights[] = {0.2955242247147529, 0.2692667193099963, 0.2190863625159820,
                                        0.1494513491505806, 0.0666713443086881};
  const double center = 0.5 * (a + b), half = 0.5 * (b - a);
  double sum = 0.0;
  for (int i = 0; i < 5; ++i) sum += kWeights[i] * (f(center - half * kNodes[i]) + f(center + half * kNodes[i]));
  return half * sum;
}

inline double AdaptivePanel(const std::function<double(double)>& f, double a, double b, double whole,
                            double tolerance, double relative, int depth) {
  const double mid = 0.5 * (a + b);
  const double left = GaussLegendre10(f, a, mid), right = GaussLegendre10(f, mid, b);
  const double refined = left + right;
  if (depth >= 14 || std::abs(refined - whole) <= std::max(tolerance, relative * std::abs(refined))) return refined;
  return AdaptivePanel(f, a, mid, left, tolerance, relative, depth + 1) +
         AdaptivePanel(f, mid, b, right, tolerance, relative, depth + 1);
}

inline double IntegrateAdaptive(const std::function<double(double)>& f, double lo, double hi, double width,
                                double tolerance, double relative = 1e-12) {
  if (!(hi > lo)) return 0.0;
  const int panels = std::max(1, static_cast<int>(std::ceil((hi - lo) / width)));
  const double h = (hi - lo) / panels;
  double sum = 0.0;
  for (int p = 0; p < panels; ++p) {
    const double a = lo + p * h, b = lo + (p + 1) * h;
    sum += AdaptivePanel(f, a, b, GaussLegendre10(f, a, b), tolerance, relative, 0);
  }
  return sum;
}

}  // namespace asyncdp::oracle
