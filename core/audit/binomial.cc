#include "core/audit/binomial.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"

namespace asyncdp::audit {
namespace {

// The continued fraction of DLMF 8.17.22,
//   I_x(a, b) = prefactor * 1 / (1 + d_1 / (1 + d_2 / (1 + ...))),
//   d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)),
//   d_{2m}   = m (b - m) x / ((a + 2m - 1)(a + 2m)),
// evaluated by the modified Lentz method (Thompson & Barnett 1986): f = prod C_j D_j with C, D the
// ratios of successive numerators/denominators, tiny values guarding against division by zero.
// Returns the value of the fraction 1 / (1 + d_1 / (1 + ...)).
double BetaContinuedFraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr double kEps = 1e-16;
  constexpr int kMaxTerms = 1 << 22;  // ~sqrt(max(a, b)) terms are needed; this is never reached
  // Term 0: f = 1 / (1 + d_1) written as the Lentz start b0 = 0 (a "0 + 1 / (1 + d_1 / ...)" fraction).
  double c = 1.0;
  double d = 1.0 + (-(a + b) * x / (a + 1.0));  // 1 + d_1 (m = 0)
  if (std::abs(d) < kTiny) d = kTiny;
  d = 1.0 / d;
  double f = d;
  for (int m = 1; m < kMaxTerms; ++m) {
    const double two_m = 2.0 * m;
    // Even term d_{2m}.
    const double even = m * (b - m) * x / ((a + two_m - 1.0) * (a + two_m));
    d = 1.0 + even * d;
    if (std::abs(d) < kTiny) d = kTiny;
    c = 1.0 + even / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    f *= d * c;
    // Odd term d_{2m+1}.
    const double odd = -(a + m) * (a + b + m) * x / ((a + two_m) * (a + two_m + 1.0));
    d = 1.0 + odd * d;
    if (std::abs(d) < kTiny) d = kTiny;
    c = 1.0 + odd / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    f *= delta;
    if (std::abs(delta - 1.0) < kEps) return f;
  }
  ASYNCDP_CHECK_MSG(false, "incomplete beta continued fraction did not converge");
  return f;
}

// The remainder of Stirling's series, corr(z) = ln Gamma(z) - [(z - 1/2) ln z - z + ln sqrt(2 pi)]
// (DLMF 5.11.1): five terms of the asymptotic series for z >= 15 (the first omitted term is below 3e-16
// there), lgamma below, where the subtraction loses nothing because every term is small.
double StirlingCorrection(double z) {
  if (z >= 15.0) {
    const double inv = 1.0 / z;
    const double inv2 = inv * inv;
    return inv * (1.0 / 12 - inv2 * (1.0 / 360 - inv2 * (1.0 / 1260 - inv2 * (1.0 / 1680 - inv2 / 1188))));
  }
  constexpr double kLogSqrt2Pi = 0.91893853320467274178;
  return std::lgamma(z) - ((z - 0.5) * std::log(z) - z + kLogSqrt2Pi);
}

// d(a, m) = a ln(a / m) + m - a >= 0, the "deviance" of Loader (2000), "Fast and accurate computation of
// binomial probabilities": near a = m by its series in v = (a - m) / (a + m),
//   d = (a - m) v + 2 a (v^3 / 3 + v^5 / 5 + ...),
// which keeps full relative accuracy where the direct formula cancels.
double Deviance(double a, double m) {
  if (std::abs(a - m) < 0.1 * (a + m)) {
    const double v = (a - m) / (a + m);
    const double v2 = v * v;
    double sum = (a - m) * v;
    double power = 2.0 * a * v;
    for (int j = 1; j < 1000; ++j) {
      power *= v2;
      const double next = sum + power / (2 * j + 1);
      if (next == sum) break;
      sum = next;
    }
    return sum;
  }
  return a * std::log(a / m) + m - a;
}

}  // namespace

double LogPowerOverBeta(double a, double b, double x) {
  ASYNCDP_CHECK(a > 0.0 && b > 0.0 && x > 0.0 && x < 1.0);
  const double y = 1.0 - x;
  if (std::min(a, b) < 10.0) return a * std::log(x) + b * std::log1p(-x) - LogBetaFunction(a, b);
  // With Stirling for the three Gamma functions of B(a, b) and s = a + b, the large terms cancel exactly:
  //   ln(x^a y^b / B(a, b)) = -d(a, x s) - d(b, y s) + (1/2) ln(a b / (2 pi s))
  //                           - corr(a) - corr(b) + corr(s),
  // because x s + y s = a + b. Each piece is O(1) or a deviance computed without cancellation, so the
  // result keeps ~1e-15 relative accuracy for any a, b (lgamma differences lose ~1e-16 * a).
  const double s = a + b;
  constexpr double kLog2Pi = 1.83787706640934548356;
  return -Deviance(a, x * s) - Deviance(b, y * s) +
         0.5 * (std::log(a) + std::log(b) - std::log(s) - kLog2Pi) - StirlingCorrection(a) -
         StirlingCorrection(b) + StirlingCorrection(s);
}

