#include "sim/runtime/task_scheduler.h"

#include <algorithm>

#include "core/check.h"
#include "sim/runtime/compute_timer.h"
#include "sim/runtime/cpu_placement.h"
#include "sim/runtime/lock_briefly.h"

namespace asyncdp::sim {
TaskScheduler::TaskScheduler(int64_t tasks, Hooks hooks)
    : hooks_(std::move(hooks)),
      state_(static_cast<size_t>(tasks), State::kQueued),
      home_(static_cast<size_t>(tasks), 0) {
  ASYNCDP_CHECK(tasks >= 0 && hooks_.run && hooks_.recheck);
}

void TaskScheduler::Run(int workers, const char* config_key, const ThreadStarter& starter) {
  ASYNCDP_CHECK(workers >= 1);
  {
    std::lock_guard lock(mutex_);
    workers_ = workers;
    ready_.assign(static_cast<size_t>(workers), {});
    activity_.assign(static_cast<size_t>(workers), Activity::kLooking);
    // Every task starts Queued, spread round-robin over the workers' queues in id order.
    for (size_t t = 0; t < state_.size(); ++t) {
      home_[t] = static_cast<int>(t % static_cast<size_t>(workers));
      ready_[static_cast<size_t>(home_[t])].push_back(static_cast<int64_t>(t));
    }
    queued_.store(static_cast<int64_t>(state_.size()), std::memory_order_relaxed);
  }
  // Each started worker first moves to a CPU of its own (cpu_placement.h: otherwise Linux often starts it on
  // this thread's CPU, and the two share it for milliseconds).
  const CpuPlacement placement = CpuPlacement::OfCallingThread();
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(workers - 1));  // push_back below cannot throw after a thread started
  for (int w = 1; w < workers; ++w) {
    try {
      threads.push_back(starter([this, w, &placement] {
        placement.MoveCallingThread(w);
        WorkerLoopOrFail(w);
      }));
    } catch (const std::system_error& e) {
      Finish();
      for (std::thread& t : threads) t.join();
      throw ThreadStartFailure(config_key, "worker", w, workers, e);
    }
  }
  {
    std::lock_guard lock(mutex_);
    open_ = true;  // no task runs before every thread exists: a refused start leaves no half-run behind
  }
  work_.notify_all();
  WorkerLoopOrFail(0);
  for (std::thread& t : threads) t.join();
  std::lock_guard lock(mutex_);
  if (failure_) std::rethrow_exception(failure_);
}

void TaskScheduler::WorkerLoopOrFail(int worker) {
  const int64_t cpu_start = ThreadCpuNanos();
  try {
    WorkerLoop(worker);
  } catch (...) {
    {
      std::lock_guard lock(mutex_);
      if (!failure_) failure_ = std::current_exception();
    }
    Finish();
  }
  const int64_t cpu = ThreadCpuNanos() - cpu_start;
  std::lock_guard lock(mutex_);
  worker_cpu_nanos_ += cpu;
}

double TaskScheduler::worker_cpu_seconds() const {
  std::lock_guard lock(mutex_);
  return static_cast<double>(worker_cpu_nanos_) * 1e-9;
}

