#include "sim/runtime/virtual_runtime.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <queue>
#include <thread>

#include "core/check.h"
#include "core/random.h"
#include "sim/runtime/cycle_clock.h"
#include "sim/runtime/compute_pool.h"
#include "sim/runtime/worker_scratch.h"
#include "sim/runtime/event_queue.h"
#include "sim/protocol/liveness.h"
#include "sim/runtime/run_end.h"

namespace asyncdp::sim {
namespace {

enum class EventKind : uint8_t {
  kRoundDone,
  kServerReceive,
  kServerStopNotice,
  kServerPauseNotice,
  kServerResumeNotice,
  kBroadcastArrive,
  kBroadcastFanOut,
  kExcludeCheck
};

// A trivially copyable heap entry (the heap moves entries on every push and pop); payloads too large for
// `arg` (updates, broadcast models) live in slot pools and `arg` is their slot.
struct Event {
  EventKey key;  // holds the time and the client the event belongs to (sender for server events)
  int64_t arg;   // kServerReceive: update slot; kServerStop/PauseNotice: total rounds; kBroadcastArrive:
                 // broadcast slot; kBroadcastFanOut: fan-out slot; kExcludeCheck: heard count when
                 // scheduled (void if the client was heard from since)
  EventKind kind;

  double time() const { return TimeOf(key); }
  int64_t client() const { return ClientOf(key); }
};

// Min-heap on the key.
struct Later {
  bool operator()(const Event& a, const Event& b) const { return a.key > b.key; }
};

// A broadcast arrival for a client that is computing: it keeps the key its event would have had.
struct InboxEntry {
  EventKey key;
  int64_t slot;
};

// The arrivals of one broadcast at clients waiting for it, in commit order. One heap entry stands for the
// next arrival; after it commits, the following ones commit straight away while they precede everything
// in the heap (the order is exactly that of one event per arrival, at a fraction of the heap operations).
struct FanOut {
  std::vector<InboxEntry> arrivals;
  size_t next = 0;
};

// One broadcast v̂_k and how many recipients have yet to receive it.
struct PendingBroadcast {
  BroadcastMessage message;
  int64_t undelivered = 0;
};

class VirtualRun {
 public:
  VirtualRun(const RuntimeOptions& options, const FaultPlan& faults,
             std::vector<std::unique_ptr<ClientProtocol>>& clients, ServerProtocol& server, RunObserver& observer)
      : options_(options),
        faults_(faults.clients),
        clients_(clients),
        server_(server),
        observer_(observer),
        heard_count_(clients.size(), 0),
        liveness_(static_cast<int64_t>(clients.size()), options.exclude_after),
        auto_threads_(options.worker_threads == 0),
        threads_(std::clamp(auto_threads_ ? static_cast<int>(std::thread::hardware_concurrency())
                                          : static_cast<int>(options.worker_threads),
                            1, static_cast<int>(clients.size()))),
        pooled_(clients.size(), 0) {
    if (threads_ > 1 && !auto_threads_) StartPool();
    // Per client at most one round computing plus a few messages in flight.
    std::vector<Event> storage;
    storage.reserve(4 * clients.size() + 16);
    queue_ = decltype(queue_)(Later{}, std::move(storage));
  }

