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
// `plans` gives each client's planned rounds (the clients as built on this process). `runtime` names the
// runtime in the warning.
void SettleReport(RuntimeReport& report, const std::vector<ClientOutcome>& outcomes,
                  const std::vector<std::unique_ptr<ClientProtocol>>& plans, const ServerProtocol& server,
                  std::string_view runtime);

}  // namespace asyncdp::sim
