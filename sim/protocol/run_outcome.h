// How a run ended, per client, in one definition for every runtime (docs/design.md, "End of a run"). A
// client has finished when it stopped by a rule of its plan (completed, budget exhausted, target reached or
// missed, never admitted, dropped out as configured) or is paused at its target holding the newest model,
// — with every round it completed applied by the server — or when every round of its plan has been applied
// (its stop notice may still be in flight).
// Any other client is unfinished, with the reason; a run with an unfinished client is truncated.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/protocol/client.h"
#include "sim/protocol/server.h"

namespace asyncdp::sim {

enum class UnfinishedReason {
  kCutOffAfterExclusion,  // excluded, then silent for exclude_after more when everything else was done
  kWaitingForBroadcast,   // waited for a broadcast that could not come (a silent laggard): the run stalled
  kCancelled,             // the embedding cancelled the run (RuntimeOptions::cancel)
};
std::string_view ToString(UnfinishedReason reason);  // "cut_off_after_exclusion", "stalled", "cancelled"

struct UnfinishedClient {
  int64_t client = 0;
  UnfinishedReason reason = UnfinishedReason::kWaitingForBroadcast;
  int64_t rounds = 0;          // local rounds it completed
  int64_t planned_rounds = 0;  // rounds its plan allowed
  int64_t applied_rounds = 0;  // rounds of it the server applied (delivered prefix)
  bool operator==(const UnfinishedClient&) const = default;
};

// What the runtime knows about one client at the end, beside the server's state.
struct ClientEnd {
  int64_t id = 0;
  ClientStop stop = ClientStop::kRunning;
  bool paused = false;
  int64_t rounds = 0;
  int64_t planned_rounds = 0;
};

// Every round of the client's plan is in v̂ (its stop notice may still have been in flight): it finished.
inline bool PlanApplied(const ServerProtocol& server, int64_t client, int64_t planned_rounds) {
  return server.delivered_prefix(client) >= planned_rounds;
}

// The unfinished clients in id order. `cancelled`: the run was cancelled (every unfinished client is so).
std::vector<UnfinishedClient> ClassifyEnd(const std::vector<ClientEnd>& clients, const ServerProtocol& server,
                                          bool cancelled);

}  // namespace asyncdp::sim
