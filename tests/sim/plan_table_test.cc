// PlanTable (sim/plan_table.h) stores each distinct plan once; it must read exactly like the list of every
// client's plan it replaces.
#include "sim/plan_table.h"

#include <gtest/gtest.h>

#include <vector>

#include "sim/config.h"
#include "sim/round_plan.h"

namespace asyncdp::sim {
namespace {

TEST(PlanTable, ClientsWithEqualPlansShareOneCopy) {
  ScheduleConfig schedule;
  schedule.sample_size = 2;
  schedule.rounds = 7;
  std::vector<RoundPlan> list;
  for (const int64_t n : {10, 10, 20, 10, 20, 30}) list.push_back(MakeRoundPlan(schedule, n));
  const PlanTable table(list);
  ASSERT_EQ(table.size(), list.size());
  EXPECT_EQ(table.distinct(), 3u);
  size_t c = 0;
  for (const RoundPlan& plan : table) EXPECT_EQ(plan, list[c++]);
  EXPECT_EQ(c, list.size());
  EXPECT_EQ(&table[0], &table[1]);  // shared
  EXPECT_EQ(&table[0], &table[3]);
  EXPECT_NE(&table[0], &table[2]);
  EXPECT_EQ(table.back().n_records, 30);
}

TEST(PlanTable, AChangeForEveryClientIsMadeOncePerDistinctPlanAndKeepsTheSharing) {
  ScheduleConfig schedule;
  schedule.sample_size = 1;
  schedule.rounds = 4;
  PlanTable table;
  for (const int64_t n : {5, 6, 5}) table.push_back(MakeRoundPlan(schedule, n));
  int changes = 0;
  table.ForEachDistinct([&](RoundPlan& plan) {
    SetNoise(plan, 1.5);
    ++changes;
  });
  EXPECT_EQ(changes, 2);
  for (const RoundPlan& plan : table) EXPECT_EQ(plan.noise_multipliers, std::vector<double>(4, 1.5));
  // A plan appended after the change shares with an equal changed plan, not with the stale one.
  RoundPlan later = MakeRoundPlan(schedule, 5);
  SetNoise(later, 1.5);
  table.push_back(later);
  EXPECT_EQ(table.distinct(), 2u);
  EXPECT_EQ(&table[3], &table[0]);
  RoundPlan other = MakeRoundPlan(schedule, 5);  // σ not set: a different plan
  table.push_back(other);
  EXPECT_EQ(table.distinct(), 3u);
  EXPECT_EQ(table[4], other);
}

}  // namespace
}  // namespace asyncdp::sim
