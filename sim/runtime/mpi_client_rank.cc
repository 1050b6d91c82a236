// Ranks 1..P−1 of the MPI runtime: one thread per hosted client (the threads runtime's client loop) and the
// rank's communication loop on the calling thread, the only one that calls MPI (MPI_THREAD_FUNNELED).
// Client threads hand packed messages to the loop through an outbox (mutex + condition variable, which
// also wakes the loop at once); the loop delivers each v̂_k into the hosted clients' mailboxes.
#include <fmt/format.h>
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "sim/runtime/compute_timer.h"
#include "sim/runtime/cycle_clock.h"
#include "sim/runtime/mpi_ranks.h"
#include "sim/runtime/mpi_runtime.h"
#include "sim/runtime/thread_start.h"

namespace asyncdp::sim::mpi {
namespace {

using Clock = std::chrono::steady_clock;

// The newest broadcast for one client. Members guarded by mutex; `pending` mirrors "newest or shutdown
// is set" so a client checks it without taking the lock.
struct alignas(64) Mailbox {
  std::mutex mutex;
  std::condition_variable changed;
  std::optional<BroadcastMessage> newest;
  bool shutdown = false;
  std::atomic<bool> pending{false};
};

// Whether client thread j's next round is timed with its CPU clock (compute_timer.h; written by it only).
struct alignas(64) RoundClock {
  bool long_rounds = true;
};

struct Outgoing {
  Tag tag;
  std::shared_ptr<Buffer> buffer;
};

class ClientRank {
 public:
  ClientRank(const RuntimeOptions& options, const FaultPlan& faults,
             std::vector<std::unique_ptr<ClientProtocol>>& clients, Endpoint& endpoint, const Placement& placement)
      : options_(options),
        faults_(faults.clients),
        clients_(clients),
        endpoint_(endpoint),
        first_(placement.FirstClient(endpoint.rank())),
        count_(placement.FirstClient(endpoint.rank() + 1) - first_),
        params_(clients.empty() ? 0 : clients[0]->local_model().size()),
        mailboxes_(static_cast<size_t>(count_)),
        tallies_(static_cast<size_t>(count_)),
        round_clocks_(static_cast<size_t>(count_)) {}

  ~ClientRank() { StopClients(); }

  RuntimeReport Run() {
    const auto start = Clock::now();
    // A refused thread becomes ThreadStartError (exit 2 on every rank via the session's abort); the threads
    // already started are stopped and joined by ~ClientRank during unwinding (thread_start.h).
    for (int64_t j = 0; j < count_; ++j) {
      try {
        workers_.emplace_back([this, j] { ClientLoop(j); });
      } catch (const std::system_error& e) {
        throw ThreadStartFailure("clients.count", "MPI rank " + std::to_string(endpoint_.rank()) + " client",
                                 static_cast<int>(j), static_cast<int>(count_), e);
      }
    }
    CommunicationLoop();
    StopClients();

    RankOutcome outcome;
    for (int64_t j = 0; j < count_; ++j) outcome.clients.push_back(OutcomeOf(*clients_[static_cast<size_t>(first_ + j)]));
    outcome.compute_seconds = ComputeSeconds(tallies_, calibration_);
    outcome.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    outcome.host = HostHash();
    endpoint_.Send(0, kOutcome, std::make_shared<Buffer>(EncodeOutcome(outcome, options_.diagnostics)));
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(options_.mpi_timeout));
    if (!endpoint_.Flush(deadline)) {
      Fail("its final report was not received by rank 0 within protocol.mpi_timeout: rank 0 died or stalled");
    }

    RuntimeReport report;
    report.wall_seconds = SecondsSince(start);
    report.end_time = report.wall_seconds;
    report.compute_seconds = outcome.compute_seconds;
    report.cores = static_cast<int>(std::clamp<int64_t>(outcome.cores, 1, std::max<int64_t>(1, count_)));
    return report;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    throw MpiRunError(fmt::format("rank {} (clients {}..{}): {}", endpoint_.rank(), first_, first_ + count_ - 1, what));
  }

