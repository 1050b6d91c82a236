#include "sim/proactive/private_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/accounting/account.h"
#include "core/accounting/dp_event.h"
#include "core/error.h"

namespace asyncdp::sim {

double ChecksEpsilon(double sigma, int64_t checks, double delta) {
  if (checks <= 0) return 0.0;
  // The plain Gaussian mechanism (no subsampling), composed `checks` times.
  accounting::AccountQuery query;
  query.delta = delta;
  const accounting::Accounted a =
      accounting::Account(*accounting::SelfComposed(accounting::Gaussian(sigma), checks), accounting::AccountantKind::kPld, query);
  if (!a.available) throw ConfigError("targets.check_sigma", a.reason);
  return a.result.epsilon;
}

CheckPlan PlanChecks(const TargetsConfig& targets, int64_t phases, int64_t holdout_rows, double epsilon_target,
                     double delta_target) {
  CheckPlan plan;
  plan.private_checks = !targets.holdout_public;
  plan.phase_checks = phases;
  plan.paused_checks = targets.paused_checks;
  plan.planned = plan.phase_checks + plan.paused_checks;
  plan.sensitivity = 1.0 / static_cast<double>(std::max<int64_t>(1, holdout_rows - 1));
  if (!plan.private_checks) return plan;
  plan.delta = kCheckBudgetShare * delta_target;
  if (targets.check_sigma > 0.0) {
    plan.sigma = targets.check_sigma;
  } else {
    // The smallest σ whose planned checks cost at most the share of ε_target: the one calibrator
    // (core/accounting/account.h) on the checks' event, the Gaussian composed `planned` times.
    const double budget = kCheckBudgetShare * epsilon_target;
    const int64_t checks = plan.planned;
    const accounting::CalibrationResult r = accounting::Calibrate(
        [checks](double sigma) {
          return std::vector<accounting::DpEventPtr>{accounting::SelfComposed(accounting::Gaussian(sigma), checks)};
        },
        budget, plan.delta, accounting::AccountantKind::kPld);
    if (!r.found) {
      throw ConfigError("targets.epsilon", fmt::format("no noise level lets {} accuracy checks cost at most {:.3g} "
                                                       "(5% of epsilon_target)", plan.planned, budget));
    }
    plan.sigma = r.sigma;
  }
  plan.epsilon = ChecksEpsilon(plan.sigma, plan.planned, plan.delta);
  if (!(plan.epsilon < epsilon_target)) {
    throw ConfigError("targets.check_sigma",
                      fmt::format("= {} makes the {} planned accuracy checks cost epsilon = {:.4g}, not less than "
                                  "the client's epsilon_target = {}: raise it, or 0 to calibrate",
                                  targets.check_sigma, plan.planned, plan.epsilon, epsilon_target));
  }
  return plan;
}

void SetCheckStride(CheckPlan& plan, int64_t longest_plan_rounds) {
  const int64_t checks = std::max<int64_t>(1, plan.paused_checks);
  plan.stride = std::max<int64_t>(1, (longest_plan_rounds + checks - 1) / checks);
}

}  // namespace asyncdp::sim
