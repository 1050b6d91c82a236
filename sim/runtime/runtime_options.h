// Typed options of the runtimes, resolved once from the configuration (sim/experiment.cc,
// ResolveRuntimeOptions / ResolveFaultPlan): a runtime never sees the raw config or compares a string while
// running (conventions.md §16).
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "sim/runtime/runtime_kinds.h"

namespace asyncdp::sim {

struct RuntimeOptions {
  RuntimeKind kind = RuntimeKind::kVirtual;
  uint64_t seed = 1;             // latency and speed streams (virtual runtime)
  double gradient_cost = 1e-5;   // virtual seconds per planned per-example gradient (times s_i, speed)
  LatencyModel latency = LatencyModel::kConstant;
  double latency_mean = 1e-3;    // virtual seconds per message
  double exclude_after = 0.0;    // seconds (virtual or wall) of silence before exclusion; 0 = never
  // Virtual runtime: threads computing rounds, 0 = auto. Threads runtime: the worker pool the clients run on
  // as tasks, 0 = one per core (sim/runtime/thread_runtime.h).
  int64_t worker_threads = 0;
  // Not from the config: an embedding (the Python module's Ctrl-C) sets *cancel to end the run early. The
  // virtual runtime stops dispatching events; in the threads runtime each client stops before its next
  // round (waiting clients are woken, pending delays dropped). Either way the run ends as if the clients' plans ended there (RuntimeReport::cancelled).
  const std::atomic<bool>* cancel = nullptr;
  double mpi_timeout = 60.0;     // mpi runtime: seconds of silence from a rank before the run fails
  MpiPlacement mpi_placement = MpiPlacement::kBlock;
  // output.diagnostics: MPI client ranks send their clients' realised batch sizes and clip statistics to
  // rank 0 only when on (the server otherwise sees (i, U) and protocol notices only).
  bool diagnostics = false;
};

// Per-client timing and faults, fixed before the run.
struct ClientFaults {
  // Virtual runtime: a round takes gradient_cost * s_i * speed virtual seconds (lognormal speed times the
  // straggler factor for stragglers; 1 otherwise).
  double speed = 1.0;
  // Threads runtime: a straggler's round completes (straggler_factor - 1) times its compute time late.
  double straggler_factor = 1.0;
  double extra_delay = 0.0;    // seconds added to each message of this client (clients.delay_ids)
  int64_t dropout_round = -1;  // the client stops silently before this local round; -1 = never
};

struct FaultPlan {
  std::vector<ClientFaults> clients;  // one per client
};

}  // namespace asyncdp::sim