  RuntimeReport Run() {
    const auto wall_start = std::chrono::steady_clock::now();
    if (options_.exclude_after > 0) {
      for (size_t c = 0; c < clients_.size(); ++c) {
        Push(options_.exclude_after, static_cast<int64_t>(c), EventKind::kExcludeCheck, 0);
      }
    }
    for (size_t c = 0; c < clients_.size(); ++c) {
      // A client that never joins (its budget cannot reach its target) says so at once.
      if (clients_[c]->stop_reason() == ClientStop::kNotAdmitted) {
        SendNotice(static_cast<int64_t>(c), EventKind::kServerStopNotice, 0);
      } else {
        TryStart(static_cast<int64_t>(c));
      }
    }
    // End of run (docs/design.md, "End of a run", the same rule as the threads and MPI runtimes): when
    // nothing is left to happen — every message delivered, every client stopped, paused with the newest
    // model, or waiting for a broadcast that cannot come — or when everything else is done and the clients
    // still excluded have stayed silent for exclude_after more: they are cut off, their rounds in progress
    // abandoned and their messages in flight dropped (an excluded client heard from before that is
    // re-admitted, and its updates are applied).
    while (!queue_.empty()) {
      if (options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed)) {
        report_.cancelled = true;  // in-flight rounds are joined by ~ComputePool; nothing more commits
        break;
      }
      // Cheap tests first: without an exclusion, or before exclude_after has passed since the newest model,
      // nobody can be cut off (the scan is O(clients) per event).
      if (server_.all_released() && !server_.excluded_clients().empty() &&
          queue_.top().time() > liveness_.last_model() + options_.exclude_after) {
        const double cut_off = CutOffTime();
        if (queue_.top().time() > cut_off) {
          now_ = std::max(now_, cut_off);  // rounds in flight are joined by ~ComputePool; nothing commits
          break;
        }
      }
      const Event event = queue_.top();
      queue_.pop();
      now_ = event.time();
      ++report_.events;
      Dispatch(event);
    }
    SettleReport(report_, OutcomesOf(clients_), PlannedRounds(clients_), server_, "virtual");
    report_.end_time = now_;
    report_.compute_seconds = calibration_.Seconds(ComputeTicks());
    report_.observer_seconds = calibration_.Seconds(observer_ticks_);
    report_.cores = pool_ ? threads_ : 1;
    report_.gradients = clock_.gradients;
    report_.updates = server_.updates_applied();
    report_.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    clock_.time = now_;
    observer_.OnFinish(server_, clock_);
    return report_;
  }

 private:
  void Push(double time, int64_t client, EventKind kind, int64_t arg) {
    queue_.push(Event{MakeKey(time, client, next_sequence_++), arg, kind});
  }

  // With the server releasing everyone: the time at which the run ends by cutting off the clients still
  // excluded, if nothing is heard from them before (Liveness::CutOffAt, the threads and MPI runtimes' rule,
  // on the virtual clock); ∞ while some client is neither done nor excluded, or none is excluded. Done is
  // what the wall-time runtimes wait for: stopped with every message delivered (the exit travels behind
  // them), or paused at the server holding the newest v̂_k. O(clients), evaluated only at the end of a run.
  double CutOffTime() const {
    constexpr double kNever = std::numeric_limits<double>::infinity();
    double cut_off = -kNever;
    for (size_t c = 0; c < clients_.size(); ++c) {
      const auto id = static_cast<int64_t>(c);
      const ClientProtocol& client = *clients_[c];
      if (in_flight_[c] == 0 && !client.in_round()) {
        if (client.stopped()) continue;
        if (client.paused() && server_.paused(id) && client.global_round() >= server_.global_round()) continue;
      }
      if (!server_.excluded(id)) return kNever;
      cut_off = std::max(cut_off, liveness_.CutOffAt(server_, id));
    }
    return cut_off == -kNever ? kNever : cut_off;
  }

  void Dispatch(const Event& event) {
    switch (event.kind) {
      case EventKind::kRoundDone: return OnRoundDone(event.client(), event.key);
      case EventKind::kServerReceive: return OnServerReceive(event.client(), event.arg);
      case EventKind::kServerStopNotice: return OnServerNotice(event.client(), event.kind, event.arg);
      case EventKind::kServerPauseNotice: return OnServerNotice(event.client(), event.kind, event.arg);
      case EventKind::kServerResumeNotice: return OnServerNotice(event.client(), event.kind, event.arg);
      case EventKind::kBroadcastArrive: return OnBroadcastArrive(event.client(), event.arg);
      case EventKind::kBroadcastFanOut: return OnBroadcastFanOut(event.arg);
      case EventKind::kExcludeCheck: return OnExcludeCheck(event.client(), event.arg);
    }
  }

  double Latency(int64_t client, uint32_t slot) const {
    double latency = options_.latency_mean;
    if (options_.latency == LatencyModel::kExponential) {
      RandomStream stream(StreamKey{options_.seed, static_cast<uint32_t>(client), slot, StreamPurpose::kLatency});
      latency *= stream.NextExponential();
    }
    return latency;
  }

