// RoundStep (sim/round_plan.h): the one rule for a round's step size η̄_i, docs/theory.md §2 — η(t_i),
// divided by s_i when updates are averaged, scaled by cap/s_i above schedule.step_cap_sample_size.
#include <gtest/gtest.h>

#include <cmath>

#include "core/step_size.h"
#include "sim/config.h"
#include "sim/round_plan.h"

namespace asyncdp::sim {
namespace {

StepSizeOptions Step(const ScheduleConfig& schedule) {
  StepSizeOptions step;
  step.schedule = schedule.step_rule;
  step.eta0 = schedule.eta0;
  step.beta = schedule.beta;
  return step;
}

TEST(RoundStep, IsTheScheduleAtTWithoutCapOrAveraging) {
  ScheduleConfig schedule;
  schedule.step_rule = StepSizeSchedule::kInverseSqrt;
  schedule.eta0 = 0.1;
  schedule.beta = 0.01;
  for (int64_t t : {0, 1, 100, 360000}) {
    EXPECT_DOUBLE_EQ(RoundStep(schedule, Step(schedule), t, 2159), 0.1 / (1 + 0.01 * std::sqrt(double(t)))) << t;
  }
}

TEST(RoundStep, ScalesRoundsAboveTheCapByCapOverS) {
  ScheduleConfig schedule;
  schedule.eta0 = 0.1;
  schedule.beta = 0.0;
  schedule.step_cap_sample_size = 543;
  const StepSizeOptions step = Step(schedule);
  EXPECT_DOUBLE_EQ(RoundStep(schedule, step, 0, 370), 0.1);
  EXPECT_DOUBLE_EQ(RoundStep(schedule, step, 0, 543), 0.1);  // at the cap: unchanged
  EXPECT_DOUBLE_EQ(RoundStep(schedule, step, 0, 2159), 0.1 * 543 / 2159);
  // η·s, the largest distance a summed round can move the model per unit of C, never exceeds η0·cap.
  for (int64_t s : {544, 889, 1168, 2159}) EXPECT_NEAR(RoundStep(schedule, step, 0, s) * double(s), 0.1 * 543, 1e-12);
  schedule.divide_round_update_by_sample_size = true;  // both: averaged, then capped
  EXPECT_DOUBLE_EQ(RoundStep(schedule, step, 0, 1000), 0.1 / 1000 * 543 / 1000);
}

TEST(RoundStep, EveryRoundOfAPlanFollowsIt) {
  ScheduleConfig schedule;
  schedule.sample_sizes = SampleSizes::kList;
  schedule.sample_size_list = {100, 1000, 300};
  schedule.rounds = 5;
  schedule.step_cap_sample_size = 500;
  const RoundPlan plan = MakeRoundPlan(schedule, 10000);
  ASSERT_EQ(plan.rounds(), 5);
  int64_t t = 0;
  for (int64_t i = 0; i < plan.rounds(); ++i) {
    const int64_t s = plan.sample_sizes[size_t(i)];
    EXPECT_DOUBLE_EQ(plan.step_sizes[size_t(i)], RoundStep(schedule, Step(schedule), t, s)) << i;
    t += s;
  }
  EXPECT_DOUBLE_EQ(plan.step_sizes[1], 0.1 / (1 + 0.001 * 100) * 500 / 1000);
}

}  // namespace
}  // namespace asyncdp::sim
