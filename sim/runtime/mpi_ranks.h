// The two halves of the MPI runtime (sim/runtime/mpi_runtime.h): rank 0's server loop and a worker rank's
// client threads with its communication loop. RunMpi picks one by rank.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "sim/protocol/client.h"
#include "sim/protocol/server.h"
#include "sim/plan_table.h"
#include "sim/round_plan.h"
#include "sim/runtime/client_outcome.h"
#include "sim/runtime/mpi_transport.h"
#include "sim/runtime/run_observer.h"
#include "sim/runtime/runtime_options.h"

namespace asyncdp::sim::mpi {

// Rank 0 holds no client: the server's protocol state, every client's public plan (the planned s_i count
// the gradients it receives), and what the ranks report at the end.
RuntimeReport RunServerRank(const RuntimeOptions& options, const PlanTable& plans,
                            ServerProtocol& server, RunObserver& observer, Endpoint& endpoint,
                            const Placement& placement, std::vector<ClientOutcome>& outcomes);

// `clients`: this rank's clients at their ids, null elsewhere; `params` the model's size.
RuntimeReport RunClientRank(const RuntimeOptions& options, const FaultPlan& faults,
                            std::vector<std::unique_ptr<ClientProtocol>>& clients, int64_t params, Endpoint& endpoint,
                            const Placement& placement);

inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace asyncdp::sim::mpi
