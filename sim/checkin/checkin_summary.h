// summary.json of a random check-in run (sim/checkin/checkin_run.h), written from the run's typed facts,
// one function per section: the privacy report (its theorem, or "no bound" with the reason), the check-in
// plan beside its expectations, and with output.diagnostics the realised check-ins (labelled: they are the
// randomness the reported epsilon assumes secret).
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/model.h"
#include "sim/checkin/checkin_options.h"
#include "sim/checkin/checkin_privacy.h"
#include "sim/config.h"
#include "sim/metrics.h"
#include "sim/runtime/run_observer.h"
#include "sim/summary.h"

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
  int64_t steps_run = 0;  // server steps taken
  int64_t model_updates = 0;
  int64_t records_held = 0;  // rows some client holds
  int64_t parameters = 0;
  const MetricsRow& last;              // the final evaluation
  const Eigen::VectorXf& final_model;  // a non-finite one has diverged: no accuracy is reported
  const RuntimeReport& report;         // how the run ended (cancelled: cut short by the embedding)
  double accounting_seconds = 0.0;     // calibration and the privacy report
  double wall_seconds = 0.0;
};

Summary SummariseCheckIns(const CheckInFacts& run);

// metrics.csv and the metrics rows of a check-in run, one evaluation at a time. Columns: step,
// virtual_seconds, model_updates (one-client rule: fixed by the plan, public), test_loss, test_accuracy,
// epsilon; with output.diagnostics the realised counts as diag_* columns (the average rule's model
// updates among them: they count the non-empty steps).
class CheckInMetrics {
 public:
  CheckInMetrics(const CheckInOptions& options, const CheckInPrivacy& privacy, bool diagnostics);
  void Record(int64_t step, const models::Evaluation& eval, int64_t model_updates,
              const CheckInCounters& counters);
  const std::vector<MetricsRow>& rows() const { return rows_; }
  const std::string& csv() const { return csv_; }

 private:
  bool public_updates_;
  bool diagnostics_;
  double epsilon_;  // NaN without a bound
  std::vector<MetricsRow> rows_;
  std::string csv_;
};

// clients.csv: each client's record count, and with output.diagnostics the windows it checked in to.
std::string CheckInClientsCsv(const std::vector<std::vector<int64_t>>& client_rows,
                              const std::vector<int32_t>& check_ins, bool diagnostics);

}  // namespace asyncdp::sim::checkin
