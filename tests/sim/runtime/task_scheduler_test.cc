// The task pool under the threads runtime: a free worker never leaves a task waiting behind a busy one
// (stealing), a task's steps never overlap, and Finish ends every wait.
#include "sim/runtime/task_scheduler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace asyncdp::sim {
namespace {

using Next = TaskScheduler::Next;

// Task 0 blocks its worker until every other task has finished all its steps. The other tasks start
// queued on both workers (task 2 behind task 0 on worker 0), so they can only finish if the free worker
// takes them over. Without stealing this never ends; the guard turns that into a failure.
TEST(TaskScheduler, AFreeWorkerTakesOverTasksQueuedBehindABusyOne) {
  constexpr int64_t kTasks = 6;
  constexpr int kSteps = 200;
  std::atomic<int64_t> finished_tasks{0};
  std::atomic<bool> gave_up{false};
  std::vector<int> steps(kTasks, 0);                  // each written by its own task's steps only
  std::vector<std::atomic<int>> running(kTasks);      // > 1 would mean two workers ran one task at once
  std::atomic<bool> overlap{false};
  TaskScheduler* self = nullptr;
  TaskScheduler::Hooks hooks;
  hooks.run = [&](int, int64_t task) -> TaskScheduler::Step {
    if (running[task].fetch_add(1) != 0) overlap = true;
    TaskScheduler::Step step{Next::kYield};
    if (task == 0) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (finished_tasks.load() < kTasks - 1) {
        if (std::chrono::steady_clock::now() > deadline) {
          gave_up = true;
          break;
        }
        std::this_thread::yield();
      }
      step.next = Next::kExit;
    } else if (++steps[task] == kSteps) {
      finished_tasks.fetch_add(1);
      step.next = Next::kExit;
    }
    running[task].fetch_sub(1);
    return step;
  };
  hooks.recheck = [](int64_t) {};
  hooks.quiescent = [&] { self->Finish(); };  // every task has exited
  TaskScheduler scheduler(kTasks, hooks);
  self = &scheduler;
  scheduler.Run(2, "test.workers");
  EXPECT_FALSE(gave_up) << "tasks queued behind the blocked worker were never taken over";
  EXPECT_FALSE(overlap);
  for (int64_t task = 1; task < kTasks; ++task) EXPECT_EQ(steps[task], kSteps) << "task " << task;
}

// Tasks go idle and are woken from other tasks' steps (as clients are by a broadcast); with more tasks
// than workers and every wake racing with a worker going to sleep, every wake is kept.
TEST(TaskScheduler, WakesFromOtherTasksAreNeverLost) {
  constexpr int64_t kTasks = 5;
  constexpr int kRounds = 2000;
  std::vector<std::atomic<int>> pending(kTasks);
  std::vector<int> done(kTasks, 0);
  std::atomic<int64_t> exited{0};
  TaskScheduler* self = nullptr;
  TaskScheduler::Hooks hooks;
  hooks.run = [&](int, int64_t task) -> TaskScheduler::Step {
    // Consume this task's wake-ups; each one passes a token to the next task (a ring).
    while (pending[task].load() > 0) {
      pending[task].fetch_sub(1);
      if (++done[task] == kRounds) {
        exited.fetch_add(1);
        return {Next::kExit};
      }
      const int64_t next = (task + 1) % kTasks;
      pending[next].fetch_add(1);
      self->Wake(next);
    }
    return {Next::kIdle};
  };
  hooks.recheck = [&](int64_t task) {
    if (pending[task].load() > 0) self->Wake(task);
  };
  hooks.quiescent = [&] { self->Finish(); };
  for (auto& p : pending) p = 1;  // every task starts with one token
  TaskScheduler scheduler(kTasks, hooks);
  self = &scheduler;
  scheduler.Run(2, "test.workers");
  // Tokens circulate until every task has taken kRounds of them; quiescence (not a lost wake) ends it.
  EXPECT_EQ(exited.load(), kTasks);
  for (int64_t task = 0; task < kTasks; ++task) EXPECT_EQ(done[task], kRounds) << "task " << task;
}

// quiescent(busy), the MPI client rank's idle report: true inside the quiescent hook with busy = 1 (every
// other worker asleep), false for a pool not started, while a task sleeps on a timer, and after Finish.
TEST(TaskScheduler, QuiescentHoldsOnlyWhenNothingIsQueuedRunningOrTimed) {
  TaskScheduler* self = nullptr;
  std::atomic<int> steps{0};
  std::vector<int> seen;  // quiescent(1) at each hook call (the hook runs on one worker at a time)
  TaskScheduler::Hooks hooks;
  hooks.run = [&](int, int64_t) -> TaskScheduler::Step {
    // The first step sleeps 20 ms (a one-shot timer): no quiet moment until it has fired.
    const auto wake = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
    if (steps.fetch_add(1) == 0) return {Next::kSleep, wake};
    return {Next::kIdle};
  };
  hooks.recheck = [](int64_t) {};
  hooks.quiescent = [&] {
    seen.push_back(self->quiescent(1) ? 1 : 0);
    EXPECT_FALSE(self->quiescent(0));  // the calling worker is not asleep
    self->Finish();
  };
  TaskScheduler scheduler(1, hooks);
  self = &scheduler;
  EXPECT_FALSE(scheduler.quiescent(0));  // not started
  scheduler.Run(2, "test.workers");
  EXPECT_EQ(steps.load(), 2);  // the hook came only after the sleep ended and the task went idle
  EXPECT_EQ(seen, std::vector<int>({1}));
  EXPECT_FALSE(scheduler.quiescent(0));  // finished
}

}  // namespace
}  // namespace asyncdp::sim
