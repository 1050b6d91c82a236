// Ranks 1..P−1 of the MPI runtime: the rank's hosted clients are tasks on a bounded pool of worker threads
// (sim/runtime/task_scheduler.h, as in the threads runtime: default the rank's cores, protocol.worker_threads
// to choose), so a rank with 10^5 clients has a handful of threads; the rank's communication loop runs on
// the calling thread, the only one that calls MPI (MPI_THREAD_FUNNELED). Client steps hand packed messages
// to the loop through an outbox (mutex + condition variable, which also wakes the loop at once); the loop
// delivers each v̂_k into the hosted clients' mailboxes and wakes the clients waiting for it.
#include <fmt/format.h>
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "sim/runtime/compute_timer.h"
#include "sim/runtime/cycle_clock.h"
#include "sim/runtime/mpi_ranks.h"
#include "sim/runtime/mpi_runtime.h"
#include "sim/runtime/task_scheduler.h"
#include "sim/runtime/thread_runtime.h"
#include "sim/runtime/thread_start.h"
#include "sim/runtime/worker_scratch.h"

namespace asyncdp::sim::mpi {
namespace {

using Clock = std::chrono::steady_clock;
using Step = TaskScheduler::Step;

constexpr size_t kMaxInFlight = 1024;  // sends handed to MPI and not yet complete, per worker rank
using Next = TaskScheduler::Next;

// The newest broadcast for one client. Members guarded by mutex; `pending` mirrors "newest or shutdown
// is set" so a client checks it without taking the lock.
struct alignas(64) Mailbox {
  std::mutex mutex;
  std::optional<BroadcastMessage> newest;
  bool shutdown = false;
  std::atomic<bool> pending{false};
};

// A hosted client's state between its task's steps (touched by the step running it only).
struct alignas(64) ClientSlot {
  bool started = false;
  int64_t settled_at = -1;                // the newest v̂_k this paused client has told the server it holds
  bool long_rounds = true;                // time the next round with the thread CPU clock (compute_timer.h)
  bool round_in_progress = false;         // a straggler's round: completes at its deadline
};

struct Outgoing {
  Tag tag;
  std::shared_ptr<Buffer> buffer;
};

class ClientRank {
 public:
  ClientRank(const RuntimeOptions& options, const FaultPlan& faults,
             std::vector<std::unique_ptr<ClientProtocol>>& clients, int64_t params, Endpoint& endpoint,
             const Placement& placement)
      : options_(options),
        faults_(faults.clients),
        clients_(clients),
        endpoint_(endpoint),
        ids_(placement.Hosted(endpoint.rank())),
        count_(static_cast<int64_t>(ids_.size())),
        where_(placement.Describe(endpoint.rank())),
        params_(params),
        workers_(ThreadRuntimeWorkers(options, static_cast<size_t>(std::max<int64_t>(1, count_)))),
        mailboxes_(static_cast<size_t>(count_)),
        slots_(static_cast<size_t>(count_)),
        tallies_(static_cast<size_t>(workers_)),
        scratch_(static_cast<size_t>(workers_)),
        scheduler_(count_, MakeHooks()) {
    for (int64_t j = 0; j < count_; ++j) hosted_.push_back(j);
  }

  ~ClientRank() { StopClients(); }

  RuntimeReport Run() {
    const auto start = Clock::now();
    // The pool runs on a helper thread (its worker 0 plus workers − 1 more); this thread keeps MPI. A refused
    // thread becomes ThreadStartError (exit 2 on every rank via the session's abort).
    try {
      pool_ = std::thread([this] {
        try {
          scheduler_.Run(workers_, "protocol.worker_threads");
        } catch (...) {
          std::lock_guard lock(outbox_mutex_);
          pool_failure_ = std::current_exception();
          outbox_ready_.notify_one();
        }
      });
    } catch (const std::system_error& e) {
      throw ThreadStartFailure("protocol.worker_threads", "MPI rank " + std::to_string(endpoint_.rank()) + " pool",
                               0, 1, e);
    }
    CommunicationLoop();
    StopClients();

    RankOutcome outcome;
    for (const int64_t c : ids_) outcome.clients.push_back(OutcomeOf(*clients_[static_cast<size_t>(c)]));
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
    report.cores = static_cast<int>(std::clamp<int64_t>(std::min<int64_t>(outcome.cores, workers_), 1,
                                                        std::max<int64_t>(1, count_)));
    return report;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    throw MpiRunError(fmt::format("rank {} ({}): {}", endpoint_.rank(), where_, what));
  }

