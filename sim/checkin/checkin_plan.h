// The check-ins of one window, drawn by every client independently (Def. 3.1 of Balle et al. 2020) and
// stored compactly: one int32 per checked-in client plus one offset per step (n = 10^5 clients cost
// ~0.4 MB), never an object per client.
//
// Client j's decision in window e comes from the stream {seed, j, e, kCheckIn}: a uniform u in (0, 1),
// checked in iff u < p0, then a uniform step of its window — so it depends on (seed, j, e) only.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/checkin/checkin_options.h"

namespace asyncdp::sim::checkin {

// The step (0-based; sliding: on the global clock 0 .. n+W-2) client `client` checks in to in window
// `window`, or -1 if it abstains.
int64_t CheckInStep(const CheckInOptions& options, int64_t client, int64_t window);

struct WindowCheckIns {
  std::vector<int64_t> offsets;  // size steps + 1: step i's clients are members[offsets[i] .. offsets[i+1])
  std::vector<int32_t> members;  // client ids grouped by step, increasing within a step
  int64_t participating = 0;     // clients that checked in (coin p0 came up)
  int64_t out_of_range = 0;      // sliding: check-ins to a step outside the update range (discarded)

  int64_t steps() const { return static_cast<int64_t>(offsets.size()) - 1; }
  std::span<const int32_t> At(int64_t step) const {
    return {members.data() + offsets[static_cast<size_t>(step)],
            static_cast<size_t>(offsets[static_cast<size_t>(step) + 1] - offsets[static_cast<size_t>(step)])};
  }
};

// Every client's check-in for window `window`, indexed by update step (sliding: step - warmup, steps
// outside [warmup, warmup + m) counted in out_of_range). O(n + m) time and memory.
WindowCheckIns DrawWindowCheckIns(const CheckInOptions& options, int64_t window);

// E[empty steps] of one fixed window: m (1 - p0/m)^n (each step is missed by each client independently
// with probability 1 - p0/m), and its variance (pairs of steps are negatively correlated).
double ExpectedEmptySteps(int64_t clients, int64_t steps, double participation);
double EmptyStepsVariance(int64_t clients, int64_t steps, double participation);

}  // namespace asyncdp::sim::checkin