namespace {

// ln of x^a (1-x)^b / (a B(a, b)), the prefactor of the continued fraction.
double LogPrefactor(double a, double b, double x) { return LogPowerOverBeta(a, b, x) - std::log(a); }

}  // namespace

double LogBetaFunction(double a, double b) {
  ASYNCDP_CHECK(a > 0.0 && b > 0.0);
  const double small = std::min(a, b);
  const double big = std::max(a, b);
  if (big < 15.0) return std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b);
  // lgamma(big) - lgamma(big + small) by Stirling, so that two large lgamma values never cancel:
  //   = -(big - 1/2) ln(1 + small / big) - small ln(big + small) + small + corr(big) - corr(big + small).
  const double ratio = -(big - 0.5) * std::log1p(small / big) - small * std::log(big + small) + small +
                       StirlingCorrection(big) - StirlingCorrection(big + small);
  return std::lgamma(small) + ratio;
}

double RegularizedIncompleteBeta(double a, double b, double x) {
  ASYNCDP_CHECK(a > 0.0 && b > 0.0 && std::isfinite(a) && std::isfinite(b));
  ASYNCDP_CHECK(x >= 0.0 && x <= 1.0);
  if (x == 0.0) return 0.0;
  if (x == 1.0) return 1.0;
  // The fraction converges quickly for x < (a + 1) / (a + b + 2); use the symmetry beyond.
  if (x < (a + 1.0) / (a + b + 2.0)) {
    return std::exp(LogPrefactor(a, b, x)) * BetaContinuedFraction(a, b, x);
  }
  return 1.0 - std::exp(LogPrefactor(b, a, 1.0 - x)) * BetaContinuedFraction(b, a, 1.0 - x);
}

double BetaDensity(double a, double b, double x) {
  ASYNCDP_CHECK(x > 0.0 && x < 1.0);
  return std::exp(LogPowerOverBeta(a, b, x)) / (x * (1.0 - x));
}

double InverseRegularizedIncompleteBeta(double a, double b, double y) {
  ASYNCDP_CHECK(y >= 0.0 && y <= 1.0);
  if (y == 0.0) return 0.0;
  if (y == 1.0) return 1.0;
  // Newton on I_x(a, b) - y (derivative: the Beta density), inside a bracket [lo, hi] that every
  // evaluation shrinks (I_x is increasing in x). A Newton step that leaves the bracket is replaced by
  // its midpoint, so convergence is guaranteed and quadratic once Newton takes over.
  double lo = 0.0;
  double hi = 1.0;
  double x = a / (a + b);  // the mean: a start inside (0, 1)
  for (int iter = 0; iter < 400; ++iter) {
    const double value = RegularizedIncompleteBeta(a, b, x);
    if (value == y) return x;
    if (value < y) {
      lo = x;
    } else {
      hi = x;
    }
    const double density = BetaDensity(a, b, x);
    double next = density > 0.0 ? x - (value - y) / density : 0.5 * (lo + hi);
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    // Stop at machine precision in x (I_x can be steep: a relative error r in x is one of ~a r in y).
    if (std::abs(next - x) <= 2e-16 * x || hi - lo <= 2e-16 * hi) return next;
    x = next;
  }
  return x;
}

double BinomialPmf(int64_t n, double p, int64_t k) {
  ASYNCDP_CHECK(n >= 0 && p >= 0.0 && p <= 1.0);
  if (k < 0 || k > n) return 0.0;
  if (p == 0.0) return k == 0 ? 1.0 : 0.0;
  if (p == 1.0) return k == n ? 1.0 : 0.0;
  const double nn = static_cast<double>(n);
  if (k == 0) return std::exp(nn * std::log1p(-p));
  if (k == n) return std::exp(nn * std::log(p));
  // C(n, k) = n / (k (n - k)) / B(k, n - k).
  const double kk = static_cast<double>(k);
  return nn / (kk * (nn - kk)) * std::exp(LogPowerOverBeta(kk, nn - kk, p));
}

double BinomialTailAtLeast(int64_t n, double p, int64_t k) {
  ASYNCDP_CHECK(n >= 0 && p >= 0.0 && p <= 1.0);
  if (k <= 0) return 1.0;
  if (k > n) return 0.0;
  return RegularizedIncompleteBeta(static_cast<double>(k), static_cast<double>(n - k + 1), p);
}

double BinomialCdf(int64_t n, double p, int64_t k) {
  ASYNCDP_CHECK(n >= 0 && p >= 0.0 && p <= 1.0);
  if (k < 0) return 0.0;
  if (k >= n) return 1.0;
  // P[X <= k] = P[n - X >= n - k] with n - X ~ Bin(n, 1 - p): no cancellation in the lower tail.
  return RegularizedIncompleteBeta(static_cast<double>(n - k), static_cast<double>(k + 1), 1.0 - p);
}

}  // namespace asyncdp::audit
