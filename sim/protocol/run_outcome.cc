#include "sim/protocol/run_outcome.h"

namespace asyncdp::sim {

std::string_view ToString(UnfinishedReason reason) {
  switch (reason) {
    case UnfinishedReason::kCutOffAfterExclusion: return "cut_off_after_exclusion";
    case UnfinishedReason::kWaitingForBroadcast: return "stalled";
    case UnfinishedReason::kCancelled: return "cancelled";
  }
  return "unknown";
}

std::vector<UnfinishedClient> ClassifyEnd(const std::vector<ClientEnd>& clients, const ServerProtocol& server,
                                          bool cancelled) {
  std::vector<UnfinishedClient> unfinished;
  for (const ClientEnd& client : clients) {
    const int64_t applied = server.delivered_prefix(client.id);
    // Stopped by a rule (or paused) with every round it completed applied: finished. Its whole plan in v̂:
    // finished too (only the stop notice was late). A client that completed rounds the server never
    // applied (messages in flight when it was cut off) did not finish, whatever it believes.
    const bool settled = (client.stop != ClientStop::kRunning || client.paused) && applied >= client.rounds;
    if (settled || PlanApplied(server, client.id, client.planned_rounds)) continue;
    const UnfinishedReason reason = cancelled                       ? UnfinishedReason::kCancelled
                                    : server.excluded(client.id)    ? UnfinishedReason::kCutOffAfterExclusion
                                                                    : UnfinishedReason::kWaitingForBroadcast;
    unfinished.push_back(UnfinishedClient{.client = client.id,
                                          .reason = reason,
                                          .rounds = client.rounds,
                                          .planned_rounds = client.planned_rounds,
                                          .applied_rounds = applied});
  }
  return unfinished;
}

}  // namespace asyncdp::sim
