// The real-threads runtime (the design card): one worker thread per client plus the server thread.
// Clients send (i, U) through a oneTBB concurrent_bounded_queue (blocking pop: the server sleeps while
// idle); the server publishes each v̂_k into every client's mailbox (mutex + condition variable; a client
// blocked by Υ sleeps until a newer model arrives). A broadcast is one shared immutable copy of v̂.
//
// Faults use wall time: stragglers sleep (factor − 1) × their compute time after each round; a delayed
// client's messages reach the server extra_delay after they were sent (a courier thread holds them, the
// client goes on: message latency, as in the virtual runtime); dropped clients exit silently; with
// exclude_after > 0 a watchdog thread ticks the server, which excludes clients silent for longer (since
// the newest model reached them or they were last heard). The run ends by the rule the virtual runtime
// follows (docs/design.md, "End of a run"), then wakes every waiting client on the way out.
#pragma once

#include <memory>
#include <vector>

#include "sim/protocol/client.h"
#include "sim/protocol/server.h"
#include "sim/runtime/run_observer.h"
#include "sim/runtime/runtime_options.h"

namespace asyncdp::sim {

// faults.clients has one entry per client (speed is the virtual clock's and is not used here).
RuntimeReport RunThreads(const RuntimeOptions& options, const FaultPlan& faults,
                         std::vector<std::unique_ptr<ClientProtocol>>& clients, ServerProtocol& server,
                         RunObserver& observer);

}  // namespace asyncdp::sim
