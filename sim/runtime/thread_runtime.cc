#include "sim/runtime/thread_runtime.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>
#include <variant>

#include "core/check.h"
#include "sim/protocol/liveness.h"
#include "sim/runtime/compute_timer.h"
#include "sim/runtime/cycle_clock.h"
#include "sim/runtime/lock_briefly.h"
#include "sim/runtime/run_end.h"
#include "sim/runtime/task_scheduler.h"
#include "sim/runtime/worker_scratch.h"

namespace asyncdp::sim {
namespace {

using Clock = TaskScheduler::Clock;
using Step = TaskScheduler::Step;
using Next = TaskScheduler::Next;

enum class NoticeKind { kStop, kPause, kResume };
struct Notice {
  NoticeKind kind;
  int64_t client;
  int64_t round;  // stop/pause: rounds sent; resume: the next local round
};
// Run bookkeeping, not protocol messages: a paused client holds v̂_k (k = global_round) and stays paused;
// a client has exited. They travel the client's message path, so they never overtake its updates.
struct Settled {
  int64_t client;
  int64_t global_round;
};
struct ClientExit {
  int64_t client;
};
struct Tick {};     // exclude_after: look for silent laggards
struct Recheck {};  // nothing to apply: only re-evaluate the end of the run
using ServerEvent = std::variant<UpdateMessage, Notice, Settled, ClientExit, Tick, Recheck>;
// An event with the time it reached the server's inbox: silence counts from arrival, not from when a
// draining worker got round to it (sim/protocol/liveness.h).
struct Arrival {
  double at;
  ServerEvent event;
};

// A deadline `seconds` from now; saturating (a 10⁹ straggler factor must not overflow the clock).
Clock::time_point DeadlineAfter(double seconds) {
  const double capped = std::min(seconds, 1e9);  // ~31 years: never reached in a run
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(capped));
}

// The newest broadcast for one client and the update buffers the server has applied (handed back with the
// broadcast, so rounds allocate nothing). `pending` mirrors "something is here" so a client step checks it
// without the lock; the scheduler's recheck reads it too (a wake racing with the client going idle).
struct alignas(64) Mailbox {
  std::mutex mutex;
  std::optional<BroadcastMessage> newest;  // guarded by mutex
  std::vector<Eigen::VectorXf> returned;   // guarded by mutex
  std::atomic<bool> pending{false};        // written under mutex; read by the client's steps and recheck
};

// What only the client's own steps touch (the scheduler serialises them).
struct ClientSlot {
  bool started = false;
  bool round_in_progress = false;  // computed; completes at its straggler deadline
  bool long_rounds = true;         // time the next round with the thread CPU clock (compute_timer.h)
  int64_t settled_at = -1;         // the newest v̂_k this paused client has told the server it holds
  std::optional<BroadcastMessage> incoming;  // swapped with the mailbox's (no allocation)
  std::vector<Eigen::VectorXf> buffers;      // swapped with the mailbox's
};

class ThreadRun {
 public:
  ThreadRun(const RuntimeOptions& options, const FaultPlan& faults,
            std::vector<std::unique_ptr<ClientProtocol>>& clients, ServerProtocol& server, RunObserver& observer)
      : options_(options),
        faults_(faults.clients),
        clients_(clients),
        server_(server),
        observer_(observer),
        workers_(ThreadRuntimeWorkers(options, clients.size())),
        mailboxes_(clients.size()),
        slots_(clients.size()),
        tallies_(static_cast<size_t>(workers_)),
        scratch_(static_cast<size_t>(workers_)),
        returned_(clients.size()),
        all_clients_(clients.size()),
        liveness_(static_cast<int64_t>(clients.size()), options.exclude_after),
        scheduler_(static_cast<int64_t>(clients.size()), MakeHooks()) {
    std::iota(all_clients_.begin(), all_clients_.end(), int64_t{0});
  }

  RuntimeReport Run(const ThreadStarter& starter) {
    start_ = Clock::now();
    if (options_.exclude_after > 0) {
      const auto period = std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(options_.exclude_after / 4.0));
      scheduler_.AddTimer(start_ + period, [this] { return PostToServer(Tick{}); }, period);
    }
    scheduler_.Run(workers_, "protocol.worker_threads", starter);
    return Report();
  }

