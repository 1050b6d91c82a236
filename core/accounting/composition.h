// Generic composition of (eps0, delta0)-DP mechanisms (composition; docs/theory.md §7), for comparison with
// the mechanism-specific accountants, and uniform budget allocation (§8). Pure functions.
#pragma once

#include <cstdint>
#include <span>

namespace asyncdp::accounting {

struct EpsDelta {
  double epsilon = 0.0;
  double delta = 0.0;
};

// Basic composition (Claim 10): (sum eps_i, sum delta_i).
EpsDelta BasicComposition(std::span<const EpsDelta> mechanisms);
EpsDelta BasicComposition(double eps0, double delta0, int64_t k);

// KL bound a(eps) of (6.98): eps (e^eps - 1) for eps <= ln 2, else eps.
double KlBound(double epsilon);

enum class AdvancedVariant {
  // §4.3 (Dwork-Rothblum-Vadhan), the default:  sqrt(2k ln(1/d'')) eps + k eps (e^eps - 1).
  kDworkRothblumVadhan,
  // Claims 14/17 (independent mechanisms):      k a(eps) + sqrt(2k ln(1/d'')) eps.
  kIndependent,
  // Claims 16/18 (adaptive):                    k a(eps) + sqrt(2k ln(1/d'')) (eps + a(eps)).
  kAdaptive,
  // §4.5 (lecture notes):                        k eps^2 / 2 + eps sqrt(2k ln(1/d'')).
  kLectureNotes,
};

// k-fold composition of an (eps0, delta0) mechanism with slack delta'' in (0, 1):
// (eps', k delta0 + delta'').
EpsDelta AdvancedComposition(double eps0, double delta0, int64_t k, double delta_slack,
                             AdvancedVariant variant = AdvancedVariant::kDworkRothblumVadhan);

// Optimal (exact) homogeneous composition (Kairouz, Oh, Viswanath 2015): the k-fold composition of an
// (eps0, delta0) mechanism is (eps, delta(eps))-DP with
//   delta(eps) = 1 - (1 - delta0)^k (1 - sum_{l : (k-2l) eps0 > eps} C(k,l) (e^{(k-l)eps0} - e^eps e^{l
//   eps0})
//                                                                    / (1 + e^eps0)^k),
// and no smaller delta holds for every such mechanism. Summed in log space; k up to ~10^7.
double OptimalCompositionDelta(double eps0, double delta0, int64_t k, double epsilon);
// Smallest eps >= 0 with OptimalCompositionDelta <= delta (+inf if 1 - (1-delta0)^k > delta).
double OptimalCompositionEpsilon(double eps0, double delta0, int64_t k, double delta);

// Amplification by subsampling a fraction r of the records (Claim 19): (ln(1 + r (e^eps - 1)), r delta).
EpsDelta SubsampledEpsDelta(double epsilon, double delta, double rate);

enum class CompositionRule { kBasic, kAdvanced, kOptimal };

// Uniform allocation of a total budget over `rounds` identical rounds (§8 [spec note]): the largest
// per-round eps whose composition under `rule` stays within eps_total, found by bisection on the
// monotone composed eps. delta_round = delta_total / rounds (basic) or (delta_total - delta_slack) /
// rounds (advanced, optimal; delta_slack in (0, delta_total), ignored by basic).
EpsDelta AllocateUniformly(double eps_total, double delta_total, int64_t rounds, CompositionRule rule,
                           double delta_slack);

}  // namespace asyncdp::accounting
