#include "core/accounting/running_epsilon.h"

#include <string>

#include "core/error.h"

namespace asyncdp::accounting {

RunningEpsilon::RunningEpsilon(const DpEvent& whole, AccountantKind kind, double delta,
                               const AccountingPrecision& precision)
    : kind_(kind), delta_(delta), precision_(precision) {
  if (!(delta > 0.0 && delta < 1.0)) throw ConfigError("delta", "must be in (0, 1), got " + std::to_string(delta));
  precision_.pld.compute_lower_bound = false;  // the running epsilon is the upper bound
  if (kind != AccountantKind::kPld || !ApplicableLimitation(whole, kind).empty()) return;
  const LoweredEvent lowered = Lower(whole);
  // Shuffled rounds are reduced to epochs first (Accountant::AccountedSchedule): those go through Account.
  if (!lowered.ok || lowered.noise != NoiseModel::kGaussian ||
      (lowered.sampling != SamplingModel::kPoisson && lowered.sampling != SamplingModel::kFixedSizeWithoutReplacement)) {
    return;
  }
  ValidateSchedule(lowered.schedule);
  sampling_ = lowered.sampling;
  try {
    composer_.emplace(lowered.schedule, sampling_, precision_.pld);
  } catch (const ConfigError&) {
    composer_.reset();  // beyond the PLD's limits: Account says so for each part
  }
}

double RunningEpsilon::Of(const DpEvent& part) const {
  if (composer_) {
    const LoweredEvent lowered = Lower(part);
    if (lowered.ok && lowered.noise == NoiseModel::kGaussian && lowered.sampling == sampling_) {
      if (const ComposedPld* composed = composer_->Compose(lowered.schedule, workspace_)) {
        return composed->EpsilonUpper(delta_);
      }
    }
  }
  AccountQuery query;
  query.delta = delta_;
  query.precision = precision_;
  query.pld_lower_bound = false;
  const Accounted a = Account(part, kind_, query);
  if (!a.available) throw ConfigError("dp.accountant", a.reason);
  return a.result.epsilon;
}

}  // namespace asyncdp::accounting