 private:
  TaskScheduler::Hooks MakeHooks() {
    TaskScheduler::Hooks hooks;
    hooks.run = [this](int worker, int64_t c) { return RunStep(worker, static_cast<size_t>(c)); };
    hooks.recheck = [this](int64_t c) {
      if (mailboxes_[c].pending.load(std::memory_order_acquire)) scheduler_.Wake(c);
    };
    hooks.after_timers = [this] { DrainServer(); };
    if (options_.cancel != nullptr) {
      hooks.poll = [this] {
        if (CancelRequested()) CancelAll();
      };
      hooks.poll_period = std::chrono::milliseconds(5);
    }
    hooks.quiescent = [this] {
      // Every client is idle and only exclusion ticks are pending: nothing can happen before the next
      // exclusion is due but the ticks themselves. As the virtual clock does, the run skips that idle time
      // on its liveness clock and excludes now: the outcome waiting would give, without the wait, whatever
      // exclude_after is (the runtimes agree on it; docs/design.md, "End of a run"). With no exclusion to
      // come, the clients still running wait for a broadcast no one can send: the run ends and the report
      // names them (stalled).
      if (options_.cancel != nullptr && CancelRequested()) return CancelAll();
      bool stalled = false;
      {
        std::lock_guard lock(server_mutex_);
        if (draining_ || !inbox_.empty() || over_.load(std::memory_order_relaxed)) return;  // not quiescent yet
        const double next = liveness_.NextExclusion(server_);
        if (std::isfinite(next)) {
          const double skip = Liveness::SkipPast(next, LivenessSeconds());
          skipped_.store(skipped_.load(std::memory_order_relaxed) + skip, std::memory_order_relaxed);
        } else {
          stalled = true;
          over_.store(true, std::memory_order_relaxed);
        }
      }
      if (!stalled) {
        if (PostToServer(Tick{})) DrainServer();  // the exclusion, now due
        return;
      }
      scheduler_.Finish();  // outside server_mutex_ (lock order: the scheduler's first)
    };
    return hooks;
  }

  // Wall-clock seconds since the start: the report's timing and the observers' clock.
  double Seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  // Silence and exclusion are judged on this clock: wall time plus the idle time skipped at quiescent
  // moments (hooks.quiescent), so an exclusion only waiting could bring happens at once.
  double LivenessSeconds() const { return Seconds() + skipped_.load(std::memory_order_relaxed); }

