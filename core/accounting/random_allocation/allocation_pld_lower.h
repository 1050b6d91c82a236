// A certified lower bound on the privacy profile of random allocation with k = 1 (random check-ins into
// fixed windows of t steps, E windows): the dominated counterpart of allocation_pld.h
// (docs/random_allocation.md §5c).
//
// With k = 1 the pair that AllocationPld bounds is not only an upper bound but attained: a record whose
// clipped gradient is 1 in a one-dimensional model, every other record's 0, makes the mechanism output
// exactly that pair ([FS] Thm. 3.1's dominating pair, with our abstention mixture for p0 < 1). So any
// dominated pair of it gives a lower bound on the mechanism's true epsilon. The dominated law of V
// (allocation_ratio_law.h, LawBound::kDominated) is a post-processing of the mechanism's output with some
// mass dropped; its atoms are pooled onto the PLD grid by further post-processing (pooling.h: remove
// direction from the top down, add direction from the bottom up, so that the run left over at the end
// only ever has its loss lowered), composed over the windows in the PLD with the FFT's round-off and tail
// taken off delta, and the law's own FFT round-off, windows times its per-window bound, taken off as well.
//
// The lower bound shows how tight AllocationPld's upper bound is without an outside reference (the two
// bracket the true epsilon); it is not a guarantee and is never reported as one.
#pragma once

#include <cstdint>
#include <vector>

#include "core/accounting/pld.h"
#include "core/accounting/pld/pld_discretization.h"
#include "core/accounting/random_allocation/allocation_ratio_law.h"

namespace asyncdp::accounting {

// The two directions' discrete PLDs of a dominated law, on the grid {i delta_loss}, by pooling (each
// a sub-probability: masses dropped below loss -40).
DiscretePld RemovePldLower(const LikelihoodRatioLaw& law, double delta_loss);
DiscretePld AddPldLower(const LikelihoodRatioLaw& law, double delta_loss);

class AllocationPldLower {
 public:
  // `windows` >= 1 compositions of one window of t = `steps` >= 1 steps, k = 1. The law is pooled on the
  // upper bound's grids; when they lose more than 1e-3 of its P-mass (small sigma: heavy tails, coarse
  // steps), also on grids whose fine part stops at the 1 - 1e-6 quantile, and each query takes the larger
  // of the two lower bounds. ConfigError when neither keeps half the P-mass or the composition does not
  // fit.
  AllocationPldLower(int64_t steps, int64_t windows, double sigma, double participation,
                     const AllocationPldOptions& options = {});

  // The true delta(eps) / epsilon(delta) of the mechanism is at least these (the worse direction, or one).
  double DeltaLower(double epsilon) const;
  double EpsilonLower(double delta) const;
  double RemoveDeltaLower(double epsilon) const;
  double AddDeltaLower(double epsilon) const;
  double RemoveEpsilonLower(double delta) const;
  double AddEpsilonLower(double delta) const;

 private:
  struct Bound {
    ComposedPld composed;  // remove, add
    double round_off = 0.0;
  };
  static Bound Compose(const LikelihoodRatioLaw& law, int64_t windows, const AllocationPldOptions& options);
  std::vector<Bound> bounds_;  // each a valid lower bound; queries take the larger
};

}  // namespace asyncdp::accounting
