// The last few PLD compositions of the process, shared by every PLD accountant. A composition is a pure
// function of (schedule, sampling, options), and a run asks for the same one more than once: calibration
// checks every client at the sigma it found, then the final report accounts the same clients at that
// sigma (Table 3 at eps = 1: two of the report's three compositions). Entries are immutable and shared;
// one that also holds the lower bound serves a request for the upper bound alone.
#pragma once

#include <memory>

#include "core/accounting/pld/pld.h"
#include "core/accounting/recent_cache.h"
#include "core/accounting/schedule.h"
#include "core/privacy_assumptions.h"

namespace asyncdp::accounting {

class ComposedPldCache {
 public:
  // The composition of `schedule` under `sampling` with `options`, composed now or earlier (ConfigError as
  // ComposedPld's constructor).
  std::shared_ptr<const ComposedPld> Get(const Schedule& schedule, SamplingModel sampling,
                                         const PldOptions& options);
  void Clear() { entries_.Clear(); }

 private:
  struct Key {
    Schedule schedule;
    SamplingModel sampling;
    PldOptions options;
  };
  // A typical composition holds 2^16-2^17 doubles per direction and bound (2-4 MiB in all); the largest
  // grid (PldOptions::max_grid_points, 2^20) 32 MiB. Four entries cover one run's calibration and report
  // (one per distinct client; more distinct clients only miss) and hold at most 128 MiB.
  RecentCache<Key, ComposedPld> entries_{4};
};

ComposedPldCache& SharedComposedPldCache();

}  // namespace asyncdp::accounting
