#include "core/audit/normal.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/check.h"

namespace asyncdp::audit {
namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kLogSqrt2Pi = 0.91893853320467274178;  // ln sqrt(2 pi)

// phi(x) = exp(-x^2/2) / sqrt(2 pi).
double NormalPdf(double x) { return std::exp(-0.5 * x * x - kLogSqrt2Pi); }

}  // namespace

double NormalCdf(double x) { return 0.5 * std::erfc(-x * kInvSqrt2); }

double LogNormalCdf(double x) {
  if (x > -37.0) return std::log(NormalCdf(x));
  // Mills-ratio series (A&S 26.2.12): Phi(x) = phi(x)/|x| * (1 - 1/x^2 + 3/x^4 - 15/x^6 + ...); at
  // |x| >= 37 the next term is below 1e-12 relative.
  const double inv2 = 1.0 / (x * x);
  const double series = 1.0 - inv2 * (1.0 - inv2 * (3.0 - 15.0 * inv2));
  return -0.5 * x * x - kLogSqrt2Pi - std::log(-x) + std::log(series);
}

double NormalQuantile(double p) {
  ASYNCDP_CHECK(p >= 0.0 && p <= 1.0);
  if (p == 0.0) return -std::numeric_limits<double>::infinity();
  if (p == 1.0) return std::numeric_limits<double>::infinity();
  // Work in the lower tail: q = min(p, 1 - p), x = -Phi^{-1}(q) >= 0 for the start.
  const bool upper = p > 0.5;
  const double q = upper ? 1.0 - p : p;
  const double t = std::sqrt(-2.0 * std::log(q));
  double x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) /
                       (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
  // Halley on F(x) = Phi(x) - q: F' = phi, F'' = -x phi, so x <- x - u / (1 + x u / 2) with u = F/phi.
  // In the lower tail Phi(x) is computed without cancellation by erfc, so q down to 1e-300 is fine.
  for (int iter = 0; iter < 50; ++iter) {
    const double pdf = NormalPdf(x);
    if (pdf == 0.0) break;
    const double u = (NormalCdf(x) - q) / pdf;
    const double step = u / (1.0 + 0.5 * x * u);
    x -= step;
    if (std::abs(step) <= 1e-15 * std::max(1.0, std::abs(x))) break;
  }
  return upper ? -x : x;
}

}  // namespace asyncdp::audit
