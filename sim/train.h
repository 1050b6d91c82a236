// One `asyncdp train` run end to end: build the experiment, run it on the configured runtime with the
// metrics/progress observers, and assemble the outputs (metrics.csv, clients.csv, summary.json,
// config.resolved.toml).
#pragma once

#include <string>

#include "sim/config.h"
#include "sim/train_result.h"

namespace asyncdp::sim {

TrainResult RunTraining(const TrainConfig& config, const TrainOptions& options = {});

// A run that ended before every client finished is not a result unless its configuration accepts it
// (protocol.allow_truncation): `asyncdp train` then exits 4, and the Python module raises TruncatedRun.
inline bool TruncationRefused(const TrainResult& result) {
  return result.runtime.truncated && !result.resolved_config.protocol.allow_truncation;
}

// Writes the output files (four, plus phases.csv in a proactive run) into `out_dir` atomically (sim/output_dir.h).
void WriteTrainOutputs(const TrainResult& result, const std::string& out_dir);

}  // namespace asyncdp::sim
