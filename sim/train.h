// One `asyncdp train` run end to end: build the experiment, run it on the configured runtime with the
// metrics/progress observers, and assemble the outputs (metrics.csv, clients.csv, summary.json,
// config.resolved.toml).
#pragma once

#include <string>

#include "sim/config.h"
#include "sim/train_result.h"

namespace asyncdp::sim {

TrainResult RunTraining(const TrainConfig& config, const TrainOptions& options = {});

// The configuration a run of `config` resolves before training — data-derived defaults (lambda = 1/N,
// delta), sigma calibrated to dp.epsilon, budget halts — exactly what that run's config.resolved.toml
// records, without training (`asyncdp train --print-config`). Loads the data and runs the calibration.
TrainConfig ResolveTrainConfig(const TrainConfig& config);
// config.resolved.toml's text: a header line, then ToToml.
std::string ResolvedConfigToml(const TrainConfig& resolved);

// A run that ended before every client finished is not a result unless its configuration accepts it
// (protocol.allow_truncation): `asyncdp train` then exits 4, and the Python module raises TruncatedRun.
inline bool TruncationRefused(const TrainResult& result) {
  return result.runtime.truncated && !result.resolved_config.protocol.allow_truncation;
}

// Writes the output files (four, plus phases.csv in a proactive run) into `out_dir` atomically (sim/output_dir.h).
void WriteTrainOutputs(const TrainResult& result, const std::string& out_dir);

}  // namespace asyncdp::sim
