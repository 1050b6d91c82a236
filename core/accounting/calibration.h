// Planning with an accountant before any round runs (the schedule is public): the noise multiplier that
// meets a target (epsilon, delta), and the number of rounds a budget allows. This is the uniform-allocation
// step of budget management (docs/theory.md §7): fix the rounds up front, choose sigma so
// that the budget is spent at the last planned round; a client then halts at depletion, a round count
// known before training.
//
// Both searches keep the invariant "the returned value was certified by the accountant", so the answer
// is valid even if an accountant's upper bound were not perfectly monotone in sigma or in the rounds.
#pragma once

#include <cstdint>
#include <span>

#include "core/accounting/accountant.h"

namespace asyncdp::accounting {

struct CalibrationOptions {
  double relative_tolerance = 1e-4;  // the returned sigma is within this factor above the smallest found
  double sigma_min = 1e-3;           // search range for sigma
  double sigma_max = 1e4;            // above it: "not found"
};

struct CalibrationResult {
  double sigma = 0.0;    // smallest sigma found with epsilon(sigma) <= target (every client)
  double epsilon = 0.0;  // the largest client's epsilon at that sigma (<= target)
  bool found = false;    // false if even sigma_max does not meet the target
};

// The smallest noise multiplier sigma such that every client's rounds, with each round's noise multiplier
// multiplied by sigma, have epsilon <= `epsilon` at `delta` under an accountant of `kind` with `options`.
// `clients` holds one schedule per client whose sigma column is the noise *relative* to sigma (1 for a
// constant multiplier; a profile such as {2, 1} calibrates a decreasing-noise plan exactly). Bisection on
// log sigma. Throws ConfigError for invalid inputs or an accountant that cannot account them.
CalibrationResult CalibrateSigma(AccountantKind kind, const AccountantOptions& options,
                                 std::span<const Schedule> clients, double epsilon, double delta,
                                 const CalibrationOptions& calibration = {});

// The number of leading rounds of `rounds_in_order` (run-length groups in the order they will run) that
// fit `budget`: the largest t with epsilon(first t rounds) <= budget at `delta` under the accountant; the
// total when all fit. Bisection over t: O(log T) compositions.
int64_t RoundsWithinBudget(AccountantKind kind, const AccountantOptions& options,
                           const Schedule& rounds_in_order, double budget, double delta);

// The first `rounds` rounds of a run-length schedule (in order).
Schedule SchedulePrefix(const Schedule& rounds_in_order, int64_t rounds);

}  // namespace asyncdp::accounting
