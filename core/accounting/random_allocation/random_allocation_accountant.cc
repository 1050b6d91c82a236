#include "core/accounting/random_allocation/random_allocation_accountant.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/error.h"

namespace asyncdp::accounting {

std::string RandomAllocationAccountant::Limitation() const {
  if (options().sampling != SamplingModel::kRandomAllocation) {
    return "the random_allocation accountant covers random-allocation (check-in) sampling only, got " +
           std::string(ToString(options().sampling));
  }
  if (options().noise != NoiseModel::kGaussian) {
    return "the random-allocation bounds assume continuous Gaussian noise; secure noise is not covered";
  }
  const AllocationWindow& w = options().allocation;
  if (w.steps < 1) return "random allocation needs its window: steps per window m >= 1";
  if (w.allocations < 1 || w.allocations > w.steps) return "random allocation needs 1 <= k <= m";
  if (!(w.participation > 0.0 && w.participation <= 1.0)) return "random allocation needs p0 in (0, 1]";
  return {};
}

RandomAllocationParams RandomAllocationAccountant::Params() const {
  const AllocationWindow& w = options().allocation;
  RandomAllocationParams p;
  p.steps = w.steps;
  p.allocations = w.allocations;
  p.participation = w.participation;
  const double rate = w.participation * static_cast<double>(w.allocations) / static_cast<double>(w.steps);
  double sigma = std::numeric_limits<double>::infinity();
  for (const RoundGroup& g : schedule()) {
    if (g.count == 0) continue;
    if (std::abs(g.q - rate) > 1e-9 * rate) {
      throw ConfigError("random_allocation.q", "every round must have q = p0 k / m = " + std::to_string(rate) +
                                                   " (the window's participation rate), got " +
                                                   std::to_string(g.q));
    }
    sigma = std::min(sigma, g.sigma);
  }
  if (rounds() == 0) throw ConfigError("random_allocation.steps", "no rounds to account");
  p.sigma = sigma;
  p.windows = (rounds() + w.steps - 1) / w.steps;
  return p;
}

const RandomAllocationResult& RandomAllocationAccountant::Bounds(double delta) const {
  RequireUsable(delta);
  if (!cached_ || cached_->delta != delta) {
    cached_ = Cached{delta, RandomAllocationEpsilon(Params(), delta, bound_options_)};
  }
  return cached_->result;
}

EpsilonResult RandomAllocationAccountant::Epsilon(double delta) const {
  RequireUsable(delta);
  EpsilonResult r;
  if (rounds() == 0) {
    r.epsilon = 0.0;
    return r;
  }
  const RandomAllocationResult& b = Bounds(delta);
  r.epsilon = b.value;
  if (b.binding_bound == AllocationBound::kRenyiRemove) {
    for (const AllocationBoundValue& v : b.bounds) {
      if (v.bound == AllocationBound::kRenyiRemove) r.order = v.order;
    }
  }
  return r;
}

double RandomAllocationAccountant::Delta(double epsilon) const {
  RequireUsable(0.5);
  if (rounds() == 0) return 0.0;
  return DeltaBounds(epsilon).value;
}

RandomAllocationResult RandomAllocationAccountant::DeltaBounds(double epsilon) const {
  RequireUsable(0.5);
  return RandomAllocationDelta(Params(), epsilon, bound_options_);
}

std::string RandomAllocationAccountant::Method() const {
  return "random allocation / check-ins (Feldman & Shenfeld 2025): per direction the best of the exact "
         "remove-direction RDP (Thm. 4.4), the AM-GM add bound (Thm. 4.5), the Poisson decomposition "
         "(Thm. 4.3, one window), the recursive bound (Thm. 4.1) and the window's own PLD composed over "
         "windows "
         "(Feldman & Shenfeld 2026; our convex-order discretisation); the larger direction is reported; " +
         std::string(kRandomAllocationAssumptions);
}

}  // namespace asyncdp::accounting
