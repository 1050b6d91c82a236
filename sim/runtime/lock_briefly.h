// Taking a mutex that is held for well under a microsecond: try without blocking for a short while
// before falling back to a blocking lock.
//
// Why: glibc's std::mutex puts a contended caller to sleep in the kernel at once (futex), and waking it
// costs microseconds — as much as a logistic-regression round. In the threads runtime the scheduler's
// queue, the server's inbox and the mailboxes are each held for a few hundred nanoseconds, and with two
// workers in lock-step they are often contended: perf on an Intel Xeon showed the workers asleep in
// __lll_lock_wait for most of their idle time (BENCHMARKS.md, Simulator). A bounded number of try_lock
// attempts with a pause between them waits out such a holder without sleeping, and past the bound the
// caller blocks as before, so a long holder (or an oversubscribed machine) costs at most the spin.
// try_lock and lock are the mutex's own, so ThreadSanitizer sees every acquisition.
#pragma once

namespace asyncdp::sim {

// A spin-wait hint: lets the sibling hyper-thread run and saves power while polling.
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Locks `lockable` (a mutex, or a std::unique_lock that does not own it): up to kTries non-blocking attempts
// (≈ 1–3 µs with the pauses), then a blocking lock.
template <typename Lockable>
inline void LockBriefly(Lockable& lockable) {
  constexpr int kTries = 64;
  for (int i = 0; i < kTries; ++i) {
    if (lockable.try_lock()) return;
    CpuRelax();
  }
  lockable.lock();
}

}  // namespace asyncdp::sim
