// summary.json of a random check-in run (sim/checkin/checkin_run.h), written from the run's typed facts,
// one function per section: the privacy report (its theorem, or "no bound" with the reason), the check-in
// plan beside its expectations, and with output.diagnostics the realised check-ins (labelled: they are the
// randomness the reported epsilon assumes secret).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>

#include "sim/checkin/checkin_options.h"
#include "sim/checkin/checkin_privacy.h"
#include "sim/config.h"
#include "sim/metrics.h"

namespace asyncdp::sim::checkin {

// What the check-ins realised, summed over the run (non-private: released only as diagnostics).
struct CheckInCounters {
  int64_t empty_steps = 0;
  int64_t dummy_updates = 0;
  int64_t discarded = 0;
  int64_t out_of_range = 0;
  int64_t participating = 0;  // summed over windows
  int64_t used = 0;           // client updates used
  int64_t records = 0;        // records whose gradients were used
};

struct CheckInFacts {
  const TrainConfig& config;  // resolved: sigma, delta and lambda filled in
  const CheckInOptions& options;
  const CheckInPrivacy& privacy;                    // of the run (bounded or not)
  const std::optional<CheckInPrivacy>& record_level;  // user-level runs: the record-level guarantee beside it
  double sigma = 0.0;  // the run's noise multiplier (0: no noise)
  bool sigma_calibrated = false;
  const CheckInCounters& counters;
  int64_t model_updates = 0;
  int64_t records_held = 0;  // rows some client holds
  int64_t parameters = 0;
  const MetricsRow& last;  // the final evaluation
  double wall_seconds = 0.0;
};

nlohmann::json CheckInSummaryJson(const CheckInFacts& run);

}  // namespace asyncdp::sim::checkin
