// The privacy service: every epsilon of the tool is Account(event, accountant, delta) of a mechanism
// description (core/accounting/dp_event.h), every delta at an epsilon is Delta(event, accountant, epsilon),
// every noise multiplier meeting a target comes from Calibrate, and every "which accountants apply" answer
// from ApplicableLimitation. Training runs (calibration, budget halt, running and final epsilon), proactive
// phases, check-ins, audits, `asyncdp account` and the Python module all call these; only this unit and the
// factory (make_accountant.h) make accountants.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/accounting/accountant.h"
#include "core/accounting/assumptions.h"
#include "core/accounting/dp_event.h"
#include "core/accounting/random_allocation/random_allocation.h"

namespace asyncdp::accounting {

// How finely the accountants compute (not part of the mechanism): RDP orders, the PLD grid.
struct AccountingPrecision {
  RdpOptions rdp;
  PldOptions pld;
};
// The precision part of a run's accountant options.
inline AccountingPrecision PrecisionOf(const AccountantOptions& options) { return {options.rdp, options.pld}; }

// Empty when an accountant of `kind` can account `event`; otherwise why not (the event's own structure —
// e.g. samplers mixed — or the accountant's: random allocation only by its own accountant, secure noise
// only by RDP, an approximation where a bound is needed is the caller's rule).
std::string ApplicableLimitation(const DpEvent& event, AccountantKind kind);

// One accountant's answer for an event.
struct Accounted {
  AccountantKind kind = AccountantKind::kPld;
  BoundKind bound = BoundKind::kUpperBound;
  bool available = false;
  std::string reason;        // why not available (ApplicableLimitation, or the accountant's own limits)
  EpsilonResult result;      // at the delta asked
  Assumptions assumptions;   // what the number states
  double delta_at_epsilon = std::numeric_limits<double>::quiet_NaN();  // with at_epsilon
  // The composed accountant, for further Delta(epsilon) queries on the same event (a profile); null when
  // unavailable. Not thread-safe (accountants cache).
  std::shared_ptr<const Accountant> composed;
};

struct AccountQuery {
  double delta = 1e-5;                 // in (0, 1)
  std::optional<double> at_epsilon;    // also delta(at_epsilon), clamped to [0, 1]
  AccountingPrecision precision;
  bool pld_lower_bound = true;         // the PLD's lower bound beside its upper bound (costs a second grid)
};

// Throws ConfigError for a delta outside (0, 1) or invalid rounds; an accountant that cannot account the
// event comes back unavailable with the reason.
Accounted Account(const DpEvent& event, AccountantKind kind, const AccountQuery& query);
// Every kind in `kinds`, in that order (the same loop for the report, a population, an audit and a run).
std::vector<Accounted> AccountAll(const DpEvent& event, std::span<const AccountantKind> kinds,
                                  const AccountQuery& query);
// The smallest delta at `epsilon` >= 0 by one accountant (ConfigError when it cannot account the event).
double Delta(const DpEvent& event, AccountantKind kind, double epsilon, const AccountingPrecision& precision = {});
// Every bound of the random-allocation accountant (which binds, each direction), for reports.
RandomAllocationResult AllocationBounds(const DpEvent& event, double delta);
// ... and every bound's delta at `epsilon` >= 0 (the privacy curve's delta(epsilon), bound by bound).
RandomAllocationResult AllocationDeltaBounds(const DpEvent& event, double epsilon);

// Remembers the upper-bound epsilon of (event, accountant, delta, precision) between the calls of one
// task that compose the same mechanism more than once: a calibration's probes, then the budget halts at the
// calibrated sigma (which are the calibration's last probes), never compose it twice. Keyed by the lowered
// event exactly (every q, sigma and count bit for bit), so it only ever returns what the accountant returned.
// Not thread-safe; one per task.
class EpsilonMemo {
 public:
  // The accountant's epsilon upper bound for `event` (ConfigError, as Account would say, when unavailable).
  double Epsilon(const DpEvent& event, AccountantKind kind, double delta, const AccountingPrecision& precision);
  size_t size() const { return values_.size(); }

 private:
  std::map<std::string, double> values_;
};

// The one calibration policy: sigma in [1e-3, 1e4], certified within a factor 1 + 1e-4 of the smallest
// sigma the accountant certifies.
struct CalibrationPolicy {
  static constexpr double kRelativeTolerance = 1e-4;
  static constexpr double kSigmaMin = 1e-3;
  static constexpr double kSigmaMax = 1e4;
};

struct CalibrationResult {
  double sigma = 0.0;    // smallest sigma found with epsilon(sigma) <= target (every event of the family)
  double epsilon = 0.0;  // the largest event's epsilon at that sigma (<= target)
  bool found = false;    // false if even kSigmaMax does not meet the target
};

// The smallest sigma such that every event of family(sigma) has epsilon <= `epsilon` at `delta` by an
// accountant of `kind` (bisection on log sigma; the returned sigma was certified by the accountant).
// family(sigma) holds one event per distinct client, its Gaussians' multipliers proportional to sigma
// (ScaleNoise of a unit-sigma description is the usual family). ConfigError for invalid targets or an
// accountant that cannot account the family.
using EventFamily = std::function<std::vector<DpEventPtr>(double sigma)>;
// The search composes only members that no other member dominates (the same rounds, each with at least the
// other's q: by joint convexity of the hockey-stick divergence that member's true epsilon is the larger),
// then checks every member at the sigma found and searches again with all of them if the accountant's
// numbers disagree (their grids differ). `memo` (optional) keeps every composition for later calls.
CalibrationResult Calibrate(const EventFamily& family, double epsilon, double delta, AccountantKind kind,
                            const AccountingPrecision& precision = {}, EpsilonMemo* memo = nullptr);
// The family of `unit` (events at sigma = 1) scaled to sigma.
EventFamily ScaledFamily(std::vector<DpEventPtr> unit);

// The number of leading rounds of a plan that fit `budget`: the largest t in [0, total] with
// epsilon(prefix(t)) <= budget at `delta` (the total when all fit; bisection, O(log T) compositions).
// `prefix(t)` is the event of the first t rounds.
int64_t RoundsWithinBudget(const std::function<DpEventPtr(int64_t)>& prefix, int64_t total, double budget,
                           double delta, AccountantKind kind, const AccountingPrecision& precision = {},
                           EpsilonMemo* memo = nullptr);

}  // namespace asyncdp::accounting
