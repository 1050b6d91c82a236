// What a proactive run reports per client (docs/config.md, outputs): phases.csv — one row per planned
// phase with σ_j, C, s_j, T_j, the rounds it ran, the ε spent by the end of it under each accountant (the
// heterogeneous composition of the rounds actually run: RDP and PLD upper bounds, GDP approximation)
// beside the E.1 analysis, the held-out accuracy at its end and its pause/re-join events — and the
// summary's "proactive" block. Written from each client's outcome (sim/runtime/client_outcome.h), so the
// three runtimes report alike (on MPI the outcomes are gathered on rank 0).
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/experiment.h"
#include "sim/runtime/client_outcome.h"

namespace asyncdp::sim {

// `diagnostics` (output.diagnostics): the held-out accuracies (accuracy_at_end, the acc= of each event) are
// non-private diagnostics, written only then.
std::string PhasesCsv(const Experiment& e, const std::vector<ClientOutcome>& outcomes, bool diagnostics);

// Extra clients.csv columns of a proactive run: header suffix and one row's cells (each starting with ',').
std::string ProactiveClientsHeader(bool diagnostics);
std::string ProactiveClientCells(const Experiment& e, const ClientOutcome& client,
                                 const Eigen::VectorXf& final_model, bool diagnostics);
// The rounds a client with targets could have run: its admitted plan up to its budget round (0 if not
// admitted, a public decision). Pausing and re-joining depend on its outputs, so its ε is that of every
// round it could have run (adaptive composition with paused rounds as trivial mechanisms, docs/theory.md
// "The proactive guarantee"), never the tally of the rounds that ran.
int64_t AdmittedRounds(const Experiment& e, size_t client);

nlohmann::json ProactiveSummaryJson(const Experiment& e, const std::vector<ClientOutcome>& outcomes,
                                    const Eigen::VectorXf& final_model, bool diagnostics);

}  // namespace asyncdp::sim