  // A notice from client c about local round `round` (stop, pause: the rounds sent; resume: its next
  // round). Like an update it takes the message latency plus the client's extra delay (clients.delay_ids).
  void SendNotice(int64_t c, EventKind kind, int64_t round) {
    const double latency = Latency(c, 2 * static_cast<uint32_t>(round)) + faults_[c].extra_delay;
    ++in_flight_[c];
    Push(now_ + latency, c, kind, round);
  }

  void TryStart(int64_t c) {
    ClientProtocol& client = *clients_[c];
    if (!client.CanStartRound()) return;
    const int64_t round = client.local_round();
    if (!client.BeginRound()) {
      // A client that completed its plan or its budget, or paused at its target, says so; a dropped-out
      // client is silent.
      if (client.paused()) {
        SendNotice(c, EventKind::kServerPauseNotice, round);
      } else if (client.stop_reason() != ClientStop::kDroppedOut) {
        SendNotice(c, EventKind::kServerStopNotice, round);
      }
      return;
    }
    const double duration =
        options_.gradient_cost * static_cast<double>(client.plan().sample_sizes[round]) * faults_[c].speed;
    if (pool_) {
      pool_->Submit(c);  // joined at the round's RoundDone
      pooled_[c] = 1;
    } else {
      TimedCompute(client, /*thread=*/0);
      if (auto_threads_ && threads_ > 1 && ++inline_rounds_ == kAutoProbeRounds) {
        // worker_threads = 0 (auto): background threads pay off only when rounds are long; a hand-off
        // costs a few µs, a logistic-regression round about as much. Results do not depend on this.
        const double mean = calibration_.ApproxSeconds(ComputeTicks()) / kAutoProbeRounds;
        if (mean > kAutoPoolMinRoundSeconds) StartPool();
      }
    }
    Push(now_ + duration, c, EventKind::kRoundDone, 0);
  }

  uint64_t ComputeTicks() const { return std::accumulate(compute_ticks_.begin(), compute_ticks_.end(), uint64_t{0}); }

  void StartPool() {
    pool_ = std::make_unique<ComputePool>(threads_ - 1, static_cast<int64_t>(clients_.size()),
                                          [this](int64_t c, int thread) { TimedCompute(*clients_[c], thread); });
  }

  // `thread`: 0 the event loop's thread, 1.. the pool's (ComputePool); each has its own scratch.
  void TimedCompute(ClientProtocol& client, int thread) {
    models::Workspace* scratch = scratch_[static_cast<size_t>(thread)].For(client);
    // One slot per client, no atomic: a client's round runs on one thread at a time, and the pool's Wait
    // orders it before the event loop reads anything.
    AddTicks(compute_ticks_[client.id()], [&] { client.ComputeRound(scratch); });
  }

  void OnRoundDone(int64_t c, EventKey key) {
    if (pooled_[c]) {
      pool_->Wait(c);
      pooled_[c] = 0;
    }
    DeliverInbox(c, key);
    UpdateMessage message = clients_[c]->CompleteRound();
    double latency = Latency(c, 2 * static_cast<uint32_t>(message.local_round));
    latency += faults_[c].extra_delay;
    ++in_flight_[c];
    Push(now_ + latency, c, EventKind::kServerReceive, updates_.Put(std::move(message)));
    TryStart(c);
    // Not computing any more (waiting for Υ or stopped): later arrivals need their own events again.
    if (!clients_[c]->in_round()) {
      for (const InboxEntry& entry : inbox_[c]) queue_.push(Event{entry.key, entry.slot, EventKind::kBroadcastArrive});
      inbox_[c].clear();
    }
  }

  // Hands client c, in commit order, the broadcasts that arrived while it computed and commit before
  // `before` (its RoundDone). Nothing reads a computing client's model or global round in between, so
  // this is the same history as one event per arrival, with a third fewer heap operations.
  void DeliverInbox(int64_t c, EventKey before) {
    std::vector<InboxEntry>& inbox = inbox_[c];
    if (inbox.empty()) return;
    std::sort(inbox.begin(), inbox.end(), [](const InboxEntry& a, const InboxEntry& b) { return a.key < b.key; });
    size_t delivered = 0;
    for (; delivered < inbox.size() && inbox[delivered].key < before; ++delivered) {
      Deliver(c, inbox[delivered].slot);
      ++report_.events;
    }
    inbox.erase(inbox.begin(), inbox.begin() + static_cast<std::ptrdiff_t>(delivered));
  }

