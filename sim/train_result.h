// What a training run is given besides its configuration (TrainOptions) and what it returns
// (TrainResult): shared by the run layer (sim/train.h) and every participation mode it dispatches to
// (sim/checkin/checkin_run.h), which therefore depend on this and not on each other.
#pragma once

#include <Eigen/Dense>
#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/audit/train_audit_outcome.h"
#include "sim/config.h"
#include "sim/experiment.h"
#include "sim/metrics.h"
#include "sim/runtime/run_observer.h"
#include "sim/summary.h"

namespace asyncdp::sim {

struct TrainOptions {
  bool progress = true;  // progress + ETA on stderr (only drawn when stderr is a terminal)
  // An embedding's own observer (the Python module's progress callback and Ctrl-C check), called after
  // the metrics recorder; nullptr = none.
  RunObserver* observer = nullptr;
  // Setting *cancel ends the run early (RuntimeOptions::cancel); the result then has runtime.cancelled.
  const std::atomic<bool>* cancel = nullptr;
  // false: skip the refusal of keys this run does not read (sim/config_usage.h). Only for the test that
  // proves each such key really is unread (tests/sim/config_usage_test.cc runs with it changed).
  bool refuse_unused_keys = true;
};

struct TrainResult {
  // False on MPI ranks other than 0: they hosted clients and have nothing to report (the rest is empty).
  bool primary = true;
  TrainConfig resolved_config;
  std::vector<MetricsRow> metrics;
  std::string metrics_csv;
  std::string clients_csv;
  std::string phases_csv;  // proactive runs only (targets.accuracy > 0): one row per client and phase
  std::string events_csv;  // output.trace only: the protocol's event trace (sim/runtime/trace_recorder.h)
  nlohmann::json summary;  // summary.json
  SummaryCore summary_core;  // its typed common part (accuracy, headline ε, δ, outcome, timing): read this
  RuntimeReport runtime;
  Eigen::VectorXf final_model;              // v̂ after every applied update
  std::shared_ptr<const Experiment> experiment;  // data, model and plans the run used
  std::optional<audit::TrainAuditOutcome> audit;  // audit.canaries > 0 only: summary["audit"] written from it
};

}  // namespace asyncdp::sim
