// The privacy-loss distribution of random allocation, computed numerically and composed over windows in
// the PLD (docs/random_allocation.md, "The PLD of random allocation"; docs/theory.md §4).
//
// One instance is 1-out-of-t allocation of the p0-subsampled Gaussian randomizer (k > 1 and E windows are
// J = kE instances of 1-out-of-floor(m/k), [FS] Lemma 3.2, as for the other bounds). Its pair (P, Q) has
// the likelihood ratio
//   V = dP/dQ = p0 (1/t) sum_i Y_i + 1 - p0,   Y_i = exp((2 x_i - 1) / (2 sigma^2)),  x ~ Q = N(0,
//   sigma^2)^t,
// a function of the mean of t i.i.d. log-normal variables with E_Q[Y] = 1, whose Q-law we compute by FFT
// convolution on a grid. Both hockey-stick divergences are convex functionals of V's Q-law,
//   H_a(P||Q) = E_Q[(V - a)_+],   H_a(Q||P) = E_Q[(1 - a V)_+],
// so any mean-preserving spread V' of V (V' larger in the convex order, E V' = 1) defines a pair that
// dominates (P, Q) in both directions; its compositions dominate the true compositions. Every step of the
// computation is such a spread: each interval's mass goes to its two end points with its mean kept
// (discretisation, re-gridding), and the mass above a cap goes to the cap and, in the limit, an atom at
// V = +inf of P-mass E_Q[(S - cap)_+] / t (truncation). The result is an upper bound at any grid size; the
// grid only decides how tight it is. The loss atoms log V are then put on the PLD grid by connect-the-dots
// (pld_discretization.h) and composed by the PLD accountant's FFT (pld.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/accounting/pld.h"
#include "core/accounting/pld/pld_discretization.h"
#include "core/accounting/random_allocation/allocation_ratio_law.h"
#include "core/accounting/recent_cache.h"

namespace asyncdp::accounting {

// The two directions' discrete PLDs (remove: the loss log V under P; add: -log V under Q) on the grid
// {i delta_loss}, by connect-the-dots on the atoms (both masses kept, so the pair still dominates).
DiscretePld RemovePld(const LikelihoodRatioLaw& law, double delta_loss);
DiscretePld AddPld(const LikelihoodRatioLaw& law, double delta_loss);

// One instance's law and its discrete PLDs (the costly part: the FFT convolutions over the steps), kept so
// that composing it over another number of instances (a running epsilon, a budget check) costs only the
// composition.
struct AllocationInstance {
  int64_t steps = 0;
  double sigma = 0.0;
  double participation = 1.0;
  AllocationPldOptions options;
  LikelihoodRatioLaw law;
  double delta_loss = 0.0;        // PLD grid: relative_discretization times the remove loss's spread
  std::vector<DiscretePld> pmfs;  // remove, add at delta_loss
};
std::shared_ptr<const AllocationInstance> MakeAllocationInstance(int64_t steps, double sigma,
                                                                 double participation,
                                                                 const AllocationPldOptions& options = {});

// The last few instances built, by (steps, sigma, participation): an accountant asked for its epsilon after
// every window reuses one. Thread-safe (accountant clones share it).
class AllocationInstanceCache {
 public:
  std::shared_ptr<const AllocationInstance> Get(int64_t steps, double sigma, double participation,
                                                const AllocationPldOptions& options);
  void Clear() { entries_.Clear(); }

 private:
  struct Key {
    int64_t steps;
    double sigma;
    double participation;
    AllocationPldOptions options;
  };
  RecentCache<Key, AllocationInstance> entries_{4};
};

// The process's cache, shared by every random-allocation accountant (a run's running epsilon creates one
// per evaluation point through the accounting facade).
std::shared_ptr<AllocationInstanceCache> SharedAllocationInstanceCache();

// `count` compositions of one instance's discrete PLDs (`first`, on the grid delta_loss) as `bound`; when the
// composed window needs an FFT beyond 2^max_log2_fft_size the grid is coarsened (doubled, up to 40 times)
// with pmfs_at(coarser spacing). nullopt when nothing fits. Shared by the upper and the lower bound.
std::optional<ComposedPld> ComposeWindows(const std::function<std::vector<DiscretePld>(double)>& pmfs_at,
                                          std::vector<DiscretePld> first, double delta_loss, int64_t count,
                                          int max_log2_fft_size, PldBound bound);

// J = `instances` compositions of one instance of 1-out-of-t allocation: an upper bound on delta(eps) and
// eps(delta) in both directions (the worse is reported).
class AllocationPld {
 public:
  AllocationPld(int64_t steps, int64_t instances, double sigma, double participation,
                const AllocationPldOptions& options = {});
  AllocationPld(const AllocationInstance& instance, int64_t instances);

  double DeltaUpper(double epsilon) const { return composed_.DeltaUpper(epsilon); }
  double EpsilonUpper(double delta) const { return composed_.EpsilonUpper(delta); }
  // One direction only (remove or add), for the per-direction table.
  double RemoveEpsilon(double delta) const { return composed_.EpsilonUpperOf(0, delta); }
  double AddEpsilon(double delta) const { return composed_.EpsilonUpperOf(1, delta); }
  double RemoveDelta(double epsilon) const { return composed_.DeltaUpperOf(0, epsilon); }
  double AddDelta(double epsilon) const { return composed_.DeltaUpperOf(1, epsilon); }
  double discretization() const { return composed_.discretization(); }

 private:
  ComposedPld composed_;
};

}  // namespace asyncdp::accounting
