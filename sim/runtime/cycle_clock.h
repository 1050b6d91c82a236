// A cheap interval clock for timing the compute step of every round. std::chrono::steady_clock costs
// ≈ 23 ns per read on this VM against ≈ 10 ns for the TSC, and a logistic-regression round is only ≈ 5 µs.
// Ticks are converted to seconds by calibrating against
// steady_clock over the whole run (CycleCalibration), which is exact for the invariant TSC of every x86-64
// CPU of the last decade; elsewhere the clock falls back to steady_clock nanoseconds.
#pragma once

#include <chrono>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define ASYNCDP_HAVE_TSC 1
#endif

namespace asyncdp::sim {

inline uint64_t CycleNow() {
#ifdef ASYNCDP_HAVE_TSC
  return __rdtsc();
#else
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
#endif
}

// Runs f() and adds the ticks it took to `ticks`.
template <typename F>
void AddTicks(uint64_t& ticks, F&& f) {
  const uint64_t start = CycleNow();
  f();
  ticks += CycleNow() - start;
}

// Measures ticks per second between construction and Seconds(ticks) calls.
class CycleCalibration {
 public:
  CycleCalibration() : wall_start_(std::chrono::steady_clock::now()), ticks_start_(CycleNow()) {
    // A quick estimate for decisions during the run (ApproxSeconds): ~100 µs of both clocks.
    const auto until = wall_start_ + std::chrono::microseconds(100);
    auto now = wall_start_;
    while (now < until) now = std::chrono::steady_clock::now();
    const uint64_t ticks = CycleNow() - ticks_start_;
    const double wall = std::chrono::duration<double>(now - wall_start_).count();
    approx_seconds_per_tick_ = ticks > 0 ? wall / static_cast<double>(ticks) : 1e-9;
  }

  // `ticks` in seconds at the start-up estimate of the rate (within a few percent; cheap).
  double ApproxSeconds(uint64_t ticks) const { return static_cast<double>(ticks) * approx_seconds_per_tick_; }

  // `ticks` (a sum of CycleNow() differences) in seconds, using the tick rate observed since construction.
  double Seconds(uint64_t ticks) const {
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start_).count();
    const uint64_t elapsed = CycleNow() - ticks_start_;
    if (elapsed == 0 || wall <= 0.0) return 0.0;
    return static_cast<double>(ticks) * (wall / static_cast<double>(elapsed));
  }

 private:
  std::chrono::steady_clock::time_point wall_start_;
  uint64_t ticks_start_;
  double approx_seconds_per_tick_ = 1e-9;
};

}  // namespace asyncdp::sim
