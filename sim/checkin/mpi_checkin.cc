#include "sim/checkin/mpi_checkin.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

#include "sim/runtime/mpi_ranks.h"
#include "sim/runtime/mpi_runtime.h"

namespace asyncdp::sim::checkin {
namespace {

using Clock = std::chrono::steady_clock;

void PutInt(mpi::Buffer& b, size_t& at, int64_t v) {
  std::memcpy(b.data() + at, &v, sizeof v);
  at += sizeof v;
}
int64_t GetInt(const mpi::Buffer& b, size_t& at) {
  int64_t v = 0;
  if (at + sizeof v > b.size()) throw MpiRunError("check-ins over MPI: a truncated message");
  std::memcpy(&v, b.data() + at, sizeof v);
  at += sizeof v;
  return v;
}
void PutFloats(mpi::Buffer& b, size_t& at, const float* data, int64_t n) {
  std::memcpy(b.data() + at, data, sizeof(float) * static_cast<size_t>(n));
  at += sizeof(float) * static_cast<size_t>(n);
}
void GetFloats(const mpi::Buffer& b, size_t& at, float* data, int64_t n) {
  const size_t bytes = sizeof(float) * static_cast<size_t>(n);
  if (at + bytes > b.size()) throw MpiRunError("check-ins over MPI: a truncated message");
  std::memcpy(data, b.data() + at, bytes);
  at += bytes;
}

}  // namespace

mpi::Placement CheckInPlacement(int ranks, MpiPlacement scheme,
                                const std::vector<std::vector<int64_t>>& client_rows) {
  std::vector<int64_t> work;
  work.reserve(client_rows.size());
  for (const auto& rows : client_rows) work.push_back(static_cast<int64_t>(rows.size()));
  return mpi::Placement::Make(ranks, static_cast<int64_t>(client_rows.size()), scheme, work);
}

MpiCheckInClients::MpiCheckInClients(mpi::Endpoint& endpoint, mpi::Placement placement, int64_t params,
                                     double timeout)
    : endpoint_(endpoint),
      placement_(std::move(placement)),
      params_(params),
      timeout_(timeout),
      positions_(static_cast<size_t>(placement_.ranks)) {}

// The error when ranks stay silent past the time-out: which ranks, and which of the step's clients they host
// (the clients whose updates never came), as an asynchronous-round run names its unfinished clients.
MpiRunError MpiCheckInClients::Silent(const std::vector<bool>& pending, std::span<const int32_t> clients,
                                      int64_t step) const {
  std::vector<std::string> ranks;
  for (int rank = 1; rank < placement_.ranks; ++rank) {
    if (!pending[static_cast<size_t>(rank)]) continue;
    std::vector<int32_t> hosted;
    for (size_t j : positions_[static_cast<size_t>(rank)]) hosted.push_back(clients[j]);
    ranks.push_back(
        fmt::format("rank {} (client{} {})", rank, hosted.size() == 1 ? "" : "s", fmt::join(hosted, ", ")));
  }
  return MpiRunError(
      fmt::format("check-ins over MPI: {} did not return the updates of step {} within {:.3g} s "
                  "(protocol.mpi_timeout): a rank died or is stuck; no result is written",
                  fmt::join(ranks, ", "), step, timeout_));
}

void MpiCheckInClients::Fetch(std::span<const float> theta, std::span<const int32_t> clients,
                              std::vector<Eigen::VectorXf>& out, std::vector<int64_t>& records) {
  const int64_t step = step_++;
  const size_t k = clients.size();
  if (out.size() < k) out.resize(k, Eigen::VectorXf::Zero(params_));
  records.assign(k, 0);
  for (auto& p : positions_) p.clear();
  for (size_t j = 0; j < k; ++j) positions_[static_cast<size_t>(placement_.RankOf(clients[j]))].push_back(j);
  int waiting = 0;
  std::vector<bool> pending(static_cast<size_t>(placement_.ranks), false);
  for (int rank = 1; rank < placement_.ranks; ++rank) {
    const std::vector<size_t>& mine = positions_[static_cast<size_t>(rank)];
    if (mine.empty()) continue;
    pending[static_cast<size_t>(rank)] = true;
    auto buffer = std::make_shared<mpi::Buffer>(sizeof(int64_t) * (2 + mine.size()) +
                                                sizeof(float) * static_cast<size_t>(params_));
    size_t at = 0;
    PutInt(*buffer, at, step);
    PutInt(*buffer, at, static_cast<int64_t>(mine.size()));
    for (size_t j : mine) PutInt(*buffer, at, clients[j]);
    PutFloats(*buffer, at, theta.data(), params_);
    endpoint_.Send(rank, mpi::kCheckInWork, std::move(buffer));
    ++waiting;
  }
  const auto start = Clock::now();
  mpi::IdleBackoff backoff;
  while (waiting > 0) {
    endpoint_.Progress();
    mpi::Incoming message;
    if (!endpoint_.Poll(MPI_ANY_SOURCE, message)) {
      if (mpi::SecondsSince(start) > timeout_) throw Silent(pending, clients, step);
      std::this_thread::sleep_for(backoff.Next());
      continue;
    }
    backoff.Reset();
    if (message.tag != mpi::kCheckInUpdates) {
      throw MpiRunError(fmt::format("check-ins over MPI: unexpected message (tag {}) from rank {}",
                                    message.tag, message.source));
    }
    const mpi::Buffer& b = *message.payload;
    size_t at = 0;
    const std::vector<size_t>& mine = positions_[static_cast<size_t>(message.source)];
    if (!pending[static_cast<size_t>(message.source)] || GetInt(b, at) != step ||
        GetInt(b, at) != static_cast<int64_t>(mine.size())) {
      throw MpiRunError(fmt::format("check-ins over MPI: rank {} answered another request", message.source));
    }
    pending[static_cast<size_t>(message.source)] = false;
    for (size_t j : mine) records[j] = GetInt(b, at);
    for (size_t j : mine) GetFloats(b, at, out[j].data(), params_);
    --waiting;
  }
}

void MpiCheckInClients::Shutdown() {
  for (int rank = 1; rank < placement_.ranks; ++rank) endpoint_.SendEmpty(rank, mpi::kShutdown);
  endpoint_.Flush(Clock::now() +
                  std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_)));
}

