#include "sim/runtime/compute_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace asyncdp::sim {
namespace {

TEST(ComputePool, WaitSeesEveryWriteOfItsJob) {
  // Plain (non-atomic) writes in the job, read after Wait: correct only if Wait synchronises with the
  // worker (ThreadSanitizer checks this in scripts/tsan-check.sh).
  constexpr int64_t kJobs = 8;
  std::vector<std::vector<int64_t>> out(kJobs, std::vector<int64_t>(64, 0));
  std::vector<int64_t> generation(kJobs, 0);
  ComputePool pool(2, kJobs, [&](int64_t job, int) {
    for (auto& x : out[job]) x = generation[job] * 1000 + job;
  });
  for (int64_t g = 1; g <= 300; ++g) {
    for (int64_t j = 0; j < kJobs; ++j) {
      generation[j] = g;
      pool.Submit(j);
    }
    for (int64_t j = kJobs - 1; j >= 0; --j) {
      pool.Wait(j);
      for (int64_t x : out[j]) ASSERT_EQ(x, g * 1000 + j);
    }
  }
}

TEST(ComputePool, JobsRunExactlyOnceWhetherAWorkerOrTheWaiterRunsThem) {
  constexpr int64_t kJobs = 64;
  std::vector<std::atomic<int>> runs(kJobs);
  ComputePool pool(1, kJobs, [&](int64_t job, int) { runs[job].fetch_add(1); });
  for (int round = 0; round < 50; ++round) {
    for (int64_t j = 0; j < kJobs; ++j) pool.Submit(j);
    for (int64_t j = 0; j < kJobs; ++j) pool.Wait(j);  // most are still queued: run by the waiter
  }
  for (int64_t j = 0; j < kJobs; ++j) EXPECT_EQ(runs[j].load(), 50) << "job " << j;
}

// The runtimes index per-thread scratch by the thread number a job gets: it must be in [0, threads] and
// never be given to two jobs running at the same time.
TEST(ComputePool, AThreadNumberRunsOneJobAtATime) {
  constexpr int kThreads = 3;
  constexpr int64_t kJobs = 16;
  std::vector<std::atomic<int>> busy(kThreads + 1);
  std::vector<std::atomic<int64_t>> used(kThreads + 1);
  std::atomic<int> out_of_range{0}, overlaps{0};
  ComputePool pool(kThreads, kJobs, [&](int64_t, int thread) {
    if (thread < 0 || thread > kThreads) {
      out_of_range.fetch_add(1);
      return;
    }
    if (busy[thread].exchange(1) != 0) overlaps.fetch_add(1);
    used[thread].fetch_add(1);
    volatile double x = 0;
    for (int i = 0; i < 2000; ++i) x = x + i;  // long enough for jobs to overlap across threads
    busy[thread].store(0);
  });
  for (int round = 0; round < 200; ++round) {
    for (int64_t j = 0; j < kJobs; ++j) pool.Submit(j);
    for (int64_t j = 0; j < kJobs; ++j) pool.Wait(j);
  }
  EXPECT_EQ(out_of_range.load(), 0);
  EXPECT_EQ(overlaps.load(), 0);
  int64_t total = 0;
  for (const auto& u : used) total += u.load();
  EXPECT_EQ(total, 200 * kJobs);
  EXPECT_GT(used[0].load(), 0);  // the waiter runs jobs too, as thread 0
}

TEST(ComputePool, DestroysCleanlyWithIdleWorkers) {
  for (int i = 0; i < 20; ++i) {
    ComputePool pool(3, 4, [](int64_t, int) {});
    pool.Submit(2);
    pool.Wait(2);
  }
}

}  // namespace
}  // namespace asyncdp::sim
