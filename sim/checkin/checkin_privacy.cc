#include "sim/checkin/checkin_privacy.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/accounting/calibration.h"
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
  const auto instance = AccountedInstance(o, 1.0, &reason);
  if (!instance) throw ConfigError("dp.epsilon", "cannot calibrate sigma: " + reason);
  if (!(epsilon > 0.0 && std::isfinite(epsilon))) throw ConfigError("dp.epsilon", "must be positive and finite");
  // The one calibrator (core/accounting/calibration.h) over the accounted instance: the sigma column is the
  // noise relative to sigma, and the one-client reduction accounts noise multiplier sigma/2 (above).
  const double rate = instance->participation / static_cast<double>(instance->steps);
  const std::vector<accounting::Schedule> client = {
      {accounting::RoundGroup{rate, instance->sigma, instance->steps * instance->windows}}};
  accounting::CalibrationOptions search;
  search.relative_tolerance = 1e-3;  // each evaluation runs every allocation bound (up to seconds)
  const accounting::CalibrationResult r = accounting::CalibrateSigma(
      accounting::AccountantKind::kRandomAllocation, FacadeOptions(*instance), client, epsilon, delta, search);
  if (!r.found) {
    throw ConfigError("dp.epsilon", "no sigma up to " + std::to_string(static_cast<int>(search.sigma_max)) +
                                        " reaches the target epsilon");
  }
  return r.sigma;
}

}  // namespace asyncdp::sim::checkin
