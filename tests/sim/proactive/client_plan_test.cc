// PlanProactiveClient and the held-out split, where a proactive client's plans are decided before training
// (sim/proactive/client_plan.h): the same plans whether a process plans from the loaded shard or an MPI rank
// from N_c alone, the checks' share taken from the budget first, and too small a held-out set refused.
#include "sim/proactive/client_plan.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/sampling.h"
#include "sim/config.h"

namespace asyncdp::sim {
namespace {

TEST(HeldOutRows, TakesTheCeilingOfTheFractionAndLeavesARowOnEachSide) {
  EXPECT_EQ(HeldOutRows(0.1, 1000), 100);
  EXPECT_EQ(HeldOutRows(0.1, 1001), 101);  // ceil(100.1)
  EXPECT_EQ(HeldOutRows(0.0, 50), 1);      // at least one row held out
  EXPECT_EQ(HeldOutRows(1.0, 50), 49);     // at least one row to train on
  EXPECT_EQ(CheckedHeldOutRows(0.02, 1000), 20);
  // Fewer than kMinHoldoutRows: an accuracy check would move in steps of 1/held.
  try {
    CheckedHeldOutRows(0.019, 1000);
    FAIL() << "19 held-out rows accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where(), "targets.holdout_fraction");
  }
  EXPECT_THROW(CheckedHeldOutRows(0.5, 1), ConfigError);
}

TEST(PlanProactiveClient, PlansTheChecksFirstAndThePhasesForTheRest) {
  TrainConfig config;
  config.targets.accuracy = 0.8;
  config.targets.epsilon = 2.0;
  config.targets.client_accuracy = {0.76, 0.9};
  config.targets.client_epsilon = {2.0, 1.0};
  config.proactive.phase_sigmas = {8.0, 6.0};
  config.proactive.phase_epochs = {0.2, 0.5};
  config.proactive.phase_sizing = PhaseSizing::kE1;
  const ProactiveOptions options = ResolveProactiveOptions(config, SamplingModel::kPoisson);
  const int64_t rows = 6513, held = CheckedHeldOutRows(options.holdout_fraction, rows);
  for (int64_t id : {0, 1}) {
    SCOPED_TRACE(id);
    const ProactiveClientPlan p = PlanProactiveClient(config, options, id, rows - held, held);
    const ClientTarget target = ResolveClientTarget(config, id, rows - held);
    EXPECT_EQ(p.target.epsilon, target.epsilon);
    EXPECT_EQ(p.target.accuracy, target.accuracy);
    const CheckPlan checks = PlanChecks(config.targets, 2, held, target.epsilon, target.delta);
    EXPECT_EQ(p.checks.epsilon, checks.epsilon);
    EXPECT_GT(p.checks.epsilon, 0.0);  // private checks by default: they cost budget
    ClientTarget rest = target;
    rest.epsilon -= checks.epsilon;
    rest.delta -= checks.delta;
    const ClientPhasePlan phases = PlanClientPhases(options, rest, rows - held);
    EXPECT_EQ(p.phases.plan.sample_sizes, phases.plan.sample_sizes);
    EXPECT_EQ(p.phases.plan.noise_multipliers, phases.plan.noise_multipliers);
    EXPECT_EQ(p.phases.budget_rounds, phases.budget_rounds);
    EXPECT_EQ(p.phases.admitted, phases.admitted);
  }
}

}  // namespace
}  // namespace asyncdp::sim
