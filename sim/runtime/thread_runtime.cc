#include "sim/runtime/thread_runtime.h"

#include <oneapi/tbb/concurrent_queue.h>
#include <spdlog/spdlog.h>

#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <variant>

#include "core/check.h"
#include "sim/runtime/cycle_clock.h"

namespace asyncdp::sim {
namespace {

enum class NoticeKind { kStop, kPause, kResume };
struct Notice {
  NoticeKind kind;
  int64_t client;
  int64_t round;  // stop/pause: rounds sent; resume: the next local round
};
// Run bookkeeping, not protocol messages: a paused client holds v̂_k (k = global_round) and stays paused;
// a client thread has returned. They travel the client's message path, so they never overtake its updates.
struct Settled {
  int64_t client;
  int64_t global_round;
};
struct ClientExit {
  int64_t client;
};
struct Tick {};
using ServerEvent = std::variant<UpdateMessage, Notice, Settled, ClientExit, Tick>;
using Clock = std::chrono::steady_clock;

// Delivers a delayed client's messages (clients.delay_ids) to the server queue extra_delay after they were
// sent, in send order, without holding up the client: message latency, as in the virtual runtime.
// Thread safety: Post from any thread; one courier thread delivers.
class Courier {
 public:
  using Sink = std::function<void(ServerEvent&&)>;
  explicit Courier(Sink sink) : sink_(std::move(sink)), thread_([this] { Loop(); }) {}
  ~Courier() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  void Post(Clock::time_point due, ServerEvent&& event) {
    {
      std::lock_guard lock(mutex_);
      if (stop_) return;
      pending_.emplace(std::make_pair(due, sequence_++), std::move(event));
    }
    changed_.notify_all();
  }

 private:
  void Loop() {
    std::unique_lock lock(mutex_);
    while (!stop_) {
      if (pending_.empty()) {
        changed_.wait(lock);
        continue;
      }
      const Clock::time_point due = pending_.begin()->first.first;
      if (Clock::now() < due) {
        changed_.wait_until(lock, due);
        continue;
      }
      auto node = pending_.extract(pending_.begin());
      lock.unlock();
      sink_(std::move(node.mapped()));
      lock.lock();
    }
  }

  Sink sink_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::pair<Clock::time_point, uint64_t>, ServerEvent> pending_;  // guarded by mutex_
  uint64_t sequence_ = 0;                                                  // guarded by mutex_
  bool stop_ = false;                                                      // guarded by mutex_
  std::thread thread_;  // last: starts after the members above exist
};

// The newest broadcast for one client, and the update buffers the server has applied (handed back with
// the broadcast, so client rounds allocate nothing). Thread safety: members guarded by mutex; `pending`
// mirrors "newest or shutdown is set" so a client that may proceed checks it without taking the lock.
struct alignas(64) Mailbox {
  std::mutex mutex;
  std::condition_variable changed;
  std::optional<BroadcastMessage> newest;  // not yet absorbed by the client
  std::vector<Eigen::VectorXf> returned;   // applied update buffers for the client to reuse
  bool shutdown = false;
  std::atomic<bool> pending{false};
};

int64_t ThreadCpuNanos() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Compute time of one client thread, on its own cache line (written by that thread, read after join).
// More client threads than cores share the machine, so a long round is likely descheduled part-way and
// its wall interval would count other threads' work: rounds whose previous round took over 50 µs are
// timed with the thread's CPU clock (≈ 0.3 µs per read, negligible there); short rounds with the TSC
// (≈ 10 ns per read; being descheduled inside a few µs is rare).
struct alignas(64) ClientTally {
  uint64_t tsc_ticks = 0;
  int64_t cpu_nanos = 0;
  bool long_rounds = true;  // the first round: all threads start at once
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
        mailboxes_(clients.size()),
        tallies_(clients.size()),
        returned_(clients.size()) {
    for (const ClientFaults& f : faults_) {
      if (f.extra_delay > 0.0 && !courier_) {
        courier_ = std::make_unique<Courier>([this](ServerEvent&& event) { server_queue_.push(std::move(event)); });
      }
    }
  }

