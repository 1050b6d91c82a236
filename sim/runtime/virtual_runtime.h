// The deterministic discrete-event runtime (conventions.md §1–2). Time is virtual: a round of client c
// takes gradient_cost × s_i × speed_c seconds (s_i the *planned* sample size, so the clock carries no
// information about the realised batch), a message takes a latency drawn from StreamKey{seed, c, ·,
// kLatency}. Events commit in the fixed order (virtual time, client id, sequence
// number), so a seed gives bit-identical results whatever the number of worker threads: the gradient
// work of rounds in flight runs in parallel on a oneTBB arena, but each round's result is a pure function
// of the model snapshot taken when it started, and is committed by the single event loop.
//
// Liveness: if the event queue empties while a client still waits for a broadcast (only possible when a
// client went silent and exclude_after = 0), the run stops and reports stalled = true — it never hangs.
#pragma once

#include <memory>
#include <vector>

#include "sim/protocol/client.h"
#include "sim/protocol/server.h"
#include "sim/runtime/run_observer.h"
#include "sim/runtime/runtime_options.h"

namespace asyncdp::sim {

// faults.clients has one entry per client.
RuntimeReport RunVirtual(const RuntimeOptions& options, const FaultPlan& faults,
                         std::vector<std::unique_ptr<ClientProtocol>>& clients, ServerProtocol& server,
                         RunObserver& observer);

}  // namespace asyncdp::sim