  // Polls rank 0, forwards the outbox, keeps heartbeats going; returns on kShutdown.
  void CommunicationLoop() {
    IdleBackoff backoff;
    auto last_heard = Clock::now();
    std::vector<Outgoing> sending;
    std::vector<std::shared_ptr<Buffer>> sent;
    while (true) {
      bool active = false;
      Incoming message;
      while (endpoint_.Poll(0, message)) {
        active = true;
        last_heard = Clock::now();
        if (message.tag == kShutdown) return;
        if (message.tag == kBroadcast) {
          Deliver(*message.payload);
        } else if (message.tag != kHeartbeat) {
          Fail(fmt::format("unexpected message (tag {}) from rank 0", message.tag));
        }
      }
      {
        std::lock_guard lock(outbox_mutex_);
        sending.swap(outbox_);
      }
      for (Outgoing& out : sending) endpoint_.Send(0, out.tag, std::move(out.buffer));
      active = active || !sending.empty();
      sending.clear();
      endpoint_.Progress(&sent);
      if (!sent.empty()) {
        std::lock_guard lock(outbox_mutex_);
        for (auto& buffer : sent) spare_.push_back(std::move(buffer));
        sent.clear();
      }
      const double silent = SecondsSince(last_heard);
      if (silent > options_.mpi_timeout) {
        Fail(fmt::format("no message from the server (rank 0) for {:.3g} s (protocol.mpi_timeout = {:.3g} s): it "
                         "died, stalled or lost its connection; ending the run",
                         silent, options_.mpi_timeout));
      }
      if (endpoint_.SinceSent(0) > options_.mpi_timeout / 4.0) endpoint_.SendEmpty(0, kHeartbeat);
      if (active) {
        backoff.Reset();
      } else {
        std::unique_lock lock(outbox_mutex_);
        outbox_ready_.wait_for(lock, backoff.Next(), [&] { return !outbox_.empty(); });
      }
    }
  }

  // One v̂_k for every hosted client (one shared copy); each adopts it only if newer (Algorithm 3).
  void Deliver(const Buffer& bytes) {
    if (bytes.size() != BroadcastBytes(params_)) {
      Fail(fmt::format("a broadcast has {} bytes, expected {}: do all ranks run the same configuration?", bytes.size(),
                       BroadcastBytes(params_)));
    }
    auto model = std::make_shared<Eigen::VectorXf>(params_);
    BroadcastMessage broadcast;
    std::memcpy(&broadcast.global_round, bytes.data(), sizeof(int64_t));
    std::memcpy(model->data(), bytes.data() + kBroadcastHeaderBytes, sizeof(float) * static_cast<size_t>(params_));
    broadcast.model = std::move(model);
    for (Mailbox& mailbox : mailboxes_) {
      std::lock_guard lock(mailbox.mutex);
      mailbox.newest = broadcast;
      mailbox.pending.store(true, std::memory_order_release);
      mailbox.changed.notify_one();
    }
  }

  // Wakes every client thread for good and joins them (also on the way out of an error).
  void StopClients() {
    for (Mailbox& mailbox : mailboxes_) {
      std::lock_guard lock(mailbox.mutex);
      mailbox.shutdown = true;
      mailbox.pending.store(true, std::memory_order_release);
      mailbox.changed.notify_all();
    }
    for (auto& worker : workers_) {
      if (worker.joinable()) worker.join();
    }
  }

  // Adopts the newest broadcast, if any (ISRReceive). Returns false on shutdown.
  bool Absorb(int64_t j, bool wait) {
    Mailbox& mailbox = mailboxes_[static_cast<size_t>(j)];
    if (!wait && !mailbox.pending.load(std::memory_order_acquire)) return true;
    std::unique_lock lock(mailbox.mutex);
    if (wait) mailbox.changed.wait(lock, [&] { return mailbox.newest.has_value() || mailbox.shutdown; });
    if (mailbox.newest) {
      clients_[static_cast<size_t>(first_ + j)]->OnBroadcast(*mailbox.newest);
      mailbox.newest.reset();
    }
    mailbox.pending.store(mailbox.shutdown, std::memory_order_relaxed);
    return !mailbox.shutdown;
  }