void ServeCheckInClients(StepRuntime& runtime, mpi::Endpoint& endpoint, int64_t params) {
  std::vector<int32_t> clients;
  std::vector<float> theta(static_cast<size_t>(params));
  std::vector<Eigen::VectorXf> updates;
  std::vector<int64_t> records;
  mpi::IdleBackoff backoff;
  while (true) {
    endpoint.Progress();
    mpi::Incoming message;
    if (!endpoint.Poll(0, message)) {
      std::this_thread::sleep_for(backoff.Next());
      continue;
    }
    backoff.Reset();
    if (message.tag == mpi::kShutdown) break;
    if (message.tag != mpi::kCheckInWork) {
      throw MpiRunError(fmt::format("check-ins over MPI: rank {}: unexpected message (tag {}) from rank 0",
                                    endpoint.rank(), message.tag));
    }
    const mpi::Buffer& b = *message.payload;
    size_t at = 0;
    const int64_t step = GetInt(b, at);
    const int64_t count = GetInt(b, at);
    if (count < 0 || count > static_cast<int64_t>(b.size()))
      throw MpiRunError("check-ins over MPI: bad request");
    clients.resize(static_cast<size_t>(count));
    for (auto& c : clients) c = static_cast<int32_t>(GetInt(b, at));
    GetFloats(b, at, theta.data(), params);
    runtime.Compute(theta, clients, updates, records);
    auto reply = std::make_shared<mpi::Buffer>(sizeof(int64_t) * (2 + clients.size()) +
                                               sizeof(float) * static_cast<size_t>(params) * clients.size());
    at = 0;
    PutInt(*reply, at, step);
    PutInt(*reply, at, count);
    for (size_t j = 0; j < clients.size(); ++j) PutInt(*reply, at, records[j]);
    for (size_t j = 0; j < clients.size(); ++j) PutFloats(*reply, at, updates[j].data(), params);
    endpoint.Send(0, mpi::kCheckInUpdates, std::move(reply));
  }
  endpoint.Flush(Clock::now() + std::chrono::seconds(10));
}

}  // namespace asyncdp::sim::checkin