  bool CancelRequested() const {
    return cancelled_.load(std::memory_order_relaxed) ||
           (options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed));
  }

  // ---- client side: one step of client c on worker `worker` -------------------------------------------

  Step RunStep(int worker, size_t c) {
    ClientProtocol& client = *clients_[c];
    ClientSlot& slot = slots_[c];
    const auto id = static_cast<int64_t>(c);
    if (CancelRequested()) return CancelClient(c);
    if (!slot.started) {
      slot.started = true;
      if (client.stop_reason() == ClientStop::kNotAdmitted) {
        Send(c, Notice{NoticeKind::kStop, id, 0});  // never joins, and says so
        return Exit(c);
      }
    }
    if (slot.round_in_progress) {  // the straggler's deadline has passed
      slot.round_in_progress = false;
      FinishRound(c);
    }
    while (true) {
      if (over_.load(std::memory_order_relaxed)) return {Next::kExit};
      Absorb(c);
      if (CancelRequested()) return CancelClient(c);
      if (!client.CanStartRound()) {
        if (client.stopped()) return Exit(c);
        if (client.paused() && client.global_round() != slot.settled_at) {
          slot.settled_at = client.global_round();
          Send(c, Settled{id, slot.settled_at});
        }
        return {Next::kIdle};  // Υ(k, i) is false or paused: runnable again when a newer v̂_k arrives
      }
      const int64_t round = client.local_round();
      if (!client.BeginRound()) {
        if (client.paused()) {
          Send(c, Notice{NoticeKind::kPause, id, round});
          slot.settled_at = -1;
          continue;
        }
        if (client.stop_reason() != ClientStop::kDroppedOut) Send(c, Notice{NoticeKind::kStop, id, round});
        return Exit(c);
      }
      models::Workspace* scratch = scratch_[static_cast<size_t>(worker)].For(client);
      const double seconds = TimeCompute([&] { client.ComputeRound(scratch); }, slot.long_rounds,
                                         tallies_[static_cast<size_t>(worker)], calibration_);
      const double straggler_factor = faults_[c].straggler_factor;
      if (straggler_factor > 1.0) {
        // A straggler's round completes (factor − 1) × its compute time later; no worker waits for it.
        slot.round_in_progress = true;
        return {Next::kSleep, DeadlineAfter(seconds * (straggler_factor - 1.0))};
      }
      FinishRound(c);
      if (scheduler_.others_waiting()) return {Next::kYield};  // many clients on few workers: take turns
    }
  }

  // A broadcast that arrived during the round replaces ŵ before the local update (Algorithm 4). Once the
  // run is over the round is abandoned: never completed, sent or counted.
  void FinishRound(size_t c) {
    if (over_.load(std::memory_order_relaxed)) return;
    Absorb(c);
    Send(c, clients_[c]->CompleteRound());
  }

  Step Exit(size_t c) {
    local_exits_.fetch_add(1, std::memory_order_acq_rel);  // before the exit is posted (Done under cancel)
    Send(c, ClientExit{static_cast<int64_t>(c)});
    return {Next::kExit};
  }

  // Every completed round was sent: stop here as if the plan ended, so the server releases the rest.
  Step CancelClient(size_t c) {
    CancelAll();
    ClientProtocol& client = *clients_[c];
    if (!client.stopped()) Send(c, Notice{NoticeKind::kStop, static_cast<int64_t>(c), client.local_round()});
    return Exit(c);
  }

  // The first to notice RuntimeOptions::cancel drops every timer (delays, straggler deadlines, ticks) and
  // wakes every waiting client, which then stops at once.
  void CancelAll() {
    if (cancelled_.exchange(true)) return;
    scheduler_.DropTimersAndWakeAll();
    if (PostToServer(Recheck{})) DrainServer();  // every client may have exited already
  }

  // Adopts the newest broadcast, if any (ISRReceive), and takes back applied update buffers.
  void Absorb(size_t c) {
    Mailbox& mailbox = mailboxes_[c];
    if (!mailbox.pending.load(std::memory_order_acquire)) return;  // nothing new: no lock
    ClientSlot& slot = slots_[c];
    {
      LockBriefly(mailbox.mutex);
      std::lock_guard lock(mailbox.mutex, std::adopt_lock);
      slot.incoming.swap(mailbox.newest);
      slot.buffers.swap(mailbox.returned);
      mailbox.pending.store(false, std::memory_order_relaxed);
    }
    ClientProtocol& client = *clients_[c];
    for (Eigen::VectorXf& buffer : slot.buffers) client.RecycleBuffer(std::move(buffer));
    slot.buffers.clear();
    if (slot.incoming) {
      const bool was_paused = client.paused();
      client.OnBroadcast(*slot.incoming);
      slot.incoming.reset();
      if (was_paused && !client.paused()) {
        Send(c, Notice{NoticeKind::kResume, static_cast<int64_t>(c), client.local_round()});
      }
    }
  }

  // A message from client c to the server: into its inbox now, or at a deadline extra_delay from now
  // (clients.delay_ids: message latency; the client goes on). Timers fire in (deadline, insertion) order, so
  // a client's messages keep their order. After a cancel nothing is delayed any more.
  void Send(size_t c, ServerEvent&& event) {
    const double delay = faults_[c].extra_delay;
    if (delay > 0.0 && !cancelled_.load(std::memory_order_relaxed)) {
      scheduler_.AddTimer(DeadlineAfter(delay),
                          [this, e = std::move(event)]() mutable { return PostToServer(std::move(e)); });
    } else if (PostToServer(std::move(event))) {
      DrainServer();
    }
  }

  // ---- server side: whichever worker finds the inbox idle applies everything queued ---------------------

  // Returns true when the caller must now DrainServer() (nobody else is draining).
  bool PostToServer(ServerEvent&& event) {
    LockBriefly(server_mutex_);
    std::lock_guard lock(server_mutex_, std::adopt_lock);
    if (over_.load(std::memory_order_relaxed)) return false;
    // The arrival time matters only to silence (exclude_after); without it no clock is read per message.
    inbox_.push_back(Arrival{options_.exclude_after > 0.0 ? LivenessSeconds() : 0.0, std::move(event)});
    if (draining_) return false;
    draining_ = true;
    return true;
  }

  // Applies everything queued, then publishes one broadcast per batch; repeats until the inbox is empty.
  // One worker at a time (draining_), so the server and the observers see one thread at a time, each
  // batch happening-after the previous one through server_mutex_. The end of the run is decided only with
  // the inbox empty, under the lock that every post takes: a message that arrived is never dropped.
  void DrainServer() {
    while (true) {
      {
        std::unique_lock lock(server_mutex_, std::defer_lock);
        LockBriefly(lock);
        if (over_.load(std::memory_order_relaxed)) {
          draining_ = false;
          return;
        }
        if (inbox_.empty()) {
          draining_ = false;
          const bool done = Done();
          if (done) over_.store(true, std::memory_order_relaxed);  // under the lock: later posts are refused
          lock.unlock();
          // The scheduler's lock is taken outside server_mutex_ (timer actions post under the scheduler's
          // lock: the other order).
          if (done) scheduler_.Finish();
          return;
        }
        batch_.swap(inbox_);
      }
      std::optional<BroadcastMessage> newest;
      for (Arrival& arrival : batch_) Handle(arrival, newest);
      batch_.clear();
      if (newest) Publish(*newest);
    }
  }

  // Called once per global round as it forms, while v̂ is exactly v̂_k.
  void OnGlobalRound() {
    // A new model is new work: every client gets a fresh exclude_after to respond.
    clock_.time = Seconds();
    if (options_.exclude_after > 0.0) liveness_.ModelFormed(LivenessSeconds());
    AddTicks(observer_ticks_, [&] { observer_.OnGlobalRound(server_, clock_); });
  }

  // Delivers the newest broadcast (older ones of the same batch are superseded: a client only ever adopts
  // the newest, Algorithm 3), hands applied update buffers back, and wakes the clients waiting for it.
  void Publish(const BroadcastMessage& broadcast) {
    for (size_t c = 0; c < mailboxes_.size(); ++c) {
      if (exited_[c]) continue;
      Mailbox& mailbox = mailboxes_[c];
      LockBriefly(mailbox.mutex);
      std::lock_guard lock(mailbox.mutex, std::adopt_lock);
      mailbox.newest = broadcast;
      for (Eigen::VectorXf& buffer : returned_[c]) mailbox.returned.push_back(std::move(buffer));
      returned_[c].clear();
      mailbox.pending.store(true, std::memory_order_release);
    }
    scheduler_.WakeAll(all_clients_);  // after the mailboxes: a woken client finds the model there
  }

  void Handle(Arrival& arrival, std::optional<BroadcastMessage>& newest);
  bool Done() const;
  RuntimeReport Report();

  const RuntimeOptions& options_;
  const std::vector<ClientFaults>& faults_;
  std::vector<std::unique_ptr<ClientProtocol>>& clients_;
  ServerProtocol& server_;
  RunObserver& observer_;
  const int workers_;
  std::vector<Mailbox> mailboxes_;
  std::vector<ClientSlot> slots_;       // [c]: client c's steps only
  std::vector<ComputeTally> tallies_;   // [w]: worker w only; read after the run
  std::vector<WorkerScratch> scratch_;  // [w]: worker w only (its rounds' model workspaces)
  std::vector<std::vector<Eigen::VectorXf>> returned_;  // server side: buffers to hand back per client
  std::vector<int64_t> all_clients_;
  CycleCalibration calibration_;
  std::atomic<bool> cancelled_{false};  // set once cancel is seen; read by every step
  std::atomic<bool> over_{false};       // the run has ended: steps abandon their rounds, posts are dropped
  std::atomic<int64_t> local_exits_{0};  // clients whose steps have ended (read by Done under cancel)
  std::mutex server_mutex_;
  std::vector<Arrival> inbox_;  // guarded by server_mutex_
  bool draining_ = false;           // guarded by server_mutex_: a worker is applying the inbox
  // Server side (the draining worker only):
  std::vector<Arrival> batch_;
  uint64_t observer_ticks_ = 0;
  RunClock clock_;
  Liveness liveness_;  // silence and exclusion (sim/protocol/liveness.h); clock = LivenessSeconds()
  std::atomic<double> skipped_{0.0};  // idle seconds skipped (written under server_mutex_, quiescent only)
  std::vector<int64_t> settled_at_ = std::vector<int64_t>(clients_.size(), -1);
  std::vector<char> exited_ = std::vector<char>(clients_.size(), 0);
  Clock::time_point start_;
  TaskScheduler scheduler_;  // last: its hooks use the members above
};

