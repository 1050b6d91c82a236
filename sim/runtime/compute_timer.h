// Timing the compute step of client rounds on real threads (threads and MPI runtimes), for
// `compute_seconds` and the protocol overhead (docs/design.md). Rounds whose predecessor took over 50 µs are
// timed with the thread's CPU clock (≈ 0.3 µs a read, negligible there; a long round may be descheduled
// part-way on a shared or oversubscribed machine), short ones with the TSC (≈ 10 ns a read, cycle_clock.h).
#pragma once

#include <time.h>

#include <cstdint>
#include <span>

#include "sim/runtime/cycle_clock.h"

namespace asyncdp::sim {

// CPU time of the calling thread, in nanoseconds.
inline int64_t ThreadCpuNanos() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Compute time measured on one thread (written by that thread only, read after it is done); a cache line
// of its own, so threads timing their rounds do not share one.
struct alignas(64) ComputeTally {
  uint64_t tsc_ticks = 0;
  int64_t cpu_nanos = 0;
};

// Runs `compute` (one round's compute step), adds its time to `tally` and returns it in seconds;
// `long_round` says which clock to use and is updated for the next round of the same client.
template <typename F>
double TimeCompute(F&& compute, bool& long_round, ComputeTally& tally, const CycleCalibration& calibration) {
  double seconds = 0.0;
  if (long_round) {
    const int64_t start = ThreadCpuNanos();
    compute();
    const int64_t nanos = ThreadCpuNanos() - start;
    tally.cpu_nanos += nanos;
    seconds = static_cast<double>(nanos) * 1e-9;
  } else {
    uint64_t ticks = 0;
    AddTicks(ticks, compute);
    tally.tsc_ticks += ticks;
    seconds = calibration.ApproxSeconds(ticks);
  }
  long_round = seconds > 50e-6;
  return seconds;
}

// The total compute time of all tallies, in seconds (TSC ticks at the rate observed over the run).
inline double ComputeSeconds(std::span<const ComputeTally> tallies, const CycleCalibration& calibration) {
  uint64_t tsc_ticks = 0;
  int64_t cpu_nanos = 0;
  for (const ComputeTally& tally : tallies) {
    tsc_ticks += tally.tsc_ticks;
    cpu_nanos += tally.cpu_nanos;
  }
  return calibration.Seconds(tsc_ticks) + static_cast<double>(cpu_nanos) * 1e-9;
}

}  // namespace asyncdp::sim
