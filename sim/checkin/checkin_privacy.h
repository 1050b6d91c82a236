// What epsilon a check-in run may report, and on which theorem. Neighbours: add/remove of one client (its
// one record), the central guarantee for the population, every intermediate model released.
//
//   one_client rule (fixed_window, sliding_window): the step law with client x is a mixture w A_ldp(g_x) +
//     (1 - w) U over the other checked-in clients or the dummy; by [FS] Lemma C.8 (monotonicity in the
//     mixture weight) and joint convexity it is dominated by the Gaussian pair at sensitivity 2C, i.e. the
//     Gaussian randomizer with noise multiplier sigma / 2, and [FS] Thm. 3.1 reduces the window to random
//     allocation of that randomizer (docs/random_allocation.md; conservative). Fixed window: m steps,
//     k = 1, E windows, check-in probability p0. Sliding window: m = W (steps outside x's window do not
//     depend on x given the view; a check-in outside the update range is a null step, which is dominated),
//     one window.
//   average rule (averaged, or sliding_window with step_rule = average): NO BOUND. [FS] Thm. 3.1 takes the
//     worst allocation of the others, which leaves x alone in its step, where "skip" against "update" reveals
//     x; a bound must use the other clients' check-in randomness, which no theorem available to us does.
//   The batching of b steps per model update is a post-processing of the per-step outputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/accounting/random_allocation/random_allocation.h"
#include "sim/checkin/checkin_options.h"

namespace asyncdp::sim::checkin {

struct CheckInPrivacy {
  bool bounded = false;          // false: "no bound" (see `reason`)
  double epsilon = 0.0;          // the reported upper bound when bounded (+inf when no bound reaches delta)
  double delta = 0.0;
  std::string reason;            // why there is no bound
  std::string theorem;           // what the bound rests on (reduction + binding allocation bound)
  accounting::RandomAllocationParams accounted;  // the allocation instance accounted (sigma: the accounted one)
  std::optional<accounting::RandomAllocationResult> bounds;  // every allocation bound when bounded
};

// The random-allocation instance a run is accounted as (sigma: the run's noise multiplier), or nullopt
// when the run has no bound (average rule) — with `reason` set.
std::optional<accounting::RandomAllocationParams> AccountedInstance(const CheckInOptions& options, double sigma,
                                                                    std::string* reason = nullptr);

// The epsilon of a run with noise multiplier sigma > 0 at delta: the privacy service (core/accounting/
// account.h) on the check-in event, random allocation of Gaussian(sigma, sensitivity 2).
CheckInPrivacy AccountCheckIns(const CheckInOptions& options, double sigma, double delta);

// The smallest sigma whose epsilon, by AccountCheckIns, is <= target: accounting::Calibrate, the one
// calibrator and policy every epsilon target uses (sigma in [1e-3, 1e4], within 1 + 1e-4), on the
// check-in event family. ConfigError when the run has no bound (average rule) or sigma = 1e4 does not suffice.
double CalibrateCheckInSigma(const CheckInOptions& options, double epsilon, double delta);

}  // namespace asyncdp::sim::checkin
