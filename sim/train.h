// One `asyncdp train` run end to end: build the experiment, run it on the configured runtime with the
// metrics/progress observers, and assemble the outputs (metrics.csv, clients.csv, summary.json,
// config.resolved.toml).
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "sim/config.h"
#include "sim/experiment.h"
#include "sim/metrics.h"
#include "sim/runtime/run_observer.h"

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
  nlohmann::json summary;
  RuntimeReport runtime;
  Eigen::VectorXf final_model;              // v̂ after every applied update
  std::shared_ptr<const Experiment> experiment;  // data, model and plans the run used
};

TrainResult RunTraining(const TrainConfig& config, const TrainOptions& options = {});

// Writes the output files (four, plus phases.csv in a proactive run) into `out_dir` atomically (sim/output_dir.h).
void WriteTrainOutputs(const TrainResult& result, const std::string& out_dir);

}  // namespace asyncdp::sim