void ThreadRun::Handle(Arrival& arrival, std::optional<BroadcastMessage>& newest) {
  ServerEvent& event = arrival.event;
  std::optional<BroadcastMessage> broadcast;
  if (auto* update = std::get_if<UpdateMessage>(&event)) {
    liveness_.Heard(update->client, arrival.at);
    // The planned s_i (the plan is immutable, so reading it here is safe): the server learns (i, U) only,
    // never the realised batch size.
    clock_.gradients += clients_[update->client]->plan().sample_sizes[update->local_round];
    observer_.OnUpdate(*update, clock_);
    broadcast = server_.OnUpdate(*update);
    if (returned_[update->client].size() < 4) returned_[update->client].push_back(std::move(update->update));
  } else if (auto* notice = std::get_if<Notice>(&event)) {
    liveness_.Heard(notice->client, arrival.at);
    switch (notice->kind) {
      case NoticeKind::kStop: broadcast = server_.OnClientStopped(notice->client, notice->round); break;
      case NoticeKind::kPause: broadcast = server_.OnClientPaused(notice->client, notice->round); break;
      case NoticeKind::kResume: broadcast = server_.OnClientResumed(notice->client); break;
    }
  } else if (auto* settled = std::get_if<Settled>(&event)) {
    settled_at_[settled->client] = settled->global_round;
  } else if (auto* exit = std::get_if<ClientExit>(&event)) {
    exited_[exit->client] = 1;
  } else if (std::holds_alternative<Tick>(event)) {
    // Silence is judged at the tick's arrival: everything that arrived before it has been handled.
    const double now = arrival.at;
    for (const int64_t c : liveness_.ToExclude(server_, now)) {
      spdlog::warn("server: excluding client {} (silent for {:.3g} s)", c, liveness_.SilentFor(c, now));
      auto excluded = server_.Exclude(c);
      clock_.time = Seconds();
      AddTicks(observer_ticks_, [&] { observer_.OnClientExcluded(c, clock_); });
      if (excluded) {
        OnGlobalRound();
        newest = std::move(excluded);
      }
    }
  }
  if (broadcast) {
    OnGlobalRound();
    newest = std::move(broadcast);
  }
}

