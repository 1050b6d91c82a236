#include "sim/runtime/compute_pool.h"

#include "core/check.h"

namespace asyncdp::sim {

ComputePool::ComputePool(int threads, int64_t jobs, std::function<void(int64_t)> work)
    : work_(std::move(work)), state_(static_cast<size_t>(jobs), State::kIdle) {
  ASYNCDP_CHECK(threads >= 1 && jobs >= 0);
  threads_.reserve(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) threads_.emplace_back([this] { WorkerLoop(); });
}

ComputePool::~ComputePool() {
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
  if (state_[job] == State::kQueued) {
    // No worker has started it: run it here rather than sit idle (its queue entry is skipped later).
    state_[job] = State::kRunning;
    lock.unlock();
    work_(job);
    lock.lock();
  } else {
    finished_.wait(lock, [&] { return state_[job] == State::kDone; });
  }
  state_[job] = State::kIdle;
}

void ComputePool::WorkerLoop() {
  std::unique_lock lock(mutex_);
  while (true) {
    queued_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    const int64_t job = queue_.front();
    queue_.pop_front();
    if (state_[job] != State::kQueued) continue;  // claimed by Wait
    state_[job] = State::kRunning;
    lock.unlock();
    work_(job);
    lock.lock();
    state_[job] = State::kDone;
    finished_.notify_all();
  }
}

}  // namespace asyncdp::sim