void TaskScheduler::WorkerLoop(int worker) {
  std::unique_lock lock(mutex_);
  work_.wait(lock, [&] { return open_ || finished_; });
  auto last_poll = Clock::now();
  bool spun = false;  // this worker has spun since it last found work or slept
  while (!finished_) {
    if (!timers_.empty()) {
      const auto now = Clock::now();
      if (timers_.top().due <= now) {
        if (FireDueLocked(now) && hooks_.after_timers) {
          lock.unlock();
          hooks_.after_timers();
          LockBriefly(lock);
        }
        continue;
      }
    }
    if (const int64_t task = TakeLocked(worker); task >= 0) {
      spun = false;
      state_[task] = State::kRunning;
      activity_[static_cast<size_t>(worker)] = Activity::kRunning;
      lock.unlock();
      const Step step = hooks_.run(worker, task);
      LockBriefly(lock);
      activity_[static_cast<size_t>(worker)] = Activity::kLooking;
      if (finished_) break;
      switch (step.next) {
        case Next::kIdle:
          state_[task] = State::kIdle;
          lock.unlock();
          hooks_.recheck(task);  // a Wake() between the step's last look and kIdle above is not lost
          LockBriefly(lock);
          break;
        case Next::kYield: QueueLocked(task); break;
        case Next::kSleep:
          state_[task] = State::kSleeping;
          timers_.push(Timer{step.wake_at, timer_sequence_++, task, {}, {}});
          break;
        case Next::kExit: state_[task] = State::kExited; break;
      }
      continue;
    }
    // Nothing to do. Before sleeping, spin briefly: with short rounds (a logistic-regression round is a few
    // µs) the next task is usually queued within microseconds, and a futex sleep plus wake-up costs about as
    // much as a round (see SpinForWork). Only after a fruitless spin does a worker count as idle.
    if (!spun && workers_ > 1) {
      spun = true;
      const auto spin_until = timers_.empty() ? Clock::time_point::max() : timers_.top().due;
      activity_[static_cast<size_t>(worker)] = Activity::kSpinning;
      lock.unlock();
      SpinForWork(spin_until);
      LockBriefly(lock);
      activity_[static_cast<size_t>(worker)] = Activity::kLooking;
      continue;
    }
    spun = false;
    // If every other worker is idle too and no one-shot timer is pending, nothing will happen but the
    // periodic timers (the hook decides whether they can still change anything).
    if (timers_.size() == periodic_timers_ && idle_workers_ + 1 == workers_ && hooks_.quiescent) {
      lock.unlock();
      hooks_.quiescent();
      LockBriefly(lock);
      if (finished_ || queued_.load(std::memory_order_relaxed) > 0 || timers_.size() > periodic_timers_) continue;
    }
    // Sleep until a wake-up, the next deadline or the next poll.
    auto until = Clock::time_point::max();
    if (!timers_.empty()) until = timers_.top().due;
    if (hooks_.poll_period.count() > 0) until = std::min(until, Clock::now() + hooks_.poll_period);
    ++idle_workers_;
    activity_[static_cast<size_t>(worker)] = Activity::kSleeping;
    if (until == Clock::time_point::max()) {
      work_.wait(lock);
    } else {
      work_.wait_until(lock, until);
    }
    activity_[static_cast<size_t>(worker)] = Activity::kLooking;
    --idle_workers_;
    if (hooks_.poll && hooks_.poll_period.count() > 0 && !finished_) {
      const auto now = Clock::now();
      if (now - last_poll >= hooks_.poll_period) {
        last_poll = now;
        lock.unlock();
        hooks_.poll();
        LockBriefly(lock);
      }
    }
  }
}

void TaskScheduler::SpinForWork(Clock::time_point until) const {
  // Bounded: kSpin of busy-waiting at most per idle moment, so a worker with nothing to do for longer (LeNet
  // rounds take milliseconds; a delay rule holds clients back) sleeps as before and a loaded machine loses
  // at most kSpin per hand-off. New timers do not end a spin (at most kSpin late); due ones do.
  constexpr auto kSpin = std::chrono::microseconds(50);
  until = std::min(until, Clock::now() + kSpin);
  while (true) {
    for (int i = 0; i < 64; ++i) {
      if (queued_.load(std::memory_order_relaxed) > 0) return;
      if (stop_spinning_.load(std::memory_order_relaxed)) return;
      CpuRelax();
    }
    if (Clock::now() >= until) return;
  }
}

