#include "sim/runtime/compute_pool.h"

#include "core/check.h"
#include "sim/runtime/thread_start.h"

namespace asyncdp::sim {

ComputePool::ComputePool(int threads, int64_t jobs, std::function<void(int64_t, int)> work)
    : work_(std::move(work)), state_(static_cast<size_t>(jobs), State::kIdle) {
  ASYNCDP_CHECK(threads >= 1 && jobs >= 0);
  threads_.reserve(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    try {
      threads_.emplace_back([this, t] {
        placement_.MoveCallingThread(t + 1);  // a CPU of its own to start on (cpu_placement.h)
        WorkerLoop(t + 1);
      });
    } catch (const std::system_error& e) {
      StopAndJoin();  // a joinable std::thread destroyed while unwinding would call std::terminate
      throw ThreadStartFailure("protocol.worker_threads", "compute", t, threads, e);
    }
  }
}

ComputePool::~ComputePool() { StopAndJoin(); }

void ComputePool::StopAndJoin() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  queued_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ComputePool::Submit(int64_t job) {
  {
    std::lock_guard lock(mutex_);
    ASYNCDP_CHECK(state_[job] == State::kIdle);
    state_[job] = State::kQueued;
    queue_.push_back(job);
  }
  queued_.notify_one();
}

void ComputePool::Wait(int64_t job) {
  std::unique_lock lock(mutex_);
  ASYNCDP_CHECK(state_[job] != State::kIdle);
  while (state_[job] != State::kDone) {
    // Never sit idle while work is queued: run this job if nobody started it, else any queued job.
    const int64_t next = state_[job] == State::kQueued ? job : PopQueued();
    if (next < 0) {
      finished_.wait(lock);
      continue;
    }
    Run(next, /*thread=*/0, lock);
  }
  state_[job] = State::kIdle;
}

int64_t ComputePool::PopQueued() {
  while (!queue_.empty()) {
    const int64_t job = queue_.front();
    queue_.pop_front();
    if (state_[job] == State::kQueued) return job;  // other entries were claimed by a Wait
  }
  return -1;
}

void ComputePool::Run(int64_t job, int thread, std::unique_lock<std::mutex>& lock) {
  state_[job] = State::kRunning;
  lock.unlock();
  work_(job, thread);
  lock.lock();
  state_[job] = State::kDone;
  finished_.notify_all();
}

void ComputePool::WorkerLoop(int thread) {
  std::unique_lock lock(mutex_);
  while (true) {
    queued_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    const int64_t job = PopQueued();
    if (job >= 0) Run(job, thread, lock);
  }
}

}  // namespace asyncdp::sim
