// The a-priori plan of Algorithm 2 (Setup; docs/theory.md §3), where a client's {s_i}, q_i and σ_i are
// decided: MakeRoundPlan, SampleSizeAt and SetNoise (sim/round_plan.h). Every expectation is written out by
// hand from the definitions (T from schedule.rounds, or the smallest T with Σ s_i ≥ K; K = iterations or
// round(epochs·N_c), at least 1; linear s_i = round(s_0 + slope·i) ≥ 1; list sizes repeat the last), not
// computed with the functions under test. The step sizes η̄_i have their own test (round_step_test.cc).
#include "sim/round_plan.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/error.h"
#include "sim/config.h"

namespace asyncdp::sim {
namespace {

ScheduleConfig Constant(int64_t s) {
  ScheduleConfig schedule;
  schedule.sample_sizes = SampleSizes::kConstant;
  schedule.sample_size = s;
  return schedule;
}

TEST(MakeRoundPlan, EpochsSetKAsEpochsTimesTheClientsRecords) {
  ScheduleConfig schedule = Constant(10);
  schedule.epochs = 2.0;
  const RoundPlan plan = MakeRoundPlan(schedule, 100);  // K = 200 = 20 rounds of 10
  EXPECT_EQ(plan.n_records, 100);
  EXPECT_EQ(plan.sample_sizes, std::vector<int64_t>(20, 10));
  EXPECT_EQ(plan.iterations(), 200);
  EXPECT_EQ(plan.max_sample_size(), 10);
  for (int64_t i = 0; i < plan.rounds(); ++i) EXPECT_DOUBLE_EQ(plan.rate(i), 0.1) << i;
  // Noise comes later (SetNoise): a new plan has σ_i = 0 for every round.
  EXPECT_EQ(plan.noise_multipliers, std::vector<double>(20, 0.0));
  EXPECT_EQ(plan.step_sizes.size(), 20u);
}

TEST(MakeRoundPlan, TIsTheSmallestRoundCountReachingK) {
  ScheduleConfig schedule = Constant(30);
  schedule.epochs = 1.0;  // K = 100: 3 rounds give 90, 4 give 120
  EXPECT_EQ(MakeRoundPlan(schedule, 100).rounds(), 4);
  schedule.epochs = 0.9;  // K = 90: exactly 3 rounds
  EXPECT_EQ(MakeRoundPlan(schedule, 100).rounds(), 3);
  // K = round(epochs·N_c), half away from zero: 0.015 · 100 = 1.5 → 2 gradients, two rounds of 1.
  ScheduleConfig one = Constant(1);
  one.epochs = 0.015;
  EXPECT_EQ(MakeRoundPlan(one, 100).rounds(), 2);
  // K is at least 1: a vanishing epoch count still plans one round.
  one.epochs = 1e-9;
  EXPECT_EQ(MakeRoundPlan(one, 100).rounds(), 1);
}

TEST(MakeRoundPlan, IterationsOverrideEpochsAndRoundsOverrideBoth) {
  ScheduleConfig schedule = Constant(10);
  schedule.epochs = 50.0;
  schedule.iterations = 55;  // K = 55: 6 rounds (60 gradients), whatever the epochs say
  EXPECT_EQ(MakeRoundPlan(schedule, 1000).rounds(), 6);
  schedule.rounds = 7;  // T given: K is not consulted
  const RoundPlan plan = MakeRoundPlan(schedule, 1000);
  EXPECT_EQ(plan.rounds(), 7);
  EXPECT_EQ(plan.iterations(), 70);
}

TEST(SampleSizeAt, LinearSizesRoundToNearestAndNeverFallBelowOne) {
  ScheduleConfig schedule;
  schedule.sample_sizes = SampleSizes::kLinear;
  schedule.sample_size = 4;
  schedule.sample_size_slope = 0.5;  // 4, 4.5, 5, 5.5, 6 → 4, 5, 5, 6, 6 (halves away from zero)
  const std::vector<int64_t> growing = {4, 5, 5, 6, 6};
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(SampleSizeAt(schedule, i), growing[size_t(i)]) << i;
  schedule.sample_size = 5;
  schedule.sample_size_slope = -2.0;  // 5, 3, 1, -1, -3 → 5, 3, 1, 1, 1
  const std::vector<int64_t> shrinking = {5, 3, 1, 1, 1};
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(SampleSizeAt(schedule, i), shrinking[size_t(i)]) << i;
  // The plan runs exactly these sizes: T = 4 reaches K = 10 (5 + 3 + 1 + 1).
  schedule.iterations = 10;
  EXPECT_EQ(MakeRoundPlan(schedule, 100).sample_sizes, (std::vector<int64_t>{5, 3, 1, 1}));
}

TEST(SampleSizeAt, AListRepeatsItsLastSize) {
  ScheduleConfig schedule;
  schedule.sample_sizes = SampleSizes::kList;
  schedule.sample_size_list = {3, 5, 8};
  schedule.rounds = 5;
  EXPECT_EQ(SampleSizeAt(schedule, 0), 3);
  EXPECT_EQ(SampleSizeAt(schedule, 2), 8);
  EXPECT_EQ(SampleSizeAt(schedule, 1000), 8);
  const RoundPlan plan = MakeRoundPlan(schedule, 40);
  EXPECT_EQ(plan.sample_sizes, (std::vector<int64_t>{3, 5, 8, 8, 8}));
  EXPECT_EQ(plan.max_sample_size(), 8);
  EXPECT_DOUBLE_EQ(plan.rate(0), 3.0 / 40.0);
  EXPECT_DOUBLE_EQ(plan.rate(4), 8.0 / 40.0);
}

TEST(MakeRoundPlan, ASampleLargerThanTheClientsRecordsIsRefusedWithItsKey) {
  // Sampling draws from the client's own records: s > N_c cannot be drawn, and a clamped s would run and
  // account something other than the configuration says.
  ScheduleConfig schedule = Constant(11);
  schedule.rounds = 3;
  try {
    MakeRoundPlan(schedule, 10);
    FAIL() << "s = 11 > N_c = 10 accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where(), "schedule.sample_size");
  }
  EXPECT_EQ(MakeRoundPlan(schedule, 11).sample_sizes, (std::vector<int64_t>{11, 11, 11}));  // s = N_c: q = 1
  ScheduleConfig list;
  list.sample_sizes = SampleSizes::kList;
  list.sample_size_list = {2, 20};
  list.rounds = 2;
  try {
    MakeRoundPlan(list, 10);
    FAIL() << "round 1's s = 20 > N_c = 10 accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where(), "schedule.sample_size_list");
  }
}

TEST(RoundPlanRate, RandomAllocationFixesEveryRoundsRate) {
  ScheduleConfig schedule = Constant(10);
  schedule.rounds = 4;
  RoundPlan plan = MakeRoundPlan(schedule, 100);
  plan.allocation_rate = 0.25;  // k/m of random allocation, whatever s_i is
  for (int64_t i = 0; i < plan.rounds(); ++i) EXPECT_DOUBLE_EQ(plan.rate(i), 0.25) << i;
}

TEST(SetNoise, AConstantSigmaOrEqualPartsOfTheRounds) {
  ScheduleConfig schedule = Constant(1);
  schedule.rounds = 10;
  RoundPlan plan = MakeRoundPlan(schedule, 100);
  SetNoise(plan, 4.0);
  EXPECT_EQ(plan.noise_multipliers, std::vector<double>(10, 4.0));
  // J = 2 parts of T = 10 rounds: rounds 0–4 at σ·1, 5–9 at σ·2.
  SetNoise(plan, 4.0, {1.0, 2.0});
  EXPECT_EQ(plan.noise_multipliers, (std::vector<double>{4, 4, 4, 4, 4, 8, 8, 8, 8, 8}));
  // J = 3 parts of T = 5: part = floor(3i/5) = 0, 0, 1, 1, 2.
  schedule.rounds = 5;
  RoundPlan five = MakeRoundPlan(schedule, 100);
  SetNoise(five, 2.0, {1.0, 1.5, 3.0});
  EXPECT_EQ(five.noise_multipliers, (std::vector<double>{2, 2, 3, 3, 6}));
  // J = T: a per-round list.
  SetNoise(five, 1.0, {5.0, 4.0, 3.0, 2.0, 1.0});
  EXPECT_EQ(five.noise_multipliers, (std::vector<double>{5, 4, 3, 2, 1}));
  // No multipliers: the constant σ.
  SetNoise(five, 3.0, {});
  EXPECT_EQ(five.noise_multipliers, std::vector<double>(5, 3.0));
}

}  // namespace
}  // namespace asyncdp::sim
