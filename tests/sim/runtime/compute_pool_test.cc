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
  ComputePool pool(2, kJobs, [&](int64_t job) {
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
  ComputePool pool(1, kJobs, [&](int64_t job) { runs[job].fetch_add(1); });
  for (int round = 0; round < 50; ++round) {
    for (int64_t j = 0; j < kJobs; ++j) pool.Submit(j);
    for (int64_t j = 0; j < kJobs; ++j) pool.Wait(j);  // most are still queued: run by the waiter
  }
  for (int64_t j = 0; j < kJobs; ++j) EXPECT_EQ(runs[j].load(), 50) << "job " << j;
}

TEST(ComputePool, DestroysCleanlyWithIdleWorkers) {
  for (int i = 0; i < 20; ++i) {
    ComputePool pool(3, 4, [](int64_t) {});
    pool.Submit(2);
    pool.Wait(2);
  }
}

}  // namespace
}  // namespace asyncdp::sim
