// Poisson-decomposition bound for ONE window of 1-out-of-m random allocation ([FS] Thm. 4.3, App. E),
// evaluated with our Poisson-subsampled-Gaussian PLD accountant (core/accounting/pld.h).
//
// Derivation (docs/random_allocation.md §4). Poisson sampling at rate lambda over t = m steps is the mixture
// over K ~ Binomial(t, lambda) of K-out-of-t allocations ([FS] Lemma E.2). Let p1 = 1 - (1 - lambda)^t and
// P+ the Poisson output law conditioned on K >= 1, so that P_{t,lambda}(*) = (1 - p1) N0^t + p1 P+. More
// allocations never help ([FS] Lemma E.1, mixture form), so the allocation pair is dominated by (P+, N0^t)
// in both directions. The identities of advanced joint convexity ([FS] Claim E.3; Balle, Barthe, Gaboardi
// 2018, Thm. 2) relate P+ back to the Poisson profiles, with gamma = 1 / p1:
//   remove: delta_rem_A(eps) <= gamma * delta_rem_P( ln(1 + (e^eps - 1) / gamma) )
//   add:    delta_add_A(eps) <= (1 + (gamma - 1) e^eps) * delta_add_P( -ln(1 - (1 - e^-eps) / gamma) )
// With lambda = 1/m, gamma -> e/(e-1) ~ 1.582 as m grows ([FS] §4.3).
// Abstention: the check-in pair is allocation of the p0-subsampled randomizer (spec R.4(b)), whose Poisson
// scheme at rate lambda is the Gaussian Poisson scheme at rate lambda p0; p1 keeps lambda.
// Scope: one instance only (k = 1, E = 1) — it bounds a privacy profile, and profiles do not compose.
// The PLD accountant reports max(remove, add) of the Poisson scheme; using that maximum in each line above
// is conservative.
#pragma once

#include <cstdint>

#include "core/accounting/pld.h"

namespace asyncdp::accounting {

// gamma = 1 / (1 - (1 - rate)^steps), the factor of [FS] Thm. 4.3 (rate in (0, 1]).
double DecompositionGamma(int64_t steps, double rate);

struct DecompositionOptions {
  // Poisson rate lambda = rate_scale / m of the decomposition, in (0, m]; 1 is [FS]'s choice. Smaller
  // rates can be tighter (Ertan & van Dijk App. F) but multiply the PLD's discretisation error by gamma.
  double rate_scale = 1.0;
  PldOptions pld = {};
};

// Thread safety: immutable after construction; concurrent const calls are safe.
class DecompositionBound {
 public:
  // steps = m >= 1, sigma > 0, participation p0 in (0, 1]. Builds the PLD of m Poisson rounds at rate
  // lambda p0. Throws ConfigError for an invalid rate_scale or PLD option.
  DecompositionBound(int64_t steps, double sigma, double participation,
                     const DecompositionOptions& options = {});

  double RemoveDelta(double epsilon) const;
  double AddDelta(double epsilon) const;
  // Smallest eps >= 0 (up to bisection tolerance, always on the safe side) with the bound <= delta;
  // +inf when no eps <= 64 qualifies (the add bound has a floor: its Poisson argument stays below
  // ln(gamma / (gamma - 1)) however large eps is).
  double RemoveEpsilon(double delta) const;
  double AddEpsilon(double delta) const;

  double gamma() const { return gamma_; }
  double poisson_rate() const { return poisson_rate_; }

 private:
  double gamma_ = 1.0;
  double poisson_rate_ = 0.0;
  ComposedPld poisson_;
};

}  // namespace asyncdp::accounting
