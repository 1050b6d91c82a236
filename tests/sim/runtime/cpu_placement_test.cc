#include "sim/runtime/cpu_placement.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <set>
#include <thread>
#include <vector>

namespace asyncdp::sim {
namespace {

std::vector<int> AllowedCpus() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  EXPECT_EQ(sched_getaffinity(0, sizeof(mask), &mask), 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &mask)) cpus.push_back(cpu);
  }
  return cpus;
}

TEST(CpuPlacementTest, WorkersTakeTheListedCpusInOrderAndTheRestAreLeftToTheKernel) {
  const CpuPlacement placement({3, 1, 2});
  EXPECT_EQ(placement.CpuFor(0), 3);  // the creator's
  EXPECT_EQ(placement.CpuFor(1), 1);
  EXPECT_EQ(placement.CpuFor(2), 2);
  EXPECT_EQ(placement.CpuFor(3), -1);  // more workers than CPUs
  EXPECT_EQ(placement.CpuFor(-1), -1);
  EXPECT_EQ(CpuPlacement({5}).CpuFor(1), -1);  // one CPU: nothing to spread over
  EXPECT_EQ(CpuPlacement({}).CpuFor(0), -1);
  EXPECT_FALSE(CpuPlacement({5}).MoveCallingThread(1));
}

TEST(CpuPlacementTest, TheCallingThreadsListIsItsAffinityMaskWithItsOwnCpuFirst) {
  std::vector<int> listed;
  bool stayed = false;  // on one CPU across the read (the kernel may move a thread at any time)
  int current = -1;
  std::thread([&] {
    for (int attempt = 0; attempt < 100 && !stayed; ++attempt) {
      current = sched_getcpu();
      listed = CpuPlacement::OfCallingThread().cpus();
      stayed = sched_getcpu() == current;
    }
  }).join();
  std::vector<int> sorted = listed;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, AllowedCpus());
  EXPECT_EQ(std::set<int>(listed.begin(), listed.end()).size(), listed.size());
  ASSERT_TRUE(stayed);
  EXPECT_EQ(listed.front(), current);
}

TEST(CpuPlacementTest, AMovedThreadKeepsTheMaskItHadAndIsNotLeftBound) {
  const std::vector<int> allowed = AllowedCpus();
  if (allowed.size() < 2) GTEST_SKIP() << "one CPU allowed: nothing to move to";
  const CpuPlacement placement({allowed[0], allowed[1]});
  bool moved = false;
  std::vector<int> after;
  std::thread([&] {
    moved = placement.MoveCallingThread(1);
    after = AllowedCpus();
  }).join();
  EXPECT_TRUE(moved);
  EXPECT_EQ(after, allowed);
}

TEST(CpuPlacementTest, AThreadAllowedOneCpuIsNotMoved) {
  const std::vector<int> allowed = AllowedCpus();
  bool moved = true;
  int listed = 0;
  std::thread([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(allowed.front(), &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
    const CpuPlacement placement = CpuPlacement::OfCallingThread();
    listed = static_cast<int>(placement.cpus().size());
    moved = placement.MoveCallingThread(1);
  }).join();
  EXPECT_EQ(listed, 1);
  EXPECT_FALSE(moved);
}

}  // namespace
}  // namespace asyncdp::sim
