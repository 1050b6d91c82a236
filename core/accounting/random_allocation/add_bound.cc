#include "core/accounting/random_allocation/add_bound.h"

#include <cmath>
#include <limits>

#include "core/accounting/gaussian_mechanism.h"
#include "core/check.h"

namespace asyncdp::accounting {
namespace {

// J (1 - 1/m') / (2 sigma^2): the AM-GM constant summed over J instances.
double AddShift(int64_t steps, int64_t instances, double sigma) {
  return static_cast<double>(instances) * (1.0 - 1.0 / static_cast<double>(steps)) / (2.0 * sigma * sigma);
}

double AddNoise(int64_t steps, int64_t instances, double sigma) {
  return sigma * std::sqrt(static_cast<double>(steps) / static_cast<double>(instances));
}

// Smallest eps >= 0 with decreasing_delta(eps) <= delta: geometric bracket, then bisection that keeps
// delta(hi) <= delta, so the returned value always satisfies the bound. +inf when eps = 64 is not enough.
template <typename F>
double SmallestEpsilon(F decreasing_delta, double delta) {
  if (decreasing_delta(0.0) <= delta) return 0.0;
  double lo = 0.0;
  double hi = 0.125;
  while (decreasing_delta(hi) > delta) {
    lo = hi;
    hi *= 2.0;
    if (hi > 64.0) return std::numeric_limits<double>::infinity();
  }
  for (int i = 0; i < 100 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (decreasing_delta(mid) > delta ? lo : hi) = mid;
  }
  return hi;
}

}  // namespace

double AllocationAddDelta(int64_t steps, int64_t instances, double sigma, double epsilon) {
  ASYNCDP_CHECK(steps >= 1 && instances >= 1 && sigma > 0.0);
  return GaussianDelta(epsilon - AddShift(steps, instances, sigma), AddNoise(steps, instances, sigma));
}

double AllocationAddEpsilon(int64_t steps, int64_t instances, double sigma, double delta) {
  ASYNCDP_CHECK(steps >= 1 && instances >= 1 && sigma > 0.0 && delta > 0.0 && delta < 1.0);
  return GaussianEpsilon(delta, AddNoise(steps, instances, sigma)) + AddShift(steps, instances, sigma);
}

double CheckInAddDelta(int64_t steps, double sigma, double participation, double epsilon) {
  ASYNCDP_CHECK(participation > 0.0 && participation <= 1.0);
  if (participation == 1.0) return AllocationAddDelta(steps, 1, sigma, epsilon);
  const double kappa = std::exp(epsilon);
  const double beta = 1.0 - kappa * (1.0 - participation);
  if (beta <= 0.0) return 0.0;
  return beta * AllocationAddDelta(steps, 1, sigma, std::log(kappa * participation / beta));
}

double CheckInAddEpsilon(int64_t steps, double sigma, double participation, double delta) {
  ASYNCDP_CHECK(delta > 0.0 && delta < 1.0);
  if (participation == 1.0) return AllocationAddEpsilon(steps, 1, sigma, delta);
  // beta * H_{kappa p0/beta} is non-increasing in kappa (it is H_kappa of a fixed pair).
  return SmallestEpsilon([&](double eps) { return CheckInAddDelta(steps, sigma, participation, eps); },
                         delta);
}

}  // namespace asyncdp::accounting
