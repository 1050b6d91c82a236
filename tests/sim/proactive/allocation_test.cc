// Budget allocation over rounds at a fixed (ε_total, δ) (docs/theory.md, "Budget allocation"): uniform,
// decreasing noise, increasing noise (dp.sigma_schedule) and the adaptive phases (proactive calibrated
// sizing) are each calibrated so the whole plan spends ε_total under PLD. The check recomposes the rounds
// each client actually ran with a fresh PLD accountant.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/accounting/accountant.h"
#include "tests/core/accounting/account_schedule.h"
#include "sim/train.h"
#include "tests/sim/sim_test_util.h"

namespace asyncdp::sim {
namespace {

constexpr double kEpsilonTotal = 1.0;

TrainConfig Base() {
  TrainConfig c = testing::SmallA9aConfig(2, 500);
  c.dp.sigma = 0.0;
  c.dp.accountant = RunAccountant::kPld;
  c.schedule.sample_size = 25;
  c.schedule.epochs = 2.0;
  c.eval.points = 1;
  return c;
}

// PLD ε of every client's rounds as run, at the run's δ.
std::vector<double> FinalPldEpsilon(const TrainResult& r) {
  const Experiment& e = *r.experiment;
  std::vector<double> out;
  for (size_t k = 0; k < e.plans.size(); ++k) {
    const int64_t rounds = r.summary["rounds_per_client"][k].get<int64_t>();
    const double delta = e.proactive.options.enabled ? e.proactive.targets[k].delta : e.privacy.delta;
    out.push_back(accounting::AccountSchedule(accounting::AccountantKind::kPld,
                                              e.privacy.ClientSchedule(e.plans[k], rounds), delta)
                      .epsilon);
  }
  return out;
}

TEST(Allocation, EveryStrategySpendsExactlyTheSameEpsilonTotalUnderPld) {
  const std::vector<std::pair<std::string, std::vector<double>>> schedules = {
      {"uniform", {}}, {"decreasing_noise", {2.0, 1.5, 1.0}}, {"increasing_noise", {1.0, 1.5, 2.0}}};
  for (const auto& [name, multipliers] : schedules) {
    TrainConfig c = Base();
    c.dp.epsilon = kEpsilonTotal;
    c.dp.sigma_schedule = multipliers;
    const TrainResult r = RunTraining(c, {.progress = false});
    const Experiment& e = *r.experiment;
    if (!multipliers.empty()) {  // the profile is really applied: first and last rounds differ as asked
      const auto& sigmas = e.plans[0].noise_multipliers;
      EXPECT_NEAR(sigmas.front() / sigmas.back(), multipliers.front() / multipliers.back(), 1e-12) << name;
    }
    for (double eps : FinalPldEpsilon(r)) EXPECT_NEAR(eps, kEpsilonTotal, 0.01 * kEpsilonTotal) << name;
  }
  // Adaptive phases: σ_j = c·(2, 1.5, 1) with c calibrated for the whole plan; an unreachable accuracy
  // target makes every phase run, so the whole budget is spent.
  TrainConfig c = Base();
  testing::LeaveScheduleToPhases(c);
  c.schedule.sample_size = 25;  // calibrated phases run at the schedule's sample size
  c.targets.accuracy = 1.0;
  c.targets.epsilon = kEpsilonTotal;
  c.targets.delta = 1.0 / 400.0;  // the run's δ: 1/N_c of the 400 training rows
  c.targets.enforce = EnforceMode::kDpAccountant;
  // Exact checks: an unreachable target must stay unreachable (a private check's noise could "reach" 1.0),
  // and the whole budget goes to the phases.
  c.targets.holdout_public = true;
  c.proactive.phase_sizing = PhaseSizing::kCalibrated;
  c.proactive.phase_sigmas = {2.0, 1.5, 1.0};
  c.proactive.phase_epochs = {2.0 / 3, 2.0 / 3, 2.0 / 3};
  const TrainResult r = RunTraining(c, {.progress = false});
  for (double eps : FinalPldEpsilon(r)) EXPECT_NEAR(eps, kEpsilonTotal, 0.01 * kEpsilonTotal) << "adaptive";
}

}  // namespace
}  // namespace asyncdp::sim