  TaskScheduler::Hooks MakeHooks() {
    TaskScheduler::Hooks hooks;
    hooks.run = [this](int worker, int64_t j) { return RunStep(worker, j); };
    hooks.recheck = [this](int64_t j) {
      if (mailboxes_[static_cast<size_t>(j)].pending.load(std::memory_order_acquire)) scheduler_.Wake(j);
    };
    if (options_.exclude_after > 0.0) hooks.quiescent = [this] { ReportIdle(/*busy=*/1); };
    return hooks;
  }

  // Every hosted client has stopped or waits for a broadcast newer than the newest one delivered, and no
  // timer is pending: this rank will send nothing until rank 0 sends a new model. Rank 0, told so by every
  // rank, skips the idle time to the next exclusion as the threads runtime does (docs/design.md, "End of a
  // run"); without it a dropped-out client and exclude_after = 10^6 kept an MPI run waiting 11 days.
  // Checked by the quiescent hook (`busy` = 1, the worker calling it) and by Deliver after each broadcast
  // (0: the clients may have taken it in their running steps and gone quiet before delivered_round_ said
  // so, or have all stopped). Deliver publishes delivered_round_ after waking the clients, so equal reads
  // before and after the check mean every broadcast up to k had woken its clients before the quiet moment
  // (a stale k is harmless: rank 0 counts only the newest). The report goes behind every message this rank
  // sent before (MPI keeps order); once per k.
  void ReportIdle(int busy) {
    const int64_t before = delivered_round_.load(std::memory_order_acquire);
    if (!scheduler_.quiescent(busy)) return;
    const int64_t k = delivered_round_.load(std::memory_order_acquire);
    if (k != before || idle_reported_.exchange(k, std::memory_order_relaxed) == k) return;
    auto buffer = std::make_shared<Buffer>(sizeof(int64_t));
    std::memcpy(buffer->data(), &k, sizeof(k));
    Post(kIdle, std::move(buffer));
  }

  // Polls rank 0, forwards the outbox, keeps heartbeats going; returns on kShutdown.
  void CommunicationLoop() {
    IdleBackoff backoff;
    auto last_heard = Clock::now();
    std::vector<Outgoing> sending;
    // Flow control: at most kMaxInFlight sends in MPI at once, the rest wait here in order. Without it a rank
    // of 250,000 clients handed MPI 500,000 updates at the start, and every progress pass went over all of
    // them while rank 0 drained a few hundred at a time (quadratic: the run made no progress).
    std::deque<Outgoing> backlog;
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
      for (Outgoing& out : sending) backlog.push_back(std::move(out));
      sending.clear();
      endpoint_.Progress(&sent);
      while (!backlog.empty() && endpoint_.pending_sends() < kMaxInFlight) {
        endpoint_.Send(0, backlog.front().tag, std::move(backlog.front().buffer));
        backlog.pop_front();
        active = true;
      }
      if (!sent.empty()) {
        std::lock_guard lock(outbox_mutex_);
        for (auto& buffer : sent) spare_.push_back(std::move(buffer));
        sent.clear();
      }
      {
        std::lock_guard lock(outbox_mutex_);
        if (pool_failure_) std::rethrow_exception(pool_failure_);
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
        outbox_ready_.wait_for(lock, backoff.Next(), [&] { return !outbox_.empty() || pool_failure_; });
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
    }
    scheduler_.WakeAll(hosted_);  // the clients waiting for a newer v̂_k (Υ) run again
    delivered_round_.store(broadcast.global_round, std::memory_order_release);  // after the wake (ReportIdle)
    if (options_.exclude_after > 0.0) ReportIdle(/*busy=*/0);
  }

