#include "core/accounting/random_allocation/decomposition.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/accounting/log_math.h"
#include "core/check.h"
#include "core/error.h"

namespace asyncdp::accounting {
namespace {

double CheckedRate(int64_t steps, const DecompositionOptions& options) {
  const double m = static_cast<double>(steps);
  if (!(options.rate_scale > 0.0 && options.rate_scale <= m)) {
    throw ConfigError("decomposition.rate_scale",
                      "must be in (0, steps] = (0, " + std::to_string(steps) + "], got " +
                          std::to_string(options.rate_scale));
  }
  return options.rate_scale / m;
}

PldOptions WithoutLowerBound(PldOptions options) {
  options.compute_lower_bound = false;
  return options;
}

}  // namespace

double DecompositionGamma(int64_t steps, double rate) {
  ASYNCDP_CHECK(steps >= 1 && rate > 0.0 && rate <= 1.0);
  if (rate == 1.0) return 1.0;
  // 1 - (1 - rate)^steps without cancellation for tiny rates.
  return -1.0 / std::expm1(static_cast<double>(steps) * std::log1p(-rate));
}

DecompositionBound::DecompositionBound(int64_t steps, double sigma, double participation,
                                       const DecompositionOptions& options)
    : gamma_(DecompositionGamma(steps, CheckedRate(steps, options))),
      poisson_rate_(CheckedRate(steps, options) * participation),
      poisson_({{CheckedRate(steps, options) * participation, sigma, steps}}, SamplingModel::kPoisson,
               WithoutLowerBound(options.pld)) {
  ASYNCDP_CHECK(sigma > 0.0 && participation > 0.0 && participation <= 1.0);
}

double DecompositionBound::RemoveDelta(double epsilon) const {
  const double eps_poisson = std::log1p(std::expm1(epsilon) / gamma_);
  return std::min(1.0, gamma_ * poisson_.DeltaUpper(eps_poisson));
}

double DecompositionBound::AddDelta(double epsilon) const {
  // eps'' = -ln(1 - (1 - e^-eps) / gamma) >= 0 for eps >= 0.
  const double eps_poisson = -std::log1p(std::expm1(-epsilon) / gamma_);
  return std::min(1.0, (1.0 + (gamma_ - 1.0) * std::exp(epsilon)) * poisson_.DeltaUpper(eps_poisson));
}

double DecompositionBound::RemoveEpsilon(double delta) const {
  ASYNCDP_CHECK(delta > 0.0 && delta < 1.0);
  // gamma delta_P(eps_P) <= delta  <=>  delta_P(eps_P) <= delta / gamma; then invert eps_P(eps).
  const double eps_poisson = poisson_.EpsilonUpper(delta / gamma_);
  if (!std::isfinite(eps_poisson)) return kInf;
  return std::log1p(gamma_ * std::expm1(eps_poisson));
}

double DecompositionBound::AddEpsilon(double delta) const {
  ASYNCDP_CHECK(delta > 0.0 && delta < 1.0);
  // The bound is not monotone in eps (its prefactor grows like e^eps). Any eps where it is <= delta is a
  // valid guarantee (the true profile is non-increasing), so scan a grid for the first such point and
  // bisect towards the previous grid point keeping the bound <= delta at the upper end.
  if (AddDelta(0.0) <= delta) return 0.0;
  double lo = 0.0;
  double hi = kInf;
  for (double eps = 1.0 / 64.0; eps <= 64.0; eps *= 1.25) {
    if (AddDelta(eps) <= delta) {
      hi = eps;
      break;
    }
    lo = eps;
  }
  if (!std::isfinite(hi)) return kInf;
  for (int i = 0; i < 60 && hi - lo > 1e-10 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (AddDelta(mid) > delta ? lo : hi) = mid;
  }
  return hi;
}

}  // namespace asyncdp::accounting
