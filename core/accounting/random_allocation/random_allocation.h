// Privacy accounting for random allocation ("balls in bins") and random check-ins: every bound we can
// prove for E windows of m steps, k allocations per record per window, noise multiplier sigma and
// participation (check-in) probability p0. docs/random_allocation.md states each theorem and assumption.
//
// Scheme: in each of E independent windows every record (a client holding one record, for check-ins)
// takes part with probability p0 and, if it does, joins k distinct steps of the window chosen uniformly
// (k = 1 for random check-ins into a fixed window, Balle et al. 2020 Alg. 1 with the sum aggregator). Every
// step releases the sum of the clipped contributions (L2 norm <= C) of the records allocated to it plus
// N(0, sigma^2 C^2 I), also when no record is allocated; intermediate outputs are all released.
// Neighbours: add/remove of one record (zero-out: the record replaced by a null that contributes nothing,
// [FS] §2.2). Both directions are bounded and the worse is reported. For replace-one use the group-of-two
// conversion (2 eps, (1 + e^eps) delta) (spec R.2.5); it is not applied here.
//
// Bounds (per direction the smallest valid one is used):
//   kRenyiRemove   remove  [FS] Thm. 4.4 / Cor. 4.6: exact integer-order RDP of one window, composed over
//                          J = kE instances of 1-out-of-floor(m/k) ([FS] Lemma 3.2), converted with
//                          [FS] Lemma A.1 (Canonne, Kamath, Steinke 2020, Prop. 12).
//   kAmGmAdd       add     [FS] Thm. 4.5 / Cor. 4.6 with the constant multiplied by J (add_bound.h).
//   kDecomposition both    [FS] Thm. 4.3 with our Poisson PLD; one window, k = 1 only (decomposition.h).
//   kRecursive     both    [FS] Thm. 4.1 second part with our Poisson PLD, J instances (recursive.h).
//   kPld           both    the PLD of one instance computed numerically (a dominating pair by convex
//                          order, allocation_pld.h), composed over J instances in the PLD ([FS] Lemma 3.2
//                          for k > 1); the tightest for E > 1.
// Abstention p0 < 1 (spec R.4, our derivation — neither paper treats it): the check-in pair is exactly
// k = 1 allocation of the p0-subsampled randomizer p0 N1 + (1 - p0) N0 against N0, so every bound above is
// applied to that randomizer (moments mu_p(p0), Poisson rate lambda p0, the joint-convexity identity for
// the single-window add bound). With k > 1 the record abstains from all k steps jointly, which these
// reductions do not cover; p0 is then ignored (treated as 1), which is valid because the p0-mixture is a
// post-processing of the p0 = 1 pair (output the sample with probability p0, else a fresh N0 draw).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/accounting/pld.h"
#include "core/accounting/random_allocation/allocation_pld.h"
#include "core/accounting/random_allocation/decomposition.h"
#include "core/accounting/schedule.h"

namespace asyncdp::accounting {

struct RandomAllocationParams {
  int64_t steps = 0;           // m: steps (rounds) in one window, >= 1
  int64_t allocations = 1;     // k: steps each participating record joins per window, 1 <= k <= m
  int64_t windows = 1;         // E: independent windows composed (fresh allocation in each), >= 1
  double sigma = 0.0;          // noise multiplier: per-step noise std / clipping norm, > 0
  double participation = 1.0;  // p0: probability that a record takes part in a window, (0, 1]
};

// Throws ConfigError (key `where`.field) unless every field is in range and finite.
void ValidateRandomAllocationParams(const RandomAllocationParams& params,
                                    std::string_view where = "random_allocation");

struct RandomAllocationOptions {
  // Largest integer Renyi order. Orders 2..64 are always used; the range doubles (cost ~ order^2) while
  // the best order sits in its top quarter, up to this limit (the high-privacy regime needs high orders).
  int max_order = 1024;
  bool use_decomposition = true;  // [FS] Thm. 4.3 (one PLD of m rounds)
  bool use_recursive = true;      // [FS] Thm. 4.1 second part (a PLD of k E floor(m/k) rounds per share)
  bool use_pld = true;            // the instance's own PLD (allocation_pld.h), composed over J instances
  AllocationPldOptions allocation_pld;
  // Reuses instances across calls (an accountant's running epsilon); null: build each time.
  std::shared_ptr<AllocationInstanceCache> pld_cache;
  // Shares of delta given to the recursive bound's tail term (recursive.h); more shares, more PLDs.
  std::vector<double> recursive_tail_shares = {0.5};
  // PLD grids of both Poisson-based bounds. The connect-the-dots discretisation is an upper bound at any
  // spacing; 0.3 of the loss spread (instead of the PLD accountant's 0.1) moved epsilon by < 0.2% in our
  // checks (sigma = 1, m = 1000) and is 3-5x faster.
  DecompositionOptions decomposition = {1.0, CoarsePld()};
  PldOptions pld = CoarsePld();  // for the recursive bound's Poisson part

  static PldOptions CoarsePld() {
    PldOptions options;
    options.relative_discretization = 0.3;
    options.compute_lower_bound = false;
    return options;
  }
};

enum class PrivacyDirection { kRemove, kAdd };
enum class AllocationBound { kRenyiRemove, kAmGmAdd, kDecomposition, kRecursive, kPld };

std::string_view ToString(PrivacyDirection direction);
std::string_view ToString(AllocationBound bound);
// The theorem(s) a bound rests on, e.g. "[FS] Thm. 4.4, Cor. 4.6; Lemma 3.2; Lemma A.1".
std::string_view BoundTheorem(AllocationBound bound);

// The assumptions every random-allocation epsilon rests on (printed with each result).
inline constexpr std::string_view kRandomAllocationAssumptions =
    "add/remove (zero-out) neighbours, both directions; each record joins k uniformly random steps of "
    "each window (after a p0 participation coin), fresh in every window; Gaussian noise N(0, sigma^2 C^2 I) "
    "added to the clipped sum in every step, empty steps included; all intermediate outputs released";

struct AllocationBoundValue {
  AllocationBound bound = AllocationBound::kRenyiRemove;
  PrivacyDirection direction = PrivacyDirection::kRemove;
  bool applicable = true;  // false: the theorem does not cover these parameters (`note` says why)
  double value = 0.0;      // epsilon (RandomAllocationEpsilon) or delta (RandomAllocationDelta)
  int order = 0;           // Renyi order attaining the minimum (kRenyiRemove only)
  std::string note;        // why not applicable, or a conservative simplification that was made
};

struct RandomAllocationResult {
  // max over the two directions of the smallest applicable bound of that direction.
  double value = 0.0;
  PrivacyDirection binding_direction = PrivacyDirection::kRemove;
  AllocationBound binding_bound = AllocationBound::kRenyiRemove;
  std::vector<AllocationBoundValue> bounds;  // every bound, applicable or not
};

// epsilon at delta in (0, 1); +inf when no bound reaches delta.
RandomAllocationResult RandomAllocationEpsilon(const RandomAllocationParams& params, double delta,
                                               const RandomAllocationOptions& options = {});
// delta at epsilon >= 0.
RandomAllocationResult RandomAllocationDelta(const RandomAllocationParams& params, double epsilon,
                                             const RandomAllocationOptions& options = {});

// The schedule of Poisson sampling at the same expected participation, rate p0 k / m over m E rounds,
// for comparison with the existing PLD / RDP accountants ([FS] Thm. 4.1: asymptotically the same).
Schedule PoissonComparisonSchedule(const RandomAllocationParams& params);

}  // namespace asyncdp::accounting
