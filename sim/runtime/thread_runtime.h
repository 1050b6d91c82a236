// The real-threads runtime (docs/design.md, "Runtimes"): clients are tasks on a bounded pool of worker
// threads (protocol.worker_threads; 0 = one per core), so 10⁴–10⁵ clients run without one OS thread each,
// and short rounds are not drowned in context switches. Still truly concurrent and asynchronous: a client
// becomes runnable when a broadcast lets Υ(k, i) allow its next round and then runs on the first free
// worker; the server applies each update on arrival.
//
// There is no server thread: the server is an inbox, and the worker that posts into an idle inbox applies
// everything queued (then publishes one broadcast per batch) before going back to clients — the server's
// handlers and the observers stay serialised, one worker at a time. A broadcast is one shared immutable copy
// of v̂, left in each client's mailbox; clients blocked by Υ (or paused at an accuracy target) wake up.
//
// Faults use wall time, as deadlines in a timer queue (sim/runtime/task_scheduler.h), never sleeping
// workers: a straggler's round completes (factor − 1) × its compute time later; a delayed client's messages
// reach the server extra_delay after they were sent (send order kept; the client goes on); dropped clients
// exit silently; with exclude_after > 0 a periodic timer ticks the server, which excludes clients silent for
// longer. The run ends by the rule of docs/design.md ("End of a run"): in wall time, a client still excluded
// when everyone else is done is cut off — its round in progress abandoned, its messages in flight dropped —
// so a client with a 1000 s delay or a 10⁹ straggler factor cannot keep the run alive. Cancellation
// (RuntimeOptions::cancel) drops every timer too. A refused thread start throws ThreadStartError (exit 2).
#pragma once

#include <memory>
#include <vector>

#include "sim/protocol/client.h"
#include "sim/protocol/server.h"
#include "sim/runtime/run_observer.h"
#include "sim/runtime/runtime_options.h"
#include "sim/runtime/thread_start.h"

namespace asyncdp::sim {

// faults.clients has one entry per client (speed is the virtual clock's and is not used here). `starter`
// starts the worker threads (tests inject failures).
RuntimeReport RunThreads(const RuntimeOptions& options, const FaultPlan& faults,
                         std::vector<std::unique_ptr<ClientProtocol>>& clients, ServerProtocol& server,
                         RunObserver& observer, const ThreadStarter& starter = StartThread);

// The worker threads the threads runtime uses for `clients` clients: protocol.worker_threads, 0 = one per
// core, never more than the clients.
int ThreadRuntimeWorkers(const RuntimeOptions& options, size_t clients);

}  // namespace asyncdp::sim