  // Ends the clients for good and joins the pool (also on the way out of an error): running steps finish,
  // nothing runs again.
  void StopClients() {
    for (Mailbox& mailbox : mailboxes_) {
      std::lock_guard lock(mailbox.mutex);
      mailbox.shutdown = true;
      mailbox.pending.store(true, std::memory_order_release);
    }
    scheduler_.Finish();
    if (pool_.joinable()) pool_.join();
  }

  // Adopts the newest broadcast, if any (ISRReceive). Returns false on shutdown. The broadcast is taken out
  // under the mailbox's lock and applied after it (a paused client's accuracy check runs there).
  bool Absorb(int64_t j) {
    Mailbox& mailbox = mailboxes_[static_cast<size_t>(j)];
    if (!mailbox.pending.load(std::memory_order_acquire)) return true;
    std::optional<BroadcastMessage> incoming;
    bool shutdown = false;
    {
      std::lock_guard lock(mailbox.mutex);
      incoming.swap(mailbox.newest);
      shutdown = mailbox.shutdown;
      mailbox.pending.store(shutdown, std::memory_order_relaxed);
    }
    if (incoming) {
      ClientProtocol& client = *clients_[static_cast<size_t>(ids_[static_cast<size_t>(j)])];
      const bool was_paused = client.paused();
      client.OnBroadcast(*incoming);
      // A received model fell below the accuracy target: the client re-joins (sim/protocol/client.h).
      if (was_paused && !client.paused()) PostWords(kResume, client.id(), client.local_round());
    }
    return !shutdown;
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

  // A message of hosted client `client` to rank 0: into the outbox now, or at a deadline extra_delay from
  // now (clients.delay_ids: message latency; the client goes on, as in the threads and virtual runtimes).
  // Timers fire in (deadline, insertion) order, so a client's messages keep their order; the action takes
  // outbox_mutex_ under the scheduler's lock, and nothing takes them the other way round.
  void PostFrom(int64_t client, Tag tag, std::shared_ptr<Buffer> buffer) {
    const double delay = faults_[static_cast<size_t>(client)].extra_delay;
    if (delay <= 0.0) return Post(tag, std::move(buffer));
    scheduler_.AddTimer(After(delay), [this, tag, b = std::move(buffer)]() mutable {
      Post(tag, std::move(b));
      return false;
    });
  }

  void Post(Tag tag, std::shared_ptr<Buffer> buffer) {
    {
      std::lock_guard lock(outbox_mutex_);
      outbox_.push_back(Outgoing{tag, std::move(buffer)});
    }
    outbox_ready_.notify_one();
  }

  // A two-word notice: stop (client, rounds sent), pause (client, rounds sent), resume (client, next round),
  // settled (client, k).
  void PostWords(Tag tag, int64_t client, int64_t value) {
    auto buffer = std::make_shared<Buffer>(2 * sizeof(int64_t));
    const int64_t words[2] = {client, value};
    std::memcpy(buffer->data(), words, sizeof(words));
    PostFrom(client, tag, std::move(buffer));
  }
  void PostStop(int64_t client, int64_t total_rounds) { PostWords(kStop, client, total_rounds); }

  void PostUpdate(ClientProtocol& client, UpdateMessage&& message) {
    auto buffer = TakeBuffer(UpdateBytes(params_));
    EncodeUpdate(message, buffer->data());
    // U has been copied onto the wire: the client reuses its buffer for the next round.
    client.RecycleBuffer(std::move(message.update));
    PostFrom(client.id(), kUpdate, std::move(buffer));
  }

  static Clock::time_point After(double seconds) {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  }

  // One step of hosted client j (the threads runtime's client step, with messages posted to the outbox):
  // it runs rounds while Υ(k, i) allows, idles until a newer v̂_k, sleeps through a straggler's extra compute
  // time.
  Step RunStep(int worker, int64_t j) {
    const auto c = static_cast<size_t>(ids_[static_cast<size_t>(j)]);
    ClientProtocol& client = *clients_[c];
    ClientSlot& slot = slots_[static_cast<size_t>(j)];
    if (!slot.started) {
      slot.started = true;
      if (client.stop_reason() == ClientStop::kNotAdmitted) {  // never joins, and says so
        PostStop(client.id(), 0);
        return {Next::kExit};
      }
    }
    if (slot.round_in_progress) {  // the straggler's deadline has passed
      slot.round_in_progress = false;
      // A broadcast that arrived during the round replaces ŵ before the local update (Algorithm 4).
      if (!Absorb(j)) return {Next::kExit};
      PostUpdate(client, client.CompleteRound());
    }
    while (true) {
      if (!Absorb(j)) return {Next::kExit};
      if (!client.CanStartRound()) {
        if (client.stopped()) return {Next::kExit};
        // Paused at its accuracy target: tells the server once per v̂_k it holds (the end of the run waits
        // for paused clients to hold the newest).
        if (client.paused() && client.global_round() != slot.settled_at) {
          slot.settled_at = client.global_round();
          PostWords(kSettled, client.id(), slot.settled_at);
        }
        return {Next::kIdle};  // Υ(k, i) is false or paused: runnable again when a newer v̂_k arrives
      }
      const int64_t round = client.local_round();
      if (!client.BeginRound()) {
        if (client.paused()) {  // a phase ended at target (proactive framework)
          PostWords(kPause, client.id(), round);
          slot.settled_at = -1;
          continue;
        }
        if (client.stop_reason() != ClientStop::kDroppedOut) PostStop(client.id(), round);
        return {Next::kExit};
      }
      models::Workspace* scratch = scratch_[static_cast<size_t>(worker)].For(client);
      const double seconds = TimeCompute([&] { client.ComputeRound(scratch); }, slot.long_rounds,
                                         tallies_[static_cast<size_t>(worker)], calibration_);
      const double straggler_factor = faults_[c].straggler_factor;
      if (straggler_factor > 1.0) {
        slot.round_in_progress = true;
        return {Next::kSleep, After(seconds * (straggler_factor - 1.0))};
      }
      if (!Absorb(j)) return {Next::kExit};
      PostUpdate(client, client.CompleteRound());
      if (scheduler_.others_waiting()) return {Next::kYield};  // many clients on few workers: take turns
    }
  }

  const RuntimeOptions& options_;
  const std::vector<ClientFaults>& faults_;
  std::vector<std::unique_ptr<ClientProtocol>>& clients_;
  Endpoint& endpoint_;
  const std::vector<int64_t> ids_;  // [j]: the client task j runs (this rank's, increasing)
  const int64_t count_;
  const std::string where_;         // "clients a..b" or how many, for messages
  const Eigen::Index params_;
  const int workers_;
  std::vector<int64_t> hosted_;            // task ids 0 .. count_ − 1 (client ids_[j])
  std::vector<Mailbox> mailboxes_;         // [j] for client ids_[j]
  std::vector<ClientSlot> slots_;          // [j]: touched by the step running task j only
  std::vector<ComputeTally> tallies_;      // [worker]
  std::vector<WorkerScratch> scratch_;     // [worker]: model scratch shared by the clients it runs
  CycleCalibration calibration_;
  std::mutex outbox_mutex_;
  std::condition_variable outbox_ready_;
  std::vector<Outgoing> outbox_;                // guarded by outbox_mutex_
  std::vector<std::shared_ptr<Buffer>> spare_;  // sent update buffers; guarded by outbox_mutex_
  std::exception_ptr pool_failure_;             // a hook's exception; guarded by outbox_mutex_
  std::atomic<int64_t> delivered_round_{0};     // k of the newest broadcast delivered (comm thread writes)
  std::atomic<int64_t> idle_reported_{-1};      // the k of the last kIdle posted (ReportIdle)
  TaskScheduler scheduler_;                     // after everything its hooks read
  std::thread pool_;
};

}  // namespace

RuntimeReport RunClientRank(const RuntimeOptions& options, const FaultPlan& faults,
                            std::vector<std::unique_ptr<ClientProtocol>>& clients, int64_t params, Endpoint& endpoint,
                            const Placement& placement) {
  ClientRank rank(options, faults, clients, params, endpoint, placement);
  return rank.Run();
}

}  // namespace asyncdp::sim::mpi
