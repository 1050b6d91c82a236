// What the outputs need from a client once the run is over: its progress (the rounds the accountant
// charges), why it stopped, its staleness record, its phase record (proactive) and its non-private
// diagnostics. The threads and virtual
// runtimes read it off the ClientProtocol objects in place; the MPI runtime, whose clients live on other
// ranks, gathers these values on rank 0 (sim/runtime/mpi_runtime.h), so every runtime's report is built
// from the same record.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "models/model.h"
#include "sim/protocol/client.h"

namespace asyncdp::sim {

struct ClientOutcome {
  int64_t id = 0;
  int64_t records = 0;            // N_c
  int64_t rounds = 0;             // local rounds completed (i): what the privacy accounting charges
  int64_t planned_gradients = 0;  // Σ s_i over those rounds (public)
  ClientStop stop = ClientStop::kRunning;
  bool paused = false;            // at its accuracy target, still receiving (proactive framework)
  std::optional<TargetTracker> tracker;  // its phase checks and pause/re-join events (accuracy target only)
  int64_t max_staleness = 0;
  std::vector<int64_t> staleness_histogram;  // [s] = rounds started with staleness s
  // Non-private diagnostics (functions of the data): realised batch sizes and clipping statistics.
  int64_t gradients = 0;
  models::ClipStats clip_totals;
};

inline ClientOutcome OutcomeOf(const ClientProtocol& client) {
  return ClientOutcome{.id = client.id(),
                       .records = client.records(),
                       .rounds = client.local_round(),
                       .planned_gradients = client.planned_gradients(),
                       .stop = client.stop_reason(),
                       .paused = client.paused(),
                       .tracker = client.target_tracker() != nullptr
                                      ? std::optional<TargetTracker>(*client.target_tracker())
                                      : std::nullopt,
                       .max_staleness = client.max_staleness(),
                       .staleness_histogram = client.staleness_histogram(),
                       .gradients = client.gradients(),
                       .clip_totals = client.clip_totals()};
}

inline std::vector<ClientOutcome> OutcomesOf(const std::vector<std::unique_ptr<ClientProtocol>>& clients) {
  std::vector<ClientOutcome> outcomes;
  outcomes.reserve(clients.size());
  for (const auto& client : clients) outcomes.push_back(OutcomeOf(*client));
  return outcomes;
}

}  // namespace asyncdp::sim
