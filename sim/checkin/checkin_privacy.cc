#include "sim/checkin/checkin_privacy.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/accounting/account.h"
#include "core/accounting/dp_event.h"
#include "core/error.h"

namespace asyncdp::sim::checkin {
namespace {

constexpr const char* kNoBoundAverage =
    "no bound: averaged updates (Alg. 2: all checked-in clients averaged, empty steps skipped) are not covered "
    "by the random-allocation theorems — their worst case leaves the client alone in its step, where skip "
    "against update reveals it; no theorem available to us bounds this protocol";

constexpr const char* kOneClientReduction =
    "one client per step with dummy updates, dominated by the Gaussian randomizer at sensitivity 2C (noise "
    "multiplier sigma/2; [FS] Lemma C.8 + joint convexity), reduced to random allocation by [FS] Thm. 3.1";

// The mechanism a client is exposed to (dp_event.h): random allocation of the one-client randomizer, which
// the reduction above dominates by the Gaussian at sensitivity 2C (multiplier sigma/2).
accounting::DpEventPtr CheckInEvent(const accounting::RandomAllocationParams& p, double sigma) {
  const accounting::AllocationWindow window{p.steps, p.allocations, p.participation};
  return accounting::RandomAllocation(window, p.steps * p.windows, accounting::Gaussian(sigma, 2.0));
}

}  // namespace

std::optional<accounting::RandomAllocationParams> AccountedInstance(const CheckInOptions& o, double sigma,
                                                                    std::string* reason) {
  if (o.step_rule == StepRule::kAverage) {
    if (reason) *reason = kNoBoundAverage;
    return std::nullopt;
  }
  accounting::RandomAllocationParams p;
  p.steps = o.variant == Variant::kSlidingWindow ? o.window_length : o.steps;
  p.allocations = 1;
  p.windows = o.variant == Variant::kSlidingWindow ? 1 : o.windows;
  p.participation = o.participation;
  // The multiplier the accountant composes: the event's own reduction (Gaussian(sigma, sensitivity 2)).
  p.sigma = accounting::Lower(*CheckInEvent(p, sigma)).schedule.front().sigma;
  return p;
}

CheckInPrivacy AccountCheckIns(const CheckInOptions& o, double sigma, double delta) {
  CheckInPrivacy out;
  out.delta = delta;
  const auto instance = AccountedInstance(o, sigma, &out.reason);
  if (!instance) return out;
  out.bounded = true;
  out.accounted = *instance;
  out.bounds = accounting::AllocationBounds(*CheckInEvent(*instance, sigma), delta);
  out.epsilon = out.bounds->value;
  out.theorem = std::string(kOneClientReduction) +
                (o.variant == Variant::kSlidingWindow
                     ? "; sliding window: m = W, steps outside the client's window are post-processing"
                     : "") +
                "; binding: " + std::string(accounting::BoundTheorem(out.bounds->binding_bound)) + " (" +
                std::string(accounting::ToString(out.bounds->binding_direction)) + " direction)";
  return out;
}

double CalibrateCheckInSigma(const CheckInOptions& o, double epsilon, double delta) {
  std::string reason;
  const auto instance = AccountedInstance(o, 1.0, &reason);
  if (!instance) throw ConfigError("dp.epsilon", "cannot calibrate sigma: " + reason);
  if (!(epsilon > 0.0 && std::isfinite(epsilon))) throw ConfigError("dp.epsilon", "must be positive and finite");
  // The one calibrator (core/accounting/account.h) over the check-in event family.
  const accounting::RandomAllocationParams p = *instance;
  const accounting::CalibrationResult r = accounting::Calibrate(
      [p](double sigma) { return std::vector<accounting::DpEventPtr>{CheckInEvent(p, sigma)}; }, epsilon, delta,
      accounting::AccountantKind::kRandomAllocation);
  if (!r.found) {
    throw ConfigError("dp.epsilon", "no sigma up to " +
                                        std::to_string(static_cast<int>(accounting::CalibrationPolicy::kSigmaMax)) +
                                        " reaches the target epsilon");
  }
  return r.sigma;
}

}  // namespace asyncdp::sim::checkin