  std::shared_ptr<Buffer> TakeBuffer(size_t bytes) {
    std::shared_ptr<Buffer> buffer;
    {
      std::lock_guard lock(outbox_mutex_);
      if (!spare_.empty()) {
        buffer = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    if (!buffer) buffer = std::make_shared<Buffer>();
    buffer->resize(bytes);
    return buffer;
  }

  void Post(Tag tag, std::shared_ptr<Buffer> buffer) {
    {
      std::lock_guard lock(outbox_mutex_);
      outbox_.push_back(Outgoing{tag, std::move(buffer)});
    }
    outbox_ready_.notify_one();
  }

  void PostStop(int64_t client, int64_t total_rounds) {
    auto buffer = std::make_shared<Buffer>(2 * sizeof(int64_t));
    const int64_t words[2] = {client, total_rounds};
    std::memcpy(buffer->data(), words, sizeof(words));
    Post(kStop, std::move(buffer));
  }

  void PostUpdate(ClientProtocol& client, UpdateMessage&& message) {
    auto buffer = TakeBuffer(UpdateBytes(params_));
    EncodeUpdate(message, buffer->data());
    // U has been copied onto the wire: the client reuses its buffer for the next round.
    client.RecycleBuffer(std::move(message.update));
    Post(kUpdate, std::move(buffer));
  }

  // The threads runtime's client loop, with messages posted to the rank's outbox.
  void ClientLoop(int64_t j) {
    const auto c = static_cast<size_t>(first_ + j);
    ClientProtocol& client = *clients_[c];
    const double straggler_factor = faults_[c].straggler_factor;
    const double extra_delay = faults_[c].extra_delay;
    while (true) {
      if (!Absorb(j, /*wait=*/false)) return;
      if (!client.CanStartRound()) {
        if (client.stopped()) return;
        if (!Absorb(j, /*wait=*/true)) return;  // Υ(k, i) is false: sleep until a newer v̂_k
        continue;
      }
      const int64_t round = client.local_round();
      if (!client.BeginRound()) {
        if (client.stop_reason() != ClientStop::kDroppedOut) PostStop(client.id(), round);
        return;
      }
      const auto slot = static_cast<size_t>(j);
      const double seconds =
          TimeCompute([&] { client.ComputeRound(); }, round_clocks_[slot].long_rounds, tallies_[slot], calibration_);
      if (straggler_factor > 1.0) {
        std::this_thread::sleep_for(std::chrono::duration<double>(seconds * (straggler_factor - 1.0)));
      }
      // A broadcast that arrived during the round replaces ŵ before the local update (Algorithm 4).
      if (!Absorb(j, /*wait=*/false)) return;
      UpdateMessage message = client.CompleteRound();
      if (extra_delay > 0.0) std::this_thread::sleep_for(std::chrono::duration<double>(extra_delay));
      PostUpdate(client, std::move(message));
    }
  }

  const RuntimeOptions& options_;
  const std::vector<ClientFaults>& faults_;
  std::vector<std::unique_ptr<ClientProtocol>>& clients_;
  Endpoint& endpoint_;
  const int64_t first_;
  const int64_t count_;
  const Eigen::Index params_;
  std::vector<Mailbox> mailboxes_;   // [j] for client first_ + j
  std::vector<ComputeTally> tallies_;      // [j] written by client thread j only; read after join
  std::vector<RoundClock> round_clocks_;   // [j] client thread j only
  std::vector<std::thread> workers_;
  CycleCalibration calibration_;
  std::mutex outbox_mutex_;
  std::condition_variable outbox_ready_;
  std::vector<Outgoing> outbox_;                // guarded by outbox_mutex_
  std::vector<std::shared_ptr<Buffer>> spare_;  // sent update buffers; guarded by outbox_mutex_
};

}  // namespace

RuntimeReport RunClientRank(const RuntimeOptions& options, const FaultPlan& faults,
                            std::vector<std::unique_ptr<ClientProtocol>>& clients, Endpoint& endpoint,
                            const Placement& placement) {
  ClientRank rank(options, faults, clients, endpoint, placement);
  return rank.Run();
}

}  // namespace asyncdp::sim::mpi