  RuntimeReport Run() {
    start_ = Clock::now();
    std::vector<std::thread> workers;
    workers.reserve(clients_.size());
    for (size_t c = 0; c < clients_.size(); ++c) workers.emplace_back([this, c] { ClientLoop(c); });
    std::thread watchdog;
    if (options_.exclude_after > 0) watchdog = std::thread([this] { WatchdogLoop(); });

    ServerLoop();

    for (auto& mailbox : mailboxes_) {
      std::lock_guard lock(mailbox.mutex);
      mailbox.shutdown = true;
      mailbox.pending.store(true, std::memory_order_release);
      mailbox.changed.notify_all();
    }
    for (auto& w : workers) w.join();
    // Only now: a client may still Post to the courier until it has exited (destroying it earlier raced
    // with Post — ThreadSanitizer). Nothing protocol-relevant is left in it (Done() waited for every
    // exit/settle), so its remaining deliveries go to a queue nobody reads.
    courier_.reset();
    {
      std::lock_guard lock(watchdog_mutex_);
      watchdog_stop_ = true;
    }
    watchdog_cv_.notify_all();
    if (watchdog.joinable()) watchdog.join();

    RuntimeReport report;
    report.wall_seconds = Seconds();
    report.end_time = report.wall_seconds;
    uint64_t tsc_ticks = 0;
    int64_t cpu_nanos = 0;
    for (const ClientTally& tally : tallies_) {
      tsc_ticks += tally.tsc_ticks;
      cpu_nanos += tally.cpu_nanos;
    }
    report.compute_seconds = calibration_.Seconds(tsc_ticks) + static_cast<double>(cpu_nanos) * 1e-9;
    report.observer_seconds = calibration_.Seconds(observer_ticks_);
    report.cores = static_cast<int>(std::clamp<size_t>(std::thread::hardware_concurrency(), 1, clients_.size()));
    report.gradients = clock_.gradients;
    report.updates = server_.updates_applied();
    report.excluded = server_.excluded_clients();
    report.cancelled = cancelled_.load(std::memory_order_relaxed);
    for (size_t c = 0; c < clients_.size(); ++c) {
      if (!clients_[c]->stopped() && !clients_[c]->paused()) report.unfinished.push_back(static_cast<int64_t>(c));
    }
    report.stalled = !report.cancelled && !report.unfinished.empty();
    clock_.time = report.wall_seconds;
    observer_.OnFinish(server_, clock_);
    return report;
  }

 private:
  double Seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  // Adopts the newest broadcast, if any (ISRReceive). Returns false on shutdown.
  bool Absorb(size_t c, bool wait) {
    Mailbox& mailbox = mailboxes_[c];
    if (!wait && !mailbox.pending.load(std::memory_order_acquire)) return true;  // nothing new: no lock
    std::unique_lock lock(mailbox.mutex);
    if (wait) mailbox.changed.wait(lock, [&] { return mailbox.newest.has_value() || mailbox.shutdown; });
    if (mailbox.newest) {
      const bool was_paused = clients_[c]->paused();
      clients_[c]->OnBroadcast(*mailbox.newest);
      mailbox.newest.reset();
      if (was_paused && !clients_[c]->paused()) {
        Send(c, Notice{NoticeKind::kResume, static_cast<int64_t>(c), clients_[c]->local_round()});
      }
    }
    for (Eigen::VectorXf& buffer : mailbox.returned) clients_[c]->RecycleBuffer(std::move(buffer));
    mailbox.returned.clear();
    mailbox.pending.store(mailbox.shutdown, std::memory_order_relaxed);
    return !mailbox.shutdown;
  }

  // Runs the round's compute step and returns its duration in seconds.
  double TimedCompute(ClientProtocol& client, ClientTally& tally) {
    double seconds = 0.0;
    if (tally.long_rounds) {
      const int64_t t0 = ThreadCpuNanos();
      client.ComputeRound();
      const int64_t nanos = ThreadCpuNanos() - t0;
      tally.cpu_nanos += nanos;
      seconds = static_cast<double>(nanos) * 1e-9;
    } else {
      uint64_t ticks = 0;
      AddTicks(ticks, [&] { client.ComputeRound(); });
      tally.tsc_ticks += ticks;
      seconds = calibration_.ApproxSeconds(ticks);
    }
    tally.long_rounds = seconds > 50e-6;
    return seconds;
  }

  // A message from client c to the server: straight into the queue, or through the courier after the
  // client's extra delay (clients.delay_ids: message latency, the client itself goes on).
  void Send(size_t c, ServerEvent&& event) {
    const double delay = faults_[c].extra_delay;
    if (delay > 0.0) {
      courier_->Post(Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(delay)),
                     std::move(event));
    } else {
      server_queue_.push(std::move(event));
    }
  }

