#include "core/accounting/random_allocation/recursive.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/accounting/log_math.h"
#include "core/check.h"

namespace asyncdp::accounting {
namespace {

// tau e^{2 eps'} = e^{eps'} / (e^{eps'} - 1): the add-direction tail factor; the remove one is tau.
double AddTailFactor(double eps_prime) { return std::exp(eps_prime) / std::expm1(eps_prime); }
double RemoveTailFactor(double eps_prime) { return std::exp(-eps_prime) / std::expm1(eps_prime); }

void CheckInputs(const RecursiveBoundInputs& in) {
  ASYNCDP_CHECK(in.instance_steps >= 1 && in.instances >= 1 && in.sigma > 0.0);
  ASYNCDP_CHECK(in.participation > 0.0 && in.participation <= 1.0 && in.single_instance_add_delta);
}

PldOptions UpperOnly(PldOptions options) {
  options.compute_lower_bound = false;
  return options;
}

// The composed Poisson scheme of all instances at rate eta p0, or null when eta > 1.
bool PoissonRate(const RecursiveBoundInputs& in, double eps_prime, double& rate) {
  const double eta = std::exp(2.0 * eps_prime) / static_cast<double>(in.instance_steps);
  if (!(eta <= 1.0)) return false;
  rate = eta * in.participation;
  return true;
}

}  // namespace

RecursiveEpsilon RecursiveAllocationEpsilon(const RecursiveBoundInputs& in, double delta) {
  CheckInputs(in);
  ASYNCDP_CHECK(delta > 0.0 && delta < 1.0);
  const double instances = static_cast<double>(in.instances);
  auto add_tail = [&](double eps_prime) {
    return instances * AddTailFactor(eps_prime) * in.single_instance_add_delta(eps_prime);
  };
  RecursiveEpsilon best{kInf, kInf};
  for (double fraction : in.tail_shares) {
    ASYNCDP_CHECK(fraction > 0.0 && fraction < 1.0);
    const double tail_budget = fraction * delta;
    // add_tail is non-increasing in eps' (both factors are): bracket, then bisect keeping hi admissible.
    double lo = 0.0;
    double hi = 1.0 / 64.0;
    while (add_tail(hi) > tail_budget && hi < 32.0) {
      lo = hi;
      hi *= 2.0;
    }
    if (add_tail(hi) > tail_budget) continue;
    for (int i = 0; i < 60 && hi - lo > 1e-9 * hi; ++i) {
      const double mid = 0.5 * (lo + hi);
      (add_tail(mid) > tail_budget ? lo : hi) = mid;
    }
    double rate = 0.0;
    if (!PoissonRate(in, hi, rate)) continue;
    const ComposedPld poisson({{rate, in.sigma, in.instance_steps * in.instances}}, SamplingModel::kPoisson,
                              UpperOnly(in.pld));
    const double add_tail_value = add_tail(hi);
    const double remove_tail_value = add_tail_value * RemoveTailFactor(hi) / AddTailFactor(hi);
    best.add = std::min(best.add, poisson.EpsilonUpper(delta - add_tail_value));
    best.remove = std::min(best.remove, poisson.EpsilonUpper(delta - remove_tail_value));
  }
  return best;
}

RecursiveDelta RecursiveAllocationDelta(const RecursiveBoundInputs& in, double epsilon) {
  CheckInputs(in);
  ASYNCDP_CHECK(epsilon >= 0.0);
  RecursiveDelta best;
  if (epsilon <= 0.0) return best;
  const double instances = static_cast<double>(in.instances);
  const double capped = std::min(
      epsilon / 2.0, std::log(std::max(2.0, static_cast<double>(in.instance_steps))) / 4.0);
  for (double eps_prime : {epsilon / 4.0, epsilon / 2.0, capped}) {
    double rate = 0.0;
    if (!(eps_prime > 0.0) || !PoissonRate(in, eps_prime, rate)) continue;
    const ComposedPld poisson({{rate, in.sigma, in.instance_steps * in.instances}}, SamplingModel::kPoisson,
                              UpperOnly(in.pld));
    const double base = poisson.DeltaUpper(epsilon);
    const double single = in.single_instance_add_delta(eps_prime);
    best.add = std::min(best.add, base + instances * AddTailFactor(eps_prime) * single);
    best.remove = std::min(best.remove, base + instances * RemoveTailFactor(eps_prime) * single);
  }
  best.add = std::min(best.add, 1.0);
  best.remove = std::min(best.remove, 1.0);
  return best;
}

}  // namespace asyncdp::accounting
