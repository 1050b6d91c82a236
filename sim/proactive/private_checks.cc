#include "sim/proactive/private_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/accounting/accountant.h"
#include "core/accounting/make_accountant.h"
#include "core/error.h"

namespace asyncdp::sim {

double ChecksEpsilon(double sigma, int64_t checks, double delta) {
  if (checks <= 0) return 0.0;
  // q = 1: the plain Gaussian mechanism (no subsampling), composed `checks` times.
  const accounting::Schedule schedule = {{1.0, sigma, checks}};
  return accounting::AccountSchedule(accounting::AccountantKind::kPld, schedule, delta).epsilon;
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
    // The smallest σ (to 1e-6 relative) whose planned checks cost at most the share of ε_target: ε falls
    // as σ grows, so bisect on log σ between a σ that costs too much and one that does not.
    const double budget = kCheckBudgetShare * epsilon_target;
    double lo = 1e-3, hi = 1e7;
    if (ChecksEpsilon(hi, plan.planned, plan.delta) > budget) {
      throw ConfigError("targets.epsilon", fmt::format("no noise level lets {} accuracy checks cost at most {:.3g} "
                                                       "(5% of epsilon_target)", plan.planned, budget));
    }
    while (hi / lo > 1.0 + 1e-6) {
      const double mid = std::sqrt(lo * hi);
      (ChecksEpsilon(mid, plan.planned, plan.delta) > budget ? lo : hi) = mid;
    }
    plan.sigma = hi;
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
