// Background threads that run the compute step of client rounds for the virtual runtime, so the event loop
// can go on committing events while rounds compute (their results are only used at the round's RoundDone).
//
// Why not oneTBB's task_group: Debian's libtbb is built without ThreadSanitizer, so the hand-off of every
// task through its scheduler is invisible to TSan and each round is reported as a race; the issue asks for
// a runtime that is provably clean under the tsan preset. This pool synchronises through std::mutex and
// std::condition_variable only, which TSan understands. Cost: one lock and (if a worker sleeps) one wake-up
// per job — noise next to LeNet's milliseconds per round; with logistic regression one worker thread
// (protocol.worker_threads = 1, no pool) is the fast setting anyway.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "sim/runtime/cpu_placement.h"

namespace asyncdp::sim {

class ComputePool {
 public:
  // `work(job, thread)` runs job ids in [0, jobs); each id is submitted again only after Wait(id) returned.
  // `threads` background threads (≥ 1); the waiting thread also runs jobs no worker has started. `thread`
  // says who runs the job: 0 the thread in Wait (one at a time), 1..threads the background threads, so
  // per-thread scratch can be indexed by it. Throws ThreadStartError (sim/runtime/thread_start.h) if the
  // system refuses a thread.
  ComputePool(int threads, int64_t jobs, std::function<void(int64_t job, int thread)> work);
  ~ComputePool();
  ComputePool(const ComputePool&) = delete;
  ComputePool& operator=(const ComputePool&) = delete;

  void Submit(int64_t job);
  // Returns once work(job) has finished; all its writes are visible to the caller. While waiting, the
  // caller runs queued jobs itself (so the event loop's thread works too).
  void Wait(int64_t job);

 private:
  enum class State : uint8_t { kIdle, kQueued, kRunning, kDone };
  void WorkerLoop(int thread);
  void StopAndJoin();
  // The next queued job (skipping entries claimed by Wait), or -1. Requires mutex_.
  int64_t PopQueued();
  // Runs `job` on `thread` with mutex_ released, then marks it done. Requires mutex_ (held by `lock`).
  void Run(int64_t job, int thread, std::unique_lock<std::mutex>& lock);

  std::function<void(int64_t, int)> work_;
  std::mutex mutex_;
  std::condition_variable queued_;    // workers: a job was submitted, or stop
  std::condition_variable finished_;  // Wait: a job finished
  std::deque<int64_t> queue_;         // submitted jobs in order; entries no longer kQueued are skipped
  std::vector<State> state_;
  bool stop_ = false;
  const CpuPlacement placement_ = CpuPlacement::OfCallingThread();  // read by the threads as they start
  std::vector<std::thread> threads_;
};

}  // namespace asyncdp::sim
