#include "core/accounting/log_math.h"

#include <cmath>
#include <limits>
#include <numbers>

namespace asyncdp::accounting {
namespace {


}  // namespace

double LogAddExp(double a, double b) {
  if (a == -kInf) return b;
  if (b == -kInf) return a;
  const double hi = std::max(a, b);
  const double lo = std::min(a, b);
  return hi + std::log1p(std::exp(lo - hi));
}

double LogSubExp(double a, double b) {
  if (b == -kInf) return a;
  if (a <= b) return -kInf;
  return a + std::log(-std::expm1(b - a));
}

double LogErfc(double x) {
  // erfc(26) ~ 5.7e-296 is still a normal double; beyond, use the Laplace continued fraction
  // erfc(x) = exp(-x^2) / (x sqrt(pi)) * 1 / (1 + 1/(2x^2) / (1 + 2/(2x^2) / (1 + ...))).
  if (x < 26.0) return std::log(std::erfc(x));
  const double z = 2.0 * x * x;
  double fraction = 0.0;  // evaluated bottom-up; 60 levels are exact to double precision for x >= 26
  for (int k = 60; k >= 1; --k) fraction = k / z / (1.0 + fraction);
  return -x * x - std::log(x) - 0.5 * std::log(std::numbers::pi) - std::log1p(fraction);
}

double NormalCdf(double x) { return 0.5 * std::erfc(-x / std::numbers::sqrt2); }

double NormalSf(double x) { return 0.5 * std::erfc(x / std::numbers::sqrt2); }

double LogNormalCdf(double x) { return std::log(0.5) + LogErfc(-x / std::numbers::sqrt2); }

double NormalIntervalMass(double a, double b) {
  if (b <= a) return 0.0;
  // Subtract the two tail probabilities on the side where both are small, so no digits cancel.
  if (a >= 0.0) return NormalSf(a) - NormalSf(b);
  if (b <= 0.0) return NormalCdf(b) - NormalCdf(a);
  return 1.0 - NormalCdf(a) - NormalSf(b);
}

double NormalQuantile(double p) {
  if (p <= 0.0) return -kInf;
  if (p >= 1.0) return kInf;
  // Acklam's approximation (relative error 1.15e-9), then one Halley step on Phi(x) - p.
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                                 1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01, -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  constexpr double kLow = 0.02425;
  double x;
  if (p < kLow) {
    const double q = std::sqrt(-2.0 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  } else if (p <= 1.0 - kLow) {
    const double q = p - 0.5;
    const double r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
  } else {
    const double q = std::sqrt(-2.0 * std::log1p(-p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  }
  // Halley refinement; the error term uses the tail that is small to keep relative accuracy.
  const double e = (x < 0.0) ? NormalCdf(x) - p : (1.0 - p) - NormalSf(x);
  const double u = e * std::sqrt(2.0 * std::numbers::pi) * std::exp(0.5 * x * x);
  return x - u / (1.0 + 0.5 * x * u);
}

double LogBinomial(double n, double k) {
  return std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0);
}

}  // namespace asyncdp::accounting
