#include "core/accounting/gdp/gdp.h"

#include <cmath>
#include <limits>
#include <string>

#include "core/accounting/log_math.h"
#include "core/error.h"

namespace asyncdp::accounting {

double GdpMuPoisson(double q, double sigma, double steps) {
  return q * std::sqrt(steps * std::expm1(1.0 / (sigma * sigma)));
}

double GdpMuUniform(double q, double sigma, double steps) {
  const double inner =
      std::exp(1.0 / (sigma * sigma)) * NormalCdf(1.5 / sigma) + 3.0 * NormalCdf(-0.5 / sigma) - 2.0;
  return std::sqrt(2.0) * q * std::sqrt(steps) * std::sqrt(inner);
}

double GdpMu(const Schedule& schedule, SamplingModel sampling) {
  ValidateSchedule(schedule);
  double mu_squared = 0.0;
  for (const RoundGroup& g : schedule) {
    const double steps = static_cast<double>(g.count);
    double mu = 0.0;
    switch (sampling) {
      case SamplingModel::kPoisson:
        mu = GdpMuPoisson(g.q, g.sigma, steps);
        break;
      case SamplingModel::kFixedSizeWithoutReplacement:
        mu = GdpMuPoisson(g.q, g.sigma / 2.0, steps);
        break;
      case SamplingModel::kShuffle:
        throw ConfigError("sampling", "shuffled batches have no GDP formula; reduce the schedule first");
      case SamplingModel::kRandomAllocation:
        throw ConfigError("sampling", "random allocation has no GDP formula here; use the random_allocation "
                                      "accountant");
    }
    mu_squared += mu * mu;
  }
  return std::sqrt(mu_squared);
}

double GdpDelta(double mu, double epsilon) {
  if (mu <= 0.0) return 0.0;
  if (!std::isfinite(mu)) return 1.0;  // sigma -> 0: the outputs separate completely
  // Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2); the second product is formed in log space so that
  // e^eps does not overflow for large eps.
  const double first = NormalCdf(-epsilon / mu + mu / 2.0);
  const double second = std::exp(epsilon + LogNormalCdf(-epsilon / mu - mu / 2.0));
  return std::max(0.0, first - second);
}

double GdpEpsilon(double mu, double delta) {
  if (!(delta > 0.0 && delta < 1.0))
    throw ConfigError("delta", "must be in (0, 1), got " + std::to_string(delta));
  if (!(mu < std::numeric_limits<double>::infinity())) return std::numeric_limits<double>::infinity();
  if (mu <= 0.0 || GdpDelta(mu, 0.0) <= delta) return 0.0;
  // delta(eps) decreases in eps: bracket, then bisect to full double precision.
  double lo = 0.0;
  double hi = std::max(1.0, mu * mu);
  while (GdpDelta(mu, hi) > delta) {
    lo = hi;
    hi *= 2.0;
  }
  for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (GdpDelta(mu, mid) > delta ? lo : hi) = mid;
  }
  return hi;
}

}  // namespace asyncdp::accounting