  void ClientLoop(size_t c) {
    RunClient(c);
    Send(c, ClientExit{static_cast<int64_t>(c)});
  }

  void RunClient(size_t c) {
    ClientProtocol& client = *clients_[c];
    const auto id = static_cast<int64_t>(c);
    const double straggler_factor = faults_[c].straggler_factor;
    if (client.stop_reason() == ClientStop::kNotAdmitted) {
      Send(c, Notice{NoticeKind::kStop, id, 0});  // never joins, and says so
      return;
    }
    int64_t settled_at = -1;  // the newest v̂_k this paused client has told the server it holds
    while (true) {
      if (!Absorb(c, /*wait=*/false)) return;
      if (options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed) && !client.stopped()) {
        // Every completed round was sent: stop here as if the plan ended, so the server releases the rest.
        cancelled_.store(true, std::memory_order_relaxed);
        server_queue_.push(Notice{NoticeKind::kStop, id, client.local_round()});
        return;
      }
      if (!client.CanStartRound()) {
        if (client.stopped()) return;
        if (client.paused() && client.global_round() != settled_at) {
          settled_at = client.global_round();
          Send(c, Settled{id, settled_at});
        }
        if (!Absorb(c, /*wait=*/true)) return;  // Υ(k, i) is false or paused: sleep until a newer v̂_k
        continue;
      }
      const int64_t round = client.local_round();
      if (!client.BeginRound()) {
        if (client.paused()) {
          Send(c, Notice{NoticeKind::kPause, id, round});
          settled_at = -1;
          continue;
        }
        if (client.stop_reason() != ClientStop::kDroppedOut) Send(c, Notice{NoticeKind::kStop, id, round});
        return;
      }
      const double seconds = TimedCompute(client, tallies_[c]);
      if (straggler_factor > 1.0) {
        std::this_thread::sleep_for(std::chrono::duration<double>(seconds * (straggler_factor - 1.0)));
      }
      // A broadcast that arrived during the round replaces ŵ before the local update (Algorithm 4). On
      // shutdown the round is abandoned: never completed, sent or counted.
      if (!Absorb(c, /*wait=*/false)) return;
      Send(c, client.CompleteRound());
    }
  }

  void WatchdogLoop() {
    const auto period = std::chrono::duration<double>(options_.exclude_after / 4.0);
    std::unique_lock lock(watchdog_mutex_);
    while (!watchdog_cv_.wait_for(lock, period, [&] { return watchdog_stop_; })) server_queue_.push(Tick{});
  }

  // Called once per global round as it forms, while v̂ is exactly v̂_k.
  void OnGlobalRound() {
    // A new model is new work: every client gets a fresh exclude_after to respond.
    if (options_.exclude_after > 0) std::fill(last_heard_.begin(), last_heard_.end(), Seconds());
    clock_.time = Seconds();
    AddTicks(observer_ticks_, [&] { observer_.OnGlobalRound(server_, clock_); });
  }

  // Delivers the newest broadcast (older ones of the same batch are superseded: a client only ever
  // adopts the newest, Algorithm 3) and hands applied update buffers back.
  void Publish(const BroadcastMessage& broadcast) {
    for (size_t c = 0; c < mailboxes_.size(); ++c) {
      Mailbox& mailbox = mailboxes_[c];
      std::lock_guard lock(mailbox.mutex);
      mailbox.newest = broadcast;
      for (Eigen::VectorXf& buffer : returned_[c]) mailbox.returned.push_back(std::move(buffer));
      returned_[c].clear();
      mailbox.pending.store(true, std::memory_order_release);
      mailbox.changed.notify_one();
    }
  }