bool TaskScheduler::FireDueLocked(Clock::time_point now) {
  bool after = false;
  while (!timers_.empty() && timers_.top().due <= now && !finished_) {
    Timer timer = timers_.top();
    timers_.pop();
    if (timer.task >= 0) {
      if (state_[timer.task] == State::kSleeping) QueueLocked(timer.task);
      continue;
    }
    after = timer.action() || after;
    if (timer.period.count() > 0) {
      timer.due += timer.period;
      timer.sequence = timer_sequence_++;
      timers_.push(std::move(timer));
    }
  }
  return after;
}

void TaskScheduler::QueueLocked(int64_t task) {
  state_[task] = State::kQueued;
  ready_[static_cast<size_t>(home_[task])].push_back(task);
  queued_.fetch_add(1, std::memory_order_relaxed);
  if (idle_workers_ > 0) work_.notify_one();  // whichever sleeper wakes takes it (TakeLocked steals)
}

int64_t TaskScheduler::TakeLocked(int worker) {
  std::deque<int64_t>* from = &ready_[static_cast<size_t>(worker)];
  if (from->empty()) {
    // Steal the oldest task of a worker that will not get to it now: one running a step (a client round may
    // take milliseconds) or asleep. A spinning owner takes its own task within nanoseconds, so leaving it
    // there keeps the task's data in that core's cache.
    from = nullptr;
    for (size_t v = 0; v < ready_.size(); ++v) {
      if (!ready_[v].empty() && activity_[v] != Activity::kSpinning) {
        from = &ready_[v];
        break;
      }
    }
    if (from == nullptr) return -1;
  }
  const int64_t task = from->front();
  from->pop_front();
  queued_.fetch_sub(1, std::memory_order_relaxed);
  home_[task] = worker;  // its data are now in this worker's cache: it comes back here when queued again
  return task;
}

void TaskScheduler::Wake(int64_t task) {
  LockBriefly(mutex_);
  std::lock_guard lock(mutex_, std::adopt_lock);
  if (!finished_ && state_[task] == State::kIdle) QueueLocked(task);
}

void TaskScheduler::WakeAll(const std::vector<int64_t>& tasks) {
  LockBriefly(mutex_);
  std::lock_guard lock(mutex_, std::adopt_lock);
  if (finished_) return;
  for (int64_t task : tasks) {
    if (state_[task] == State::kIdle) QueueLocked(task);
  }
}

void TaskScheduler::DropTimersAndWakeAll() {
  std::lock_guard lock(mutex_);
  if (finished_) return;
  timers_ = {};
  periodic_timers_ = 0;
  for (size_t task = 0; task < state_.size(); ++task) {
    if (state_[task] == State::kIdle || state_[task] == State::kSleeping) QueueLocked(static_cast<int64_t>(task));
  }
}

void TaskScheduler::AddTimer(Clock::time_point due, std::function<bool()> action, Clock::duration period) {
  std::lock_guard lock(mutex_);
  AddTimerLocked(due, std::move(action), period);
}

void TaskScheduler::AddTimerLocked(Clock::time_point due, std::function<bool()> action, Clock::duration period) {
  if (finished_) return;
  if (period.count() > 0) ++periodic_timers_;
  timers_.push(Timer{due, timer_sequence_++, -1, std::move(action), period});
  if (idle_workers_ > 0) work_.notify_one();  // it may be earlier than the deadline an idle worker waits for
}

void TaskScheduler::Finish() {
  {
    std::lock_guard lock(mutex_);
    finished_ = true;
    stop_spinning_.store(true, std::memory_order_relaxed);
    for (std::deque<int64_t>& queue : ready_) queue.clear();
    queued_.store(0, std::memory_order_relaxed);
    timers_ = {};
    periodic_timers_ = 0;
  }
  work_.notify_all();
}

bool TaskScheduler::quiescent(int busy) const {
  std::lock_guard lock(mutex_);
  return !finished_ && open_ && queued_.load(std::memory_order_relaxed) == 0 &&
         timers_.size() == periodic_timers_ && idle_workers_ + busy == workers_;
}

bool TaskScheduler::finished() const {
  std::lock_guard lock(mutex_);
  return finished_;
}

}  // namespace asyncdp::sim
