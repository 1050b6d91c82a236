#include "core/audit/canary_statistics.h"

#include <cmath>

#include "core/check.h"

namespace asyncdp::audit {

double CanarySumStatistic(std::span<const double> projections) {
  double sum = 0.0;
  for (const double x : projections) sum += x;
  return sum;
}

double CanaryStepLogLikelihoodRatio(double projection, double sampling_rate, double noise_multiplier) {
  ASYNCDP_CHECK(sampling_rate >= 0.0 && sampling_rate <= 1.0 && noise_multiplier > 0.0);
  const double q = sampling_rate;
  // a = ln of the density ratio N(1, s^2) / N(0, s^2) at x = (2x - 1) / (2 s^2).
  const double a = (projection - 0.5) / (noise_multiplier * noise_multiplier);
  if (q == 0.0) return 0.0;
  if (q == 1.0) return a;
  // ln(1 - q + q e^a): for a > 0 as a + ln(q + (1 - q) e^{-a}), else ln1p(q (e^a - 1)).
  if (a > 0.0) return a + std::log(q + (1.0 - q) * std::exp(-a));
  return std::log1p(q * std::expm1(a));
}

double CanaryLogLikelihoodRatio(std::span<const double> projections, double sampling_rate,
                                double noise_multiplier) {
  double sum = 0.0;
  for (const double x : projections) sum += CanaryStepLogLikelihoodRatio(x, sampling_rate, noise_multiplier);
  return sum;
}

}  // namespace asyncdp::audit
