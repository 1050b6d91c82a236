// Random check-ins over MPI (protocol.runtime = "mpi", docs/mpi.md): rank 0 runs the check-in driver and the
// server (draws the check-ins, adds the noise, applies the updates, evaluates, writes the outputs); ranks
// 1..P-1 host the clients (protocol.mpi_placement) and compute their updates before noise. Each step, rank 0
// sends the model to every rank hosting one of the step's clients that it needs (one_client: the chosen one;
// average: all checked in) with those clients' ids, and sums the updates they return in the step's client
// order: the threads runtime's arithmetic, so the two runtimes agree bit for bit.
//
// Wire formats (MPI_BYTE, every rank runs the same binary):
//   kCheckInWork     0 → rank   int64 step, int64 count, count × int64 client, then P floats of the model
//   kCheckInUpdates  rank → 0   int64 step, int64 count, count × int64 records, then count × P floats
//   kShutdown        0 → rank   empty: the run is over
// A rank that does not answer within protocol.mpi_timeout ends the run with an MpiRunError on rank 0 that
// names the silent ranks and the step's clients they host; nothing is published.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/runtime/mpi_runtime.h"
#include "sim/runtime/mpi_transport.h"
#include "sim/runtime/step_runtime.h"

namespace asyncdp::sim::checkin {

// Which rank hosts each client: protocol.mpi_placement over ranks 1..P-1, `balanced` by rows held.
mpi::Placement CheckInPlacement(int ranks, MpiPlacement scheme,
                                const std::vector<std::vector<int64_t>>& client_rows);

// Rank 0's side: fetches the updates of a step's clients from the ranks hosting them.
class MpiCheckInClients {
 public:
  MpiCheckInClients(mpi::Endpoint& endpoint, mpi::Placement placement, int64_t params, double timeout);
  // StepRuntime::Remote.
  void Fetch(std::span<const float> theta, std::span<const int32_t> clients,
             std::vector<Eigen::VectorXf>& out, std::vector<int64_t>& records);
  // Tells every worker rank the run is over and waits (up to the time-out) until the messages have left.
  void Shutdown();

 private:
  MpiRunError Silent(const std::vector<bool>& pending, std::span<const int32_t> clients, int64_t step) const;

  mpi::Endpoint& endpoint_;
  mpi::Placement placement_;
  int64_t params_;
  double timeout_;
  int64_t step_ = 0;
  std::vector<std::vector<size_t>> positions_;  // [rank]: positions in the step's client list
};

// A worker rank's side: answers rank 0's requests, computing them with `runtime`, until kShutdown.
void ServeCheckInClients(StepRuntime& runtime, mpi::Endpoint& endpoint, int64_t params);

}  // namespace asyncdp::sim::checkin
