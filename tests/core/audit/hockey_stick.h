// The test oracle for every audit bound: the true epsilon of a pair of one-dimensional output
// distributions, from the hockey-stick divergence integrated numerically,
//
//   delta_{P||Q}(eps) = integral max(0, p(x) - e^eps q(x)) dx,   eps(delta) = min{eps : both directions <=
//   delta},
//
// with composite Simpson on a fine grid and bisection in eps. It shares no code and no closed form with
// core/audit (or core/accounting): only the densities are written down.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>

namespace asyncdp::audit::testing {

using Density = std::function<double(double)>;

inline double GaussianDensity(double x, double mean) {
  const double z = x - mean;
  return std::exp(-0.5 * z * z) * 0.39894228040143267794;  // 1 / sqrt(2 pi)
}

// integral over [lo, hi] of max(0, p - e^eps q), Simpson with `intervals` (even) sub-intervals.
inline double HockeyStick(const Density& p, const Density& q, double eps, double lo, double hi,
                          int intervals = 200000) {
  const double h = (hi - lo) / intervals;
  const double scale = std::exp(eps);
  double sum = 0.0;
  for (int j = 0; j <= intervals; ++j) {
    const double x = lo + j * h;
    const double f = std::max(0.0, p(x) - scale * q(x));
    const double w = (j == 0 || j == intervals) ? 1.0 : (j % 2 == 1 ? 4.0 : 2.0);
    sum += w * f;
  }
  return sum * h / 3.0;
}

// The smallest eps >= 0 with max(delta_{P||Q}, delta_{Q||P})(eps) <= delta, to 1e-6 (Simpson with
// `intervals` sub-intervals: 50,000 over [-14, 14 + mu] puts the error of delta below 1e-7 relative).
inline double TrueEpsilon(const Density& p, const Density& q, double delta, double lo, double hi,
                          int intervals = 50000) {
  auto profile = [&](double eps) {
    return std::max(HockeyStick(p, q, eps, lo, hi, intervals), HockeyStick(q, p, eps, lo, hi, intervals));
  };
  if (profile(0.0) <= delta) return 0.0;
  double a = 0.0;
  double b = 1.0;
  while (profile(b) > delta) {
    a = b;
    b *= 2.0;
  }
  while (b - a > 1e-6) {
    const double mid = 0.5 * (a + b);
    (profile(mid) > delta ? a : b) = mid;
  }
  return b;
}

// The Gaussian pair N(mu, 1) vs N(0, 1) (the full-batch Dirac canary in noise units).
inline double GaussianPairEpsilon(double mu, double delta) {
  return TrueEpsilon([mu](double x) { return GaussianDensity(x, mu); },
                     [](double x) { return GaussianDensity(x, 0.0); }, delta, -14.0, 14.0 + mu);
}

}  // namespace asyncdp::audit::testing
