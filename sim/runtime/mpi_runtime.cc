#include "sim/runtime/mpi_runtime.h"

#include <fmt/format.h>
#include <mpi.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <thread>

#include "core/check.h"
#include "core/error.h"
#include "sim/runtime/mpi_ranks.h"

namespace asyncdp::sim {
namespace {

// Grace for the start: ranks load their data at different speeds, and nothing is sent while loading.
constexpr double kStartGraceSeconds = 60.0;

// All ranks have built their experiment (data loading may take a while and differ between ranks) before
// any rank starts its silence clock. A non-blocking barrier polled with sleeps: Open MPI's blocking
// barrier would spin while the slowest rank is still loading.
void AwaitAllRanks(double timeout) {
  MPI_Request request = MPI_REQUEST_NULL;
  if (MPI_Ibarrier(MPI_COMM_WORLD, &request) != MPI_SUCCESS) throw MpiRunError("MPI: MPI_Ibarrier failed");
  const auto start = std::chrono::steady_clock::now();
  mpi::IdleBackoff backoff;
  int done = 0;
  while (true) {
    if (MPI_Test(&request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) throw MpiRunError("MPI: MPI_Test failed");
    if (done) return;
    if (mpi::SecondsSince(start) > timeout) {
      throw MpiRunError(fmt::format("rank {}: not every rank reached the start of the run within {:.3g} s "
                                    "(protocol.mpi_timeout + {:.0f} s): a rank died or is stuck loading its data",
                                    MpiRank(), timeout, kStartGraceSeconds));
    }
    std::this_thread::sleep_for(backoff.Next());
  }
}

}  // namespace

int MpiRank() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) return 0;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

namespace {

// MPI_COMM_WORLD's size, after checking that the MPI runtime can run here.
int RequireRanks() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) {
    throw InputError("protocol.runtime", "\"mpi\" needs MPI: start asyncdp with mpirun -np P (P >= 2)");
  }
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    throw InputError("protocol.runtime",
                     "\"mpi\" needs at least 2 ranks (rank 0 runs the server, ranks 1..P-1 the clients): start "
                     "asyncdp with mpirun -np P, P >= 2");
  }
  return size;
}

}  // namespace

namespace {

mpi::Placement PlacementOf(int ranks, const RuntimeOptions& options, const PlanTable& plans) {
  std::vector<int64_t> work;
  work.reserve(plans.size());
  for (const RoundPlan& plan : plans) work.push_back(plan.iterations());  // Σ s_i: public
  return mpi::Placement::Make(ranks, static_cast<int64_t>(plans.size()), options.mpi_placement, work);
}

}  // namespace

std::vector<bool> MpiHostedClients(const RuntimeOptions& options, const PlanTable& plans) {
  const mpi::Placement placement = PlacementOf(RequireRanks(), options, plans);
  const int rank = MpiRank();
  std::vector<bool> hosted(plans.size(), false);
  for (size_t c = 0; c < plans.size(); ++c) hosted[c] = placement.RankOf(static_cast<int64_t>(c)) == rank;
  return hosted;
}

RuntimeReport RunMpi(const RuntimeOptions& options, const FaultPlan& faults,
                     std::vector<std::unique_ptr<ClientProtocol>>& clients, const PlanTable& plans,
                     ServerProtocol& server, RunObserver& observer, std::vector<ClientOutcome>& outcomes) {
  ASYNCDP_CHECK(faults.clients.size() == clients.size() && plans.size() == clients.size());
  RequireRanks();
  mpi::Endpoint endpoint(MPI_COMM_WORLD);
  const mpi::Placement placement = PlacementOf(endpoint.size(), options, plans);
  // Each rank holds exactly the clients the placement gives it.
  for (size_t c = 0; c < clients.size(); ++c) {
    ASYNCDP_CHECK((clients[c] != nullptr) == (placement.RankOf(static_cast<int64_t>(c)) == endpoint.rank()));
  }
  outcomes.clear();
  AwaitAllRanks(options.mpi_timeout + kStartGraceSeconds);
  if (endpoint.rank() == 0) {
    spdlog::info("mpi: {} ranks started: rank 0 runs the server, ranks 1..{} host {} clients ({} placement)",
                 endpoint.size(), endpoint.size() - 1, clients.size(), mpi::ToString(options.mpi_placement));
    return mpi::RunServerRank(options, plans, server, observer, endpoint, placement, outcomes);
  }
  return mpi::RunClientRank(options, faults, clients, server.model().size(), endpoint, placement);
}

}  // namespace asyncdp::sim
