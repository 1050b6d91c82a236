// The Q-law of the likelihood ratio V of one instance of random allocation, computed numerically as atoms
// (docs/random_allocation.md §5b), in two versions:
//   * dominating (an upper bound): every step is a mean-preserving spread of V, so the atoms' pair
//     dominates the true pair in both directions (allocation_pld.h says why);
//   * dominated (a lower bound): every step is a post-processing (Blackwell garbling) of the mechanism's
//     output, or drops mass, so every hockey-stick divergence of the atoms' pair, alone or composed, is at
//     most the true one (allocation_pld_lower.h).
#pragma once

#include <cstdint>
#include <vector>

namespace asyncdp::accounting {

struct AllocationPldOptions {
  // Grid points (2^n) of each of the likelihood ratio law's two grids. 2^14 moved epsilon by < 0.3% from
  // 2^17 on the grid (sigma 0.8-4, m 10-1000, E 1-100) at an eighth of the time; 2^13 by < 1%.
  int log2_points = 14;
  double tail = 1e-14;  // P-mass sent to V = +inf by the caps, all of them together (charged to delta)
  // Q-mass of a block allowed above its fine grid (the rest is on the coarse grid). Pooling (the dominated
  // law), unlike spreading, needs steps below the bulk's scale: a run starting at the bottom must reach its
  // grid point with mass from above, impossible when the step exceeds E[Y] = 1 (at sigma = 0.6, m = 100 the
  // 1 - 1e-12 quantile gave steps of 1.8 and pooled nothing; allocation_pld_lower.cc retries at 1e-6).
  double fine_tail = 1e-12;
  // PLD grid spacing: this times one instance's loss spread (0.05: < 0.05% from 0.01 in epsilon).
  double relative_discretization = 0.05;
  int max_log2_fft_size = 22;  // longest composed PLD; beyond it the spacing is coarsened

  friend bool operator==(const AllocationPldOptions&, const AllocationPldOptions&) = default;
};

// Which side of the true law the computed one lies on (see the top of this header).
enum class LawBound { kDominating, kDominated };

// The Q-law of the likelihood ratio V of one instance as atoms: Q-mass q[j] at V = ratio[j], and the
// P-mass at V = +inf. Dominating: sum_j ratio[j] q[j] + p_infinity = 1 up to round-off (a check).
// Dominated: p_infinity = 0 and the masses may sum to a little less than 1 (dropped far tails).
struct LikelihoodRatioLaw {
  std::vector<double> ratio;
  std::vector<double> q;
  double p_infinity = 0.0;
  // Bound on the FFT round-off's effect on either hockey-stick divergence of one instance: charged to
  // delta in the dominating law, taken off it in the dominated one.
  double round_off = 0.0;
};

// t >= 1 steps, sigma > 0, p0 in (0, 1].
LikelihoodRatioLaw AllocationRatioLaw(int64_t steps, double sigma, double participation,
                                      const AllocationPldOptions& options = {},
                                      LawBound bound = LawBound::kDominating);

// The PLD grid spacing for a law's atoms: `relative` times the standard deviation of the remove loss ln V
// under P, at least 1e-6; NaN when the law carries no finite P-mass (the caller refuses it).
double LossSpacing(const LikelihoodRatioLaw& law, double relative);

}  // namespace asyncdp::accounting
