// `asyncdp train` with protocol.participation = "check_in": the random check-in protocols, one server step
// per clock tick (virtual time = steps so far). The clients are a compact array — client j is row j of the
// training data (its data set at the user level) plus its check-in drawn per window (checkin_plan.h) — so
// n = 10^5 clients cost a few MB and no object or thread per client. The server and the clients are the
// event handlers of checkin_server.h and checkin_client.h; sim/runtime/step_runtime.h computes the clients'
// updates where protocol.runtime says; accounting is checkin_privacy.h.
//
// Outputs (as for the async protocol): metrics.csv (step, virtual_seconds, model_updates, test_loss,
// test_accuracy, epsilon, empty_steps, dummy_updates, discarded_check_ins), clients.csv (per client: the
// windows it checked in to and the steps its record was used in — non-private diagnostics),
// summary.json (accuracy, privacy with its theorem or "no bound", the check-in counts beside their
// expectation, the resolved configuration).
#pragma once

#include "sim/config.h"
#include "sim/train_result.h"

namespace asyncdp::sim::checkin {

TrainResult RunCheckInTraining(const TrainConfig& config, const TrainOptions& options = {});

// The configuration such a run resolves before its first step (data-derived defaults, sigma calibrated to
// dp.epsilon): its config.resolved.toml, without running it.
TrainConfig ResolveCheckInConfig(const TrainConfig& config);

}  // namespace asyncdp::sim::checkin