// End of run (docs/design.md, "End of a run"), evaluated with the inbox empty: no client blocks, and every
// client has exited (its messages all handled: the exit travels behind them), is paused holding the newest
// v̂_k, or is excluded and has stayed silent for exclude_after more (Liveness::CutOff): in wall time an
// excluded client is not waited for beyond that, whatever its delay or straggler factor — it is cut off,
// and the report says so (truncated). The exclusion ticks re-evaluate this. After a cancel: every client
// has stopped stepping.
bool ThreadRun::Done() const {
  if (cancelled_.load(std::memory_order_relaxed)) {
    return local_exits_.load(std::memory_order_acquire) == static_cast<int64_t>(clients_.size());
  }
  if (!server_.all_released()) return false;
  const double now = LivenessSeconds();
  for (size_t c = 0; c < clients_.size(); ++c) {
    const auto id = static_cast<int64_t>(c);
    const bool settled = server_.paused(id) && settled_at_[c] >= server_.global_round();
    if (exited_[c] || settled) continue;
    if (!liveness_.CutOff(server_, id, now)) return false;
  }
  return true;
}

RuntimeReport ThreadRun::Report() {
  RuntimeReport report;
  report.wall_seconds = Seconds();
  report.end_time = report.wall_seconds;
  report.compute_seconds = ComputeSeconds(tallies_, calibration_);
  report.observer_seconds = calibration_.Seconds(observer_ticks_);
  report.cores = workers_;
  report.worker_cpu_seconds = scheduler_.worker_cpu_seconds();
  report.gradients = clock_.gradients;
  report.updates = server_.updates_applied();
  report.cancelled = cancelled_.load(std::memory_order_relaxed);
  SettleReport(report, OutcomesOf(clients_), PlannedRounds(clients_), server_, "threads");
  clock_.time = report.wall_seconds;
  observer_.OnFinish(server_, clock_);
  return report;
}

}  // namespace

int ThreadRuntimeWorkers(const RuntimeOptions& options, size_t clients) {
  const int64_t wanted = options.worker_threads > 0
                             ? options.worker_threads
                             : static_cast<int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  return static_cast<int>(std::clamp<int64_t>(wanted, 1, std::max<int64_t>(1, static_cast<int64_t>(clients))));
}

RuntimeReport RunThreads(const RuntimeOptions& options, const FaultPlan& faults,
                         std::vector<std::unique_ptr<ClientProtocol>>& clients, ServerProtocol& server,
                         RunObserver& observer, const ThreadStarter& starter) {
  ASYNCDP_CHECK(faults.clients.size() == clients.size());
  ThreadRun run(options, faults, clients, server, observer);
  return run.Run(starter);
}

}  // namespace asyncdp::sim
