// The end of a run, reported the same way by every runtime: which clients did not finish and why, from the
// protocol's one definition (sim/protocol/run_outcome.h), and one warning naming them.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "sim/protocol/client.h"
#include "sim/protocol/server.h"
#include "sim/runtime/client_outcome.h"
#include "sim/runtime/run_observer.h"

namespace asyncdp::sim {

// Sets report.unfinished / truncated / stalled / excluded from the clients' outcomes and the server;
// `planned_rounds[c]` is client c's planned rounds (public: the plans). `runtime` names the runtime in the
// warning.
void SettleReport(RuntimeReport& report, const std::vector<ClientOutcome>& outcomes,
                  const std::vector<int64_t>& planned_rounds, const ServerProtocol& server, std::string_view runtime);

// Each client's planned rounds, from the clients built on this process (every client: virtual, threads).
std::vector<int64_t> PlannedRounds(const std::vector<std::unique_ptr<ClientProtocol>>& clients);

}  // namespace asyncdp::sim