  void Handle(ServerEvent& event, std::optional<BroadcastMessage>& newest) {
    std::optional<BroadcastMessage> broadcast;
    if (auto* update = std::get_if<UpdateMessage>(&event)) {
      if (options_.exclude_after > 0) last_heard_[update->client] = Seconds();
      // The planned s_i (the plan is immutable, so reading it from the server thread is safe): the server
      // learns (i, U) only, never the realised batch size.
      clock_.gradients += clients_[update->client]->plan().sample_sizes[update->local_round];
      observer_.OnUpdate(*update, clock_);
      broadcast = server_.OnUpdate(*update);
      if (returned_[update->client].size() < 4) returned_[update->client].push_back(std::move(update->update));
    } else if (auto* notice = std::get_if<Notice>(&event)) {
      if (options_.exclude_after > 0) last_heard_[notice->client] = Seconds();
      switch (notice->kind) {
        case NoticeKind::kStop: broadcast = server_.OnClientStopped(notice->client, notice->round); break;
        case NoticeKind::kPause: broadcast = server_.OnClientPaused(notice->client, notice->round); break;
        case NoticeKind::kResume: broadcast = server_.OnClientResumed(notice->client); break;
      }
    } else if (auto* settled = std::get_if<Settled>(&event)) {
      settled_at_[settled->client] = settled->global_round;
    } else if (auto* exit = std::get_if<ClientExit>(&event)) {
      exited_[exit->client] = true;
    } else if (std::holds_alternative<Tick>(event)) {
      const double now = Seconds();
      // Only laggards can be at fault: a client that waits for v̂_k is silent because of them.
      for (size_t c = 0; c < clients_.size(); ++c) {
        if (!server_.lagging(static_cast<int64_t>(c)) || now - last_heard_[c] <= options_.exclude_after) {
          continue;
        }
        spdlog::warn("server: excluding client {} (silent for {:.3g} s)", c, now - last_heard_[c]);
        auto excluded = server_.Exclude(static_cast<int64_t>(c));
        clock_.time = now;
        AddTicks(observer_ticks_, [&] { observer_.OnClientExcluded(static_cast<int64_t>(c), clock_); });
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

  // End of run (docs/design.md, "End of a run"; the same rule as the virtual runtime): nothing is left to
  // happen — no client blocks, and every client thread has returned (its messages all handled: the exit
  // travels behind them) or is paused holding the newest v̂_k. Excluded clients that still run keep the run
  // going; their updates are applied and re-admit them.
  bool Done() const {
    if (!server_.all_released()) return false;
    for (size_t c = 0; c < clients_.size(); ++c) {
      const bool settled = server_.paused(static_cast<int64_t>(c)) && settled_at_[c] >= server_.global_round();
      if (!exited_[c] && !settled) return false;
    }
    return true;
  }

  void ServerLoop() {
    ServerEvent event;
    while (!Done()) {
      server_queue_.pop(event);  // blocks without spinning
      // Apply everything that is already queued before waking clients: one delivery per batch.
      std::optional<BroadcastMessage> newest;
      Handle(event, newest);
      while (server_queue_.try_pop(event)) Handle(event, newest);
      if (newest) Publish(*newest);
    }
  }

  const RuntimeOptions& options_;
  const std::vector<ClientFaults>& faults_;
  std::vector<std::unique_ptr<ClientProtocol>>& clients_;
  ServerProtocol& server_;
  RunObserver& observer_;
  std::vector<Mailbox> mailboxes_;
  std::vector<ClientTally> tallies_;   // [c] written by client thread c only; read after join
  std::vector<std::vector<Eigen::VectorXf>> returned_;  // server thread: buffers to hand back per client
  CycleCalibration calibration_;
  uint64_t observer_ticks_ = 0;  // server thread only
  std::atomic<bool> cancelled_{false};  // set by a client thread that saw options_.cancel; read after join
  // std::allocator instead of oneTBB's default cache_aligned_allocator: that one recycles queue pages
  // through libtbbmalloc, which Debian does not build for ThreadSanitizer, so TSan would see a page's
  // reuse as a race between its last pop and the next push. malloc/free are visible to TSan.
  tbb::concurrent_bounded_queue<ServerEvent, std::allocator<ServerEvent>> server_queue_;
  std::mutex watchdog_mutex_;
  std::condition_variable watchdog_cv_;
  bool watchdog_stop_ = false;  // guarded by watchdog_mutex_
  RunClock clock_;              // server thread only
  std::vector<double> last_heard_ = std::vector<double>(clients_.size(), 0.0);  // server thread only
  std::vector<int64_t> settled_at_ = std::vector<int64_t>(clients_.size(), -1);  // server thread only
  std::vector<bool> exited_ = std::vector<bool>(clients_.size(), false);         // server thread only
  std::unique_ptr<Courier> courier_;  // only with delayed clients
  Clock::time_point start_;
};

}  // namespace

RuntimeReport RunThreads(const RuntimeOptions& options, const FaultPlan& faults,
                         std::vector<std::unique_ptr<ClientProtocol>>& clients, ServerProtocol& server,
                         RunObserver& observer) {
  ASYNCDP_CHECK(faults.clients.size() == clients.size());
  ThreadRun run(options, faults, clients, server, observer);
  return run.Run();
}

}  // namespace asyncdp::sim
