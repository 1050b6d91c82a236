#include "sim/runtime/run_end.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/check.h"

namespace asyncdp::sim {

std::vector<int64_t> PlannedRounds(const std::vector<std::unique_ptr<ClientProtocol>>& clients) {
  std::vector<int64_t> rounds;
  rounds.reserve(clients.size());
  for (const auto& client : clients) rounds.push_back(client->plan().rounds());
  return rounds;
}

void SettleReport(RuntimeReport& report, const std::vector<ClientOutcome>& outcomes,
                  const std::vector<int64_t>& planned_rounds, const ServerProtocol& server, std::string_view runtime) {
  ASYNCDP_CHECK(outcomes.size() == planned_rounds.size());
  std::vector<ClientEnd> ends;
  ends.reserve(outcomes.size());
  for (size_t c = 0; c < outcomes.size(); ++c) {
    ends.push_back(ClientEnd{.id = outcomes[c].id,
                             .stop = outcomes[c].stop,
                             .paused = outcomes[c].paused,
                             .rounds = outcomes[c].rounds,
                             .planned_rounds = planned_rounds[c]});
  }
  report.unfinished = ClassifyEnd(ends, server, report.cancelled);
  report.truncated = !report.cancelled && !report.unfinished.empty();
  report.stalled = false;
  for (const UnfinishedClient& u : report.unfinished) {
    report.stalled = report.stalled || u.reason == UnfinishedReason::kWaitingForBroadcast;
  }
  report.excluded = server.excluded_clients();
  if (!report.truncated) return;
  std::string who;
  for (const UnfinishedClient& u : report.unfinished) {
    if (!who.empty()) who += ", ";
    who += fmt::format("client {} ({}, {} of {} rounds applied)", u.client, ToString(u.reason), u.applied_rounds,
                       u.planned_rounds);
  }
  std::string holders;  // the clients the next broadcast waits for
  for (int64_t c = 0; c < static_cast<int64_t>(outcomes.size()); ++c) {
    if (server.lagging(c)) holders += (holders.empty() ? "" : ", ") + std::to_string(c);
  }
  spdlog::warn("{} runtime: the run is truncated: {} client(s) did not finish: {}{}", runtime,
               report.unfinished.size(), who,
               report.stalled ? fmt::format(". Stalled: global round {} waits for client(s) {}, which sent nothing "
                                            "more (dropped out or silent); protocol.exclude_after (set, or lower) "
                                            "excludes silent clients so the others go on",
                                            server.global_round() + 1, holders)
                              : "");
}

}  // namespace asyncdp::sim
