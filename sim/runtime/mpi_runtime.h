// The MPI runtime (docs/mpi.md): the same protocol handlers as the threads and virtual runtimes, spread
// over the ranks of MPI_COMM_WORLD. Rank 0 owns the server and the observers (evaluation, ε so far,
// progress); ranks 1..P−1 host the clients (protocol.mpi_placement: blocks, round-robin or balanced by
// planned work; sim/runtime/mpi_transport.h, Placement) as tasks on a bounded pool of worker threads, plus
// the rank's communication loop, the only thread calling MPI.
//
// Messages are non-blocking point-to-point: a client's (i, U) goes to rank 0 as soon as it completes its
// round; each new v̂_k goes from rank 0 to every rank with a client still running (one message per rank,
// shared by that rank's clients, who adopt only the newest: Algorithm 3). Idle loops poll and sleep, never
// spin (IdleBackoff).
//
// Faults work as in the threads runtime (wall time): stragglers sleep, delayed clients sleep before sending,
// dropped clients fall silent, and with exclude_after > 0 the server excludes laggards silent that long.
// Independently, every rank sends a heartbeat when it has sent nothing for mpi_timeout / 4; a rank silent
// for mpi_timeout (dead, stopped, or cut off) ends the run with an MpiRunError on the rank that noticed
// (the caller aborts the job: MPI_Abort, exit code ≠ 0, no outputs). Every wait has that time-out.
//
// At the end rank 0 sends kShutdown; each worker rank stops its clients and answers with their outcomes
// (ClientOutcome: rounds, staleness, diagnostics), which is everything the outputs and the privacy
// accounting need, so rank 0 reports exactly what the other runtimes report.
#pragma once

#include <memory>
#include <stdexcept>
#include <vector>

#include "sim/protocol/client.h"
#include "sim/protocol/server.h"
#include "sim/plan_table.h"
#include "sim/round_plan.h"
#include "sim/runtime/client_outcome.h"
#include "sim/runtime/run_observer.h"
#include "sim/runtime/runtime_options.h"

namespace asyncdp::sim {

// A rank died, stalled or broke the protocol: the run cannot finish.
class MpiRunError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// This process's rank in MPI_COMM_WORLD (MPI must be initialised; apps/mpi_session.h does it).
int MpiRank();

// Which clients this rank hosts (options.mpi_placement over ranks 1..P−1 from the public plans; rank 0,
// the server, hosts none). Each rank builds only these (MakeClients): a client's model copies, mailbox and
// batch sampler live on its rank alone. MPI must be initialised with >= 2 ranks (InputError otherwise).
std::vector<bool> MpiHostedClients(const RuntimeOptions& options, const PlanTable& plans);

// Every rank calls RunMpi with the same public arguments (the same experiment from the same config):
// `clients` holds this rank's hosted clients (MpiHostedClients) and null elsewhere, `plans` every client's
// public plan. On rank 0 it runs the server and the observer and fills `outcomes` with every
// client's outcome, in client order; on the other ranks it runs that rank's clients, leaves `outcomes` empty
// and returns a report with only that rank's compute time. Throws InputError for fewer than 2 ranks and
// MpiRunError when a rank fails (see above).
RuntimeReport RunMpi(const RuntimeOptions& options, const FaultPlan& faults,
                     std::vector<std::unique_ptr<ClientProtocol>>& clients, const PlanTable& plans,
                     ServerProtocol& server, RunObserver& observer, std::vector<ClientOutcome>& outcomes);

}  // namespace asyncdp::sim
