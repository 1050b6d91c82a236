// Tasks (the threads runtime's clients) on a bounded set of worker threads, plus a timer queue of deadlines.
//
// A task is an id in [0, tasks). It is Idle (waiting for something outside: a broadcast), Queued, Running on
// one worker (never two at once: a task's steps are serialised, and each step happens-after the previous
// one through the scheduler's mutex), Sleeping until a deadline, or Exited. `run(worker, task)` performs one
// step and says what the task does next. Nothing blocks a worker except an empty queue: simulated delays
// are deadlines in the timer queue, so Finish() (or DropTimersAndWakeAll) ends every wait at once.
//
// Placement: each worker has its own queue, and a queued task goes to the worker that ran it last, so a
// client's model, RNG state and buffers stay in one core's cache (a logistic-regression round is ≈ 2 µs;
// moving a client to the other core cost ≈ 45% more per round, measured). A worker whose queue is empty
// steals the oldest task of a worker that is running a step or asleep, so no task waits while a worker is
// free. A worker with nothing to do spins up to 50 µs before it sleeps (the next round of a lock-stepped
// client is usually microseconds away; a futex sleep and wake-up costs about as much as a round).
//
// Timers fire on whichever worker looks for work next (at most one task step late when every worker is
// busy), in (deadline, insertion) order, under the scheduler's mutex: an action may only take locks that
// come after it (the threads runtime's server inbox), and it returns true when the caller must then run
// the `after_timers` hook outside the lock (the runtime drains its server there).
//
// Why a hand-written queue rather than oneTBB's task_arena: Debian's libtbb is built without
// ThreadSanitizer, so every hand-off through its scheduler would be reported as a race (compute_pool.h);
// this one synchronises through std::mutex / std::condition_variable only. The calling thread is worker 0.
//
// Thread safety: every public member may be called from any thread, including from inside `run` and from
// timer actions (AddTimerLocked only there).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <queue>
#include <vector>

#include "sim/runtime/thread_start.h"

namespace asyncdp::sim {

class TaskScheduler {
 public:
  using Clock = std::chrono::steady_clock;

  enum class Next : uint8_t {
    kIdle,   // wait until Wake(task); `recheck(task)` runs right after, so a wake racing with this is kept
    kYield,  // runnable again: back of the queue (other tasks get their turn)
    kSleep,  // runnable again at Step::wake_at (a simulated delay: no worker waits for it)
    kExit,   // never runs again
  };
  struct Step {
    Next next = Next::kIdle;
    Clock::time_point wake_at{};  // kSleep only
  };

  struct Hooks {
    std::function<Step(int worker, int64_t task)> run;
    // After a kIdle step: the task re-checks whatever Wake() signals (a flag it reads without the lock).
    std::function<void(int64_t task)> recheck;
    // After timer actions that returned true, on the same worker, outside the lock.
    std::function<void()> after_timers;
    // Called by idle workers at least every `poll_period` (if > 0), outside the lock: notices flags that are
    // set without a wake-up (RuntimeOptions::cancel).
    std::function<void()> poll;
    std::chrono::microseconds poll_period{0};
    // Every worker is idle, no task is queued and no one-shot timer is pending: nothing can happen again but
    // the periodic timers (every task waits for a Wake that only a task or a timer could send). Called once
    // per such moment, outside the lock; with periodic timers pending, again after each of them fires.
    std::function<void()> quiescent;
  };

  TaskScheduler(int64_t tasks, Hooks hooks);
  TaskScheduler(const TaskScheduler&) = delete;
  TaskScheduler& operator=(const TaskScheduler&) = delete;

  // Runs until Finish(): `workers` − 1 started threads plus the calling thread. Every task starts Queued,
  // in id order. Throws ThreadStartError (after stopping and joining the threads it started) when the
  // system refuses a thread; `config_key` names the setting that chose the count.
  // An exception escaping a hook on any worker ends the run and is rethrown here, after every join.
  void Run(int workers, const char* config_key, const ThreadStarter& starter = StartThread);

