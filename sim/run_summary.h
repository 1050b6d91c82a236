// The outputs of a finished asynchronous run (protocol.participation = "async_rounds"), written from what
// the run produced: clients.csv and summary.json, one section per function. RunTraining (sim/train.h)
// runs the protocol and hands the typed facts here; nothing is read back from the JSON.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/audit/train_audit_outcome.h"
#include "sim/experiment.h"
#include "sim/metrics.h"
#include "sim/protocol/client.h"
#include "sim/protocol/server.h"
#include "sim/runtime/client_outcome.h"
#include "sim/runtime/run_observer.h"
#include "sim/summary.h"

namespace asyncdp::sim {

// What one asynchronous run produced.
struct RunFacts {
  const Experiment& experiment;
  const std::vector<std::unique_ptr<ClientProtocol>>& clients;  // empty on the MPI server rank
  const std::vector<ClientOutcome>& outcomes;                  // every client's, in id order
  const ServerProtocol& server;
  const RuntimeReport& report;
  const MetricsRecorder& metrics;
  double wall_seconds = 0.0;  // the whole call, set-up and reporting included
};

// clients.csv: public columns first (N_c, rounds, the planned gradients Σ s_i, why it stopped, the rounds
// its budget permits, staleness), then with output.diagnostics the non-private diag_* columns.
std::string ClientsCsv(const RunFacts& run);

// summary.json (docs/design.md, "Released fields"): accuracy, the privacy report, the run's outcome,
// timing, protocol statistics, the audit and proactive sections when configured, the resolved
// configuration, and with output.diagnostics the labelled non-private values.
Summary Summarise(const RunFacts& run, const std::optional<audit::TrainAuditOutcome>& audit);

}  // namespace asyncdp::sim
