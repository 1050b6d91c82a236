#include "sim/checkin/checkin_privacy.h"

#include <cmath>
#include <memory>

#include "core/accounting/random_allocation/random_allocation_accountant.h"
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

accounting::AccountantOptions FacadeOptions(const accounting::RandomAllocationParams& p) {
  accounting::AccountantOptions options;
  options.sampling = SamplingModel::kRandomAllocation;
  options.allocation = {p.steps, p.allocations, p.participation};
  return options;
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
  p.sigma = sigma / 2.0;
  return p;
}

CheckInPrivacy AccountCheckIns(const CheckInOptions& o, double sigma, double delta) {
  CheckInPrivacy out;
  out.delta = delta;
  const auto instance = AccountedInstance(o, sigma, &out.reason);
  if (!instance) return out;
  out.bounded = true;
  out.accounted = *instance;
  auto accountant = std::make_unique<accounting::RandomAllocationAccountant>(FacadeOptions(*instance));
  const double rate = instance->participation / static_cast<double>(instance->steps);
  accountant->AddRounds(rate, instance->sigma, instance->steps * instance->windows);
  out.bounds = accountant->Bounds(delta);
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
  if (!AccountedInstance(o, 1.0, &reason)) throw ConfigError("dp.epsilon", "cannot calibrate sigma: " + reason);
  if (!(epsilon > 0.0 && std::isfinite(epsilon))) throw ConfigError("dp.epsilon", "must be positive and finite");
  // epsilon is non-increasing in sigma. Bracket from sigma = 2 by doubling / halving, then bisect on log
  // sigma to 1e-3 relative, keeping the invariant "hi meets the target" (certified by the accountant).
  // Starting near the answer matters: the allocation bounds take seconds at extreme sigma.
  const auto meets = [&](double sigma) { return AccountCheckIns(o, sigma, delta).epsilon <= epsilon; };
  constexpr double kMin = 0.05, kMax = 200.0;
  double lo = 2.0, hi = 2.0;
  if (meets(hi)) {
    while (lo > kMin && meets(lo / 2.0)) lo /= 2.0;
    hi = lo;
    lo /= 2.0;
    if (hi <= kMin) return hi;
  } else {
    while (!meets(hi)) {
      lo = hi;
      hi *= 2.0;
      if (hi > kMax) throw ConfigError("dp.epsilon", "no sigma up to 200 reaches the target epsilon");
    }
  }
  while (hi / lo > 1.0 + 1e-3) {
    const double mid = std::sqrt(lo * hi);
    (meets(mid) ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace asyncdp::sim::checkin