  // Idle → Queued (a no-op in any other state).
  void Wake(int64_t task);
  void WakeAll(const std::vector<int64_t>& tasks);
  // Every task that is neither Exited, Running nor Queued becomes Queued (Sleeping ones lose their deadline);
  // every pending timer is dropped.
  void DropTimersAndWakeAll();
  // An action at `due`, run under the lock by the first worker free after it. period > 0: repeats.
  void AddTimer(Clock::time_point due, std::function<bool()> action, Clock::duration period = {});
  // The same from inside a timer action (the lock is held).
  void AddTimerLocked(Clock::time_point due, std::function<bool()> action, Clock::duration period = {});
  // Ends the run: drops the queue and the timers; running steps finish, then every worker returns.
  void Finish();
  bool finished() const;
  // Nothing is queued, no one-shot timer is pending and every worker but `busy` is asleep: 1 from inside
  // the quiescent hook (the moment it was called for still holds), 0 from a thread outside the pool.
  bool quiescent(int busy) const;
  // CPU time the workers spent between starting and returning (threads' own clocks), after Run().
  double worker_cpu_seconds() const;
  // Tasks waiting in the queue (a hint for a running task: yield if others wait). Relaxed read.
  bool others_waiting() const { return queued_.load(std::memory_order_relaxed) > 0; }

 private:
  enum class State : uint8_t { kIdle, kQueued, kRunning, kSleeping, kExited };
  // What a worker is doing (for stealing): a spinning worker takes its own queued tasks itself.
  enum class Activity : uint8_t { kLooking, kRunning, kSpinning, kSleeping };
  struct Timer {
    Clock::time_point due;
    uint64_t sequence;
    int64_t task;  // ≥ 0: wake this Sleeping task; −1: run `action`
    std::function<bool()> action;
    Clock::duration period;
    bool operator>(const Timer& other) const {
      return due != other.due ? due > other.due : sequence > other.sequence;
    }
  };

  void WorkerLoop(int worker);
  void WorkerLoopOrFail(int worker);  // WorkerLoop, turning an escaping exception into failure_ + Finish()
  void QueueLocked(int64_t task);
  // The next task for `worker`: its own queue's oldest, else one stolen (TaskScheduler.cc); −1 if none.
  int64_t TakeLocked(int worker);
  // Busy-waits (without the lock) until a task is queued, Finish(), `until`, or a short bound has passed.
  void SpinForWork(Clock::time_point until) const;
  // Fires every due timer; returns whether an action asked for after_timers. Requires mutex_.
  bool FireDueLocked(Clock::time_point now);

  Hooks hooks_;
  mutable std::mutex mutex_;
  std::condition_variable work_;                     // workers: a task was queued, a timer added, or finish
  std::vector<State> state_;                         // guarded by mutex_
  std::vector<int> home_;                            // guarded by mutex_: [task] the worker that ran it last
  std::vector<std::deque<int64_t>> ready_;           // guarded by mutex_: [worker] tasks queued for it
  std::vector<Activity> activity_;                   // guarded by mutex_: [worker]
  std::atomic<int64_t> queued_{0};                   // tasks in ready_: written under mutex_, read relaxed
  std::atomic<bool> stop_spinning_{false};           // finished_, for spinning workers (no lock)
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;  // guarded by mutex_
  uint64_t timer_sequence_ = 0;                      // guarded by mutex_
  size_t periodic_timers_ = 0;                       // guarded by mutex_: timers_ with a period (they repeat)
  int idle_workers_ = 0;                             // guarded by mutex_
  bool finished_ = false;                            // guarded by mutex_
  bool open_ = false;                                // guarded by mutex_: every worker thread has started
  int workers_ = 1;                                  // guarded by mutex_
  std::exception_ptr failure_;                       // guarded by mutex_: the first exception of a hook
  int64_t worker_cpu_nanos_ = 0;                     // guarded by mutex_
};

}  // namespace asyncdp::sim