  void Deliver(int64_t c, int64_t slot) {
    PendingBroadcast& pending = broadcasts_[slot];
    clients_[c]->OnBroadcast(pending.message);
    if (--pending.undelivered == 0) ReleaseBroadcast(slot);
  }

  // Restarts client c's silence timer at `from`: a check fires exclude_after later unless c is heard from
  // (or gets a new model to work on) before then. The timer of a new model starts when it *arrives* at the
  // client, so a message in flight never counts as silence.
  void ArmExcludeCheck(int64_t c, double from) {
    ++heard_count_[c];
    if (options_.exclude_after > 0 && server_.blocking(c)) {
      Push(from + options_.exclude_after, c, EventKind::kExcludeCheck, heard_count_[c]);
    }
  }
  void ArmExcludeCheck(int64_t c) { ArmExcludeCheck(c, now_); }

  void OnServerReceive(int64_t c, int64_t slot) {
    UpdateMessage& message = updates_[slot];
    --in_flight_[c];
    liveness_.Heard(c, now_);
    // The planned s_i: the server learns (i, U) only, never the realised batch size.
    clock_.gradients += clients_[c]->plan().sample_sizes[message.local_round];
    observer_.OnUpdate(message, clock_);
    auto broadcast = server_.OnUpdate(message);
    clients_[c]->RecycleBuffer(std::move(message.update));
    updates_.Free(slot);
    ArmExcludeCheck(c);
    if (broadcast) Broadcast(std::move(*broadcast));
  }

  void OnServerNotice(int64_t c, EventKind kind, int64_t round) {
    auto broadcast = kind == EventKind::kServerStopNotice    ? server_.OnClientStopped(c, round)
                     : kind == EventKind::kServerPauseNotice ? server_.OnClientPaused(c, round)
                                                             : server_.OnClientResumed(c);
    --in_flight_[c];
    liveness_.Heard(c, now_);
    ArmExcludeCheck(c);
    if (broadcast) Broadcast(std::move(*broadcast));
  }

  // Drops the model snapshot of a broadcast nobody still has to receive and frees its slot.
  void ReleaseBroadcast(int64_t slot) {
    broadcasts_[slot].message.model.reset();
    broadcasts_.Free(slot);
  }

  void OnBroadcastArrive(int64_t c, int64_t slot) {
    const bool was_paused = clients_[c]->paused();
    Deliver(c, slot);
    if (was_paused && !clients_[c]->paused()) {
      SendNotice(c, EventKind::kServerResumeNotice, clients_[c]->local_round());
    }
    TryStart(c);
  }

  void OnBroadcastFanOut(int64_t fan_slot) {
    while (true) {
      const InboxEntry arrival = fanouts_[fan_slot].arrivals[fanouts_[fan_slot].next++];
      now_ = TimeOf(arrival.key);
      OnBroadcastArrive(ClientOf(arrival.key), arrival.slot);
      const FanOut& fan = fanouts_[fan_slot];
      if (fan.next == fan.arrivals.size()) {
        fanouts_.Free(fan_slot);
        return;
      }
      const EventKey next = fan.arrivals[fan.next].key;
      if (!queue_.empty() && queue_.top().key < next) {
        queue_.push(Event{next, fan_slot, EventKind::kBroadcastFanOut});
        return;
      }
      ++report_.events;
    }
  }

  void OnExcludeCheck(int64_t c, int64_t heard_count) {
    if (heard_count != heard_count_[c] || !server_.blocking(c)) return;
    if (!server_.lagging(c)) {
      // Waiting for a broadcast that laggards hold up: not its fault. Look again later.
      Push(now_ + options_.exclude_after, c, EventKind::kExcludeCheck, heard_count_[c]);
      return;
    }
    spdlog::warn("server: excluding client {} (silent for {} s of virtual time)", c, options_.exclude_after);
    auto broadcast = server_.Exclude(c);
    clock_.time = now_;
    AddTicks(observer_ticks_, [&] { observer_.OnClientExcluded(c, clock_); });
    if (broadcast) Broadcast(std::move(*broadcast));
  }

