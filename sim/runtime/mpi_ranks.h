// The two halves of the MPI runtime (sim/runtime/mpi_runtime.h): rank 0's server loop and a worker rank's
// client threads with its communication loop. RunMpi picks one by rank.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "sim/protocol/client.h"
#include "sim/protocol/server.h"
#include "sim/runtime/client_outcome.h"
#include "sim/runtime/mpi_transport.h"
#include "sim/runtime/run_observer.h"
#include "sim/runtime/runtime_options.h"

namespace asyncdp::sim::mpi {

RuntimeReport RunServerRank(const RuntimeOptions& options, const std::vector<std::unique_ptr<ClientProtocol>>& clients,
                            ServerProtocol& server, RunObserver& observer, Endpoint& endpoint,
                            const Placement& placement, std::vector<ClientOutcome>& outcomes);

RuntimeReport RunClientRank(const RuntimeOptions& options, const FaultPlan& faults,
                            std::vector<std::unique_ptr<ClientProtocol>>& clients, Endpoint& endpoint,
                            const Placement& placement);

inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace asyncdp::sim::mpi