  void Broadcast(BroadcastMessage message) {
    liveness_.ModelFormed(now_);
    clock_.time = now_;
    AddTicks(observer_ticks_, [&] { observer_.OnGlobalRound(server_, clock_); });
    const uint32_t latency_slot = 2 * static_cast<uint32_t>(message.global_round) + 1;
    const int64_t slot = broadcasts_.Put(PendingBroadcast{std::move(message), 0});
    const int64_t fan_slot = fanouts_.Acquire();
    std::vector<InboxEntry>& waiting = fanouts_[fan_slot].arrivals;
    waiting.clear();
    fanouts_[fan_slot].next = 0;
    int64_t recipients = 0;
    for (size_t c = 0; c < clients_.size(); ++c) {
      const auto id = static_cast<int64_t>(c);
      const double arrival = now_ + Latency(id, latency_slot);
      // A new model is new work: every blocking client gets a fresh exclude_after from its arrival.
      if (options_.exclude_after > 0 && server_.blocking(id)) ArmExcludeCheck(id, arrival);
      if (clients_[c]->stopped()) continue;
      const EventKey key = MakeKey(arrival, id, next_sequence_++);
      if (clients_[c]->in_round()) {
        inbox_[c].push_back({key, slot});  // delivered when its RoundDone commits (DeliverInbox)
      } else {
        waiting.push_back({key, slot});
      }
      ++recipients;
    }
    const auto by_key = [](const InboxEntry& a, const InboxEntry& b) { return a.key < b.key; };
    if (!std::is_sorted(waiting.begin(), waiting.end(), by_key)) std::sort(waiting.begin(), waiting.end(), by_key);
    if (waiting.empty()) {
      fanouts_.Free(fan_slot);
    } else {
      queue_.push(Event{waiting.front().key, fan_slot, EventKind::kBroadcastFanOut});
    }
    if (recipients == 0) {
      ReleaseBroadcast(slot);
    } else {
      broadcasts_[slot].undelivered = recipients;
    }
  }

  const RuntimeOptions& options_;
  const std::vector<ClientFaults>& faults_;
  std::vector<std::unique_ptr<ClientProtocol>>& clients_;
  ServerProtocol& server_;
  RunObserver& observer_;
  std::vector<int64_t> heard_count_;
  Liveness liveness_;  // the end-of-run cut-off only (sim/protocol/liveness.h); exclusion has its timers
  std::vector<int64_t> in_flight_ = std::vector<int64_t>(clients_.size(), 0);  // [c]: messages to the server
  static constexpr int64_t kAutoProbeRounds = 4;
  static constexpr double kAutoPoolMinRoundSeconds = 50e-6;
  const bool auto_threads_;  // protocol.worker_threads = 0: use the pool only if rounds are long
  int threads_;              // threads that may compute rounds (event loop included)
  int64_t inline_rounds_ = 0;
  std::vector<WorkerScratch> scratch_ = std::vector<WorkerScratch>(static_cast<size_t>(threads_));  // [thread]
  std::unique_ptr<ComputePool> pool_;  // rounds compute in the background (threads_ > 1)
  std::vector<uint8_t> pooled_;        // [c]: client c's round in flight was submitted to pool_
  std::priority_queue<Event, std::vector<Event>, Later> queue_;
  SlotPool<UpdateMessage> updates_;         // updates on their way to the server
  SlotPool<PendingBroadcast> broadcasts_;   // broadcasts on their way to clients
  SlotPool<FanOut> fanouts_;                // arrivals at waiting clients, one heap entry each
  std::vector<std::vector<InboxEntry>> inbox_ = std::vector<std::vector<InboxEntry>>(clients_.size());
  uint64_t next_sequence_ = 0;
  double now_ = 0.0;
  RunClock clock_;
  RuntimeReport report_;
  CycleCalibration calibration_;
  std::vector<uint64_t> compute_ticks_ = std::vector<uint64_t>(clients_.size(), 0);  // [client]
  uint64_t observer_ticks_ = 0;
};

}  // namespace

RuntimeReport RunVirtual(const RuntimeOptions& options, const FaultPlan& faults,
                         std::vector<std::unique_ptr<ClientProtocol>>& clients, ServerProtocol& server,
                         RunObserver& observer) {
  ASYNCDP_CHECK(faults.clients.size() == clients.size());
  VirtualRun run(options, faults, clients, server, observer);
  return run.Run();
}

}  // namespace asyncdp::sim
