// Rank 0 of the MPI runtime: the server, the observers, and the watch over the other ranks.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <thread>
#include <utility>

#include "sim/protocol/liveness.h"
#include "sim/runtime/cycle_clock.h"
#include "sim/runtime/mpi_ranks.h"
#include "sim/runtime/mpi_runtime.h"
#include "sim/runtime/run_end.h"

namespace asyncdp::sim::mpi {
namespace {

using Clock = std::chrono::steady_clock;

// Messages applied before the server publishes the newest v̂: a batch bounds how long a rank waits for a
// broadcast while others keep sending.
constexpr int kMaxBatch = 64;

class ServerRank {
 public:
  ServerRank(const RuntimeOptions& options, const PlanTable& plans, ServerProtocol& server,
             RunObserver& observer, Endpoint& endpoint, const Placement& placement)
      : options_(options),
        plans_(plans),
        server_(server),
        observer_(observer),
        endpoint_(endpoint),
        placement_(placement),
        params_(server.model().size()),
        finished_(plans.size(), false),
        settled_at_(plans.size(), -1),
        liveness_(static_cast<int64_t>(plans.size()), options.exclude_after),
        last_heard_client_(plans.size(), 0.0),
        last_heard_rank_(static_cast<size_t>(placement.ranks), 0.0),
        idle_at_(static_cast<size_t>(placement.ranks), -1),
        running_(static_cast<size_t>(placement.ranks), 0) {
    for (int rank = 0; rank < placement.ranks; ++rank) {
      hosted_.push_back(rank == 0 ? std::vector<int64_t>{} : placement.Hosted(rank));
      running_[static_cast<size_t>(rank)] = static_cast<int64_t>(hosted_.back().size());
    }
    update_.update.resize(params_);
  }

  RuntimeReport Run(std::vector<ClientOutcome>& outcomes) {
    start_ = Clock::now();
    IdleBackoff backoff;
    double last_tick = 0.0;
    // The liveness check looks at every client (O(n)): at most a few times per time-out, not after every batch
    // of messages (at 10^6 clients it had become the server's bottleneck).
    const double liveness_period = std::min(0.25, options_.mpi_timeout / 8.0);
    double last_liveness = 0.0;
    while (!RunOver()) {
      bool active = false;
      std::optional<BroadcastMessage> newest;
      Incoming message;
      for (int n = 0; n < kMaxBatch && endpoint_.Poll(MPI_ANY_SOURCE, message); ++n) {
        active = true;
        Handle(message, newest);
      }
      if (options_.exclude_after > 0 && Seconds() - last_tick >= options_.exclude_after / 4.0) {
        last_tick = Seconds();
        ExcludeLaggards(newest);
      }
      if (newest) Publish(*newest);
      if (!active && options_.exclude_after > 0 && EveryRankIdle()) SkipToNextExclusion();
      endpoint_.Progress();
      if (Seconds() - last_liveness >= liveness_period) {
        last_liveness = Seconds();
        CheckLiveness();
      }
      SendHeartbeats();
      if (active) {
        backoff.Reset();
      } else {
        std::this_thread::sleep_for(backoff.Next());
      }
    }
    const auto rank_outcomes = Shutdown();

    RuntimeReport report;
    report.wall_seconds = Seconds();
    report.end_time = report.wall_seconds;
    report.observer_seconds = calibration_.Seconds(observer_ticks_);
    report.gradients = clock_.gradients;
    report.updates = server_.updates_applied();
    Assemble(rank_outcomes, report, outcomes);
    std::vector<int64_t> planned_rounds;
    for (const RoundPlan& plan : plans_) planned_rounds.push_back(plan.rounds());
    SettleReport(report, outcomes, planned_rounds, server_, "mpi");
    const double rounds = static_cast<double>(std::max<int64_t>(1, server_.global_round()));
    spdlog::info("mpi: rank 0 received {} messages ({} bytes) and sent {} ({} bytes) over {} global rounds: "
                 "{:.0f} bytes in and {:.0f} bytes out per global round",
                 endpoint_.messages_received(), endpoint_.bytes_received(), endpoint_.messages_sent(),
                 endpoint_.bytes_sent(), server_.global_round(), static_cast<double>(endpoint_.bytes_received()) / rounds,
                 static_cast<double>(endpoint_.bytes_sent()) / rounds);
    clock_.time = report.wall_seconds;
    observer_.OnFinish(server_, clock_);
    return report;
  }

 private:
  double Seconds() const { return SecondsSince(start_); }
  // Silence and exclusion are judged on this clock: wall time plus the idle time skipped when every rank
  // was idle (SkipToNextExclusion); the timing fields stay wall time.
  double LivenessSeconds() const { return Seconds() + skipped_; }

  // Every rank has said it is idle holding the newest v̂_k (kIdle, behind all its messages) or hosts only
  // clients that have stopped, and nothing is waiting here: nothing can happen before the next exclusion.
  bool EveryRankIdle() const {
    for (int rank = 1; rank < placement_.ranks; ++rank) {
      const auto r = static_cast<size_t>(rank);
      if (running_[r] > 0 && idle_at_[r] != server_.global_round()) return false;
    }
    return true;
  }

  // As the threads runtime's quiescent hook (thread_runtime.cc) and the virtual clock: excludes now what
  // waiting would exclude, or ends the run now by the cut-off waiting would reach (RunOver; a dropped-out
  // client is silent, so only its exclusion and cut-off end a run it was part of), whatever exclude_after
  // is. With neither to come the wait is for nobody; the laggards' mpi_timeout (CheckLiveness) ends it.
  void SkipToNextExclusion() {
    double next = liveness_.NextExclusion(server_);
    if (server_.all_released()) next = std::min(next, CutOffTime());
    if (!std::isfinite(next)) return;
    skipped_ += Liveness::SkipPast(next, LivenessSeconds());
    std::optional<BroadcastMessage> newest;
    ExcludeLaggards(newest);
    if (newest) Publish(*newest);
  }

  // End of run (docs/design.md, "End of a run", as on the threads runtime): no client blocks, and every
  // client has sent its stop notice (its messages all applied: MPI keeps a sender's order), is paused at its
  // accuracy target holding the newest v̂_k, or is excluded and has stayed silent for exclude_after more (cut
  // off; the report says so). A dropped-out client sends
  // nothing: it is excluded like any silent laggard, or the run fails after protocol.mpi_timeout.
  bool RunOver() {
    if (!server_.all_released()) return false;
    // Finished clients stay finished: the scan starts at the first one that was not (O(1) amortised per
    // call instead of O(n)).
    while (first_unfinished_ < finished_.size() && finished_[first_unfinished_]) ++first_unfinished_;
    const double now = LivenessSeconds();
    for (size_t c = first_unfinished_; c < plans_.size(); ++c) {
      const auto id = static_cast<int64_t>(c);
      const bool settled = server_.paused(id) && settled_at_[c] >= server_.global_round();
      if (!finished_[c] && !settled && !liveness_.CutOff(server_, id, now)) return false;
    }
    return true;
  }

  // With the server releasing everyone: when RunOver would hold by cutting off the clients still excluded
  // (Liveness::CutOffAt), ∞ while some other client is neither finished nor settled.
  double CutOffTime() const {
    double cut_off = 0.0;
    for (size_t c = first_unfinished_; c < plans_.size(); ++c) {
      const auto id = static_cast<int64_t>(c);
      if (finished_[c] || (server_.paused(id) && settled_at_[c] >= server_.global_round())) continue;
      cut_off = std::max(cut_off, liveness_.CutOffAt(server_, id));
    }
    return cut_off;
  }

  [[noreturn]] void Fail(const std::string& what) const {
    throw MpiRunError(fmt::format("rank 0 (server): {}", what));
  }

  void Handle(const Incoming& message, std::optional<BroadcastMessage>& newest) {
    const double now = Seconds();
    last_heard_rank_[static_cast<size_t>(message.source)] = now;
    const Buffer& bytes = *message.payload;
    std::optional<BroadcastMessage> broadcast;
    switch (message.tag) {
      case kUpdate: {
        if (!DecodeUpdate(bytes, params_, update_)) {
          Fail(fmt::format("an update from rank {} has {} bytes, expected {} ({} parameters): do all ranks run "
                           "the same binary and configuration?",
                           message.source, bytes.size(), UpdateBytes(params_), params_));
        }
        const auto client = CheckSender(update_.client, message.source);
        const auto& sizes = plans_[client].sample_sizes;
        if (update_.local_round < 0 || update_.local_round >= static_cast<int64_t>(sizes.size())) {
          Fail(fmt::format("client {} sent round {} outside its plan", update_.client, update_.local_round));
        }
        last_heard_client_[client] = now;
        liveness_.Heard(update_.client, LivenessSeconds());
        // The planned s_i (public): the server learns (i, U) only, never the realised batch size.
        clock_.gradients += sizes[static_cast<size_t>(update_.local_round)];
        clock_.time = now;
        observer_.OnUpdate(update_, clock_);  // what the server sees, before it applies it (run_observer.h)
        broadcast = server_.OnUpdate(update_);
        break;
      }
      case kStop: {
        const auto [client, rounds] = Notice(message);
        last_heard_client_[client] = now;
        liveness_.Heard(static_cast<int64_t>(client), LivenessSeconds());
        if (!finished_[client]) --running_[static_cast<size_t>(message.source)];
        finished_[client] = true;
        broadcast = server_.OnClientStopped(static_cast<int64_t>(client), rounds);
        break;
      }
      case kPause:
      case kResume:
      case kSettled: {
        // The proactive framework's notices (sim/runtime/mpi_transport.h), handled as the threads runtime
        // does.
        const auto [client, value] = Notice(message);
        const auto id = static_cast<int64_t>(client);
        if (message.tag == kSettled) {
          settled_at_[client] = value;
          break;
        }
        last_heard_client_[client] = now;
        liveness_.Heard(id, LivenessSeconds());
        broadcast = message.tag == kPause ? server_.OnClientPaused(id, value) : server_.OnClientResumed(id);
        break;
      }
      case kHeartbeat:
        break;
      case kIdle: {
        if (bytes.size() != sizeof(int64_t)) Fail(fmt::format("malformed idle report from rank {}", message.source));
        std::memcpy(&idle_at_[static_cast<size_t>(message.source)], bytes.data(), sizeof(int64_t));
        break;
      }
      default:
        Fail(fmt::format("unexpected message (tag {}) from rank {} during the run", message.tag, message.source));
    }
    if (broadcast) {
      OnGlobalRound();
      newest = std::move(broadcast);
    }
  }

  // A two-word notice (stop, pause, resume, settled): the client, checked against its sender, and the value.
  std::pair<size_t, int64_t> Notice(const Incoming& message) const {
    const Buffer& bytes = *message.payload;
    if (bytes.size() != 2 * sizeof(int64_t)) {
      Fail(fmt::format("malformed notice (tag {}) from rank {}", message.tag, message.source));
    }
    int64_t words[2];
    std::memcpy(words, bytes.data(), sizeof(words));
    return {CheckSender(words[0], message.source), words[1]};
  }

  size_t CheckSender(int64_t client, int source) const {
    if (client < 0 || client >= placement_.clients || placement_.RankOf(client) != source) {
      Fail(fmt::format("rank {} sent a message for client {}, which it does not host", source, client));
    }
    return static_cast<size_t>(client);
  }

  // Called once per global round as it forms, while v̂ is exactly v̂_k.
  void OnGlobalRound() {
    // A new model is new work: every client gets a fresh exclude_after (and mpi_timeout) to respond.
    std::fill(last_heard_client_.begin(), last_heard_client_.end(), Seconds());
    liveness_.ModelFormed(LivenessSeconds());
    clock_.time = Seconds();
    AddTicks(observer_ticks_, [&] { observer_.OnGlobalRound(server_, clock_); });
  }

  // protocol.exclude_after: only laggards can be at fault; a client waiting for v̂_k is silent because of them.
  void ExcludeLaggards(std::optional<BroadcastMessage>& newest) {
    const double now = LivenessSeconds();
    for (const int64_t id : liveness_.ToExclude(server_, now)) {
      spdlog::warn("server: excluding client {} on rank {} (silent for {:.3g} s)", id, placement_.RankOf(id),
                   liveness_.SilentFor(id, now));
      auto excluded = server_.Exclude(id);
      clock_.time = Seconds();
      AddTicks(observer_ticks_, [&] { observer_.OnClientExcluded(id, clock_); });
      if (excluded) {
        OnGlobalRound();
        newest = std::move(excluded);
      }
    }
  }

  // One message per rank with a client still running, shared by that rank's clients.
  void Publish(const BroadcastMessage& broadcast) {
    auto buffer = std::make_shared<Buffer>(BroadcastBytes(params_));
    std::memcpy(buffer->data(), &broadcast.global_round, sizeof(int64_t));
    std::memcpy(buffer->data() + kBroadcastHeaderBytes, broadcast.model->data(), sizeof(float) * params_);
    for (int rank = 1; rank < placement_.ranks; ++rank) {
      bool running = false;
      for (const int64_t c : hosted_[static_cast<size_t>(rank)]) running = running || !finished_[static_cast<size_t>(c)];
      if (running) endpoint_.Send(rank, kBroadcast, buffer);
    }
  }

  // Every wait has a time-out: a silent rank (heartbeats stopped) or a laggard that never answers ends the
  // run instead of hanging it.
  void CheckLiveness() const {
    const double now = Seconds();
    for (int rank = 1; rank < placement_.ranks; ++rank) {
      const double silent = now - last_heard_rank_[static_cast<size_t>(rank)];
      if (silent > options_.mpi_timeout) {
        Fail(fmt::format("rank {} ({}) has sent nothing for {:.3g} s (protocol.mpi_timeout = {:.3g} "
                         "s): it died, stalled or lost its connection; ending the run",
                         rank, placement_.Describe(rank), silent, options_.mpi_timeout));
      }
    }
    // Silent laggards are excluded instead — when somebody waits on them (Liveness); otherwise a laggard
    // silent for mpi_timeout ends the run here, so it never hangs.
    if (options_.exclude_after > 0 && server_.held_up()) return;
    for (size_t c = 0; c < plans_.size(); ++c) {
      const auto id = static_cast<int64_t>(c);
      if (server_.lagging(id) && now - last_heard_client_[c] > options_.mpi_timeout) {
        Fail(fmt::format("client {} on rank {} holds up global round {} and has sent nothing for {:.3g} s "
                         "(protocol.mpi_timeout); set protocol.exclude_after to exclude stalled clients instead",
                         c, placement_.RankOf(id), server_.global_round() + 1, now - last_heard_client_[c]));
      }
    }
  }

  void SendHeartbeats() {
    for (int rank = 1; rank < placement_.ranks; ++rank) {
      if (endpoint_.SinceSent(rank) > options_.mpi_timeout / 4.0) endpoint_.SendEmpty(rank, kHeartbeat);
    }
  }

  // Tells every rank the run is over and collects its outcome. Messages still in flight (updates of
  // excluded clients, heartbeats) arrive before the outcome (MPI keeps a sender's order) and are dropped.
  std::map<int, RankOutcome> Shutdown() {
    for (int rank = 1; rank < placement_.ranks; ++rank) endpoint_.SendEmpty(rank, kShutdown);
    const double since = Seconds();
    for (auto& heard : last_heard_rank_) heard = std::max(heard, since);
    std::map<int, RankOutcome> outcomes;
    IdleBackoff backoff;
    while (static_cast<int>(outcomes.size()) < placement_.ranks - 1) {
      Incoming message;
      bool active = false;
      while (endpoint_.Poll(MPI_ANY_SOURCE, message)) {
        active = true;
        last_heard_rank_[static_cast<size_t>(message.source)] = Seconds();
        if (message.tag == kOutcome) outcomes[message.source] = DecodeOutcome(*message.payload);
      }
      endpoint_.Progress();
      for (int rank = 1; rank < placement_.ranks; ++rank) {
        const double silent = Seconds() - last_heard_rank_[static_cast<size_t>(rank)];
        if (!outcomes.contains(rank) && silent > options_.mpi_timeout) {
          Fail(fmt::format("rank {} did not report its clients' outcomes within {:.3g} s of the end of the run "
                           "(protocol.mpi_timeout): it died or stalled",
                           rank, silent));
        }
      }
      if (active) {
        backoff.Reset();
      } else {
        std::this_thread::sleep_for(backoff.Next());
      }
    }
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(options_.mpi_timeout));
    if (!endpoint_.Flush(deadline)) Fail("messages to the other ranks were not delivered within protocol.mpi_timeout");
    return outcomes;
  }

  // Outcomes in client order (each client reported exactly once, by the rank that hosts it); compute time
  // summed; cores = per host, min(hardware threads, clients on that host).
  void Assemble(const std::map<int, RankOutcome>& ranks, RuntimeReport& report,
                std::vector<ClientOutcome>& outcomes) const {
    outcomes.assign(plans_.size(), ClientOutcome{});
    std::vector<bool> seen(plans_.size(), false);
    std::map<uint64_t, std::pair<int64_t, int64_t>> hosts;  // host → (hardware threads, clients)
    for (const auto& [rank, outcome] : ranks) {
      report.compute_seconds += outcome.compute_seconds;
      auto& host = hosts[outcome.host];
      host.first = std::max<int64_t>(host.first, outcome.cores);
      host.second += static_cast<int64_t>(outcome.clients.size());
      for (const ClientOutcome& client : outcome.clients) {
        const size_t c = CheckSender(client.id, rank);
        if (seen[c]) Fail(fmt::format("client {} was reported twice", client.id));
        seen[c] = true;
        outcomes[c] = client;
      }
    }
    for (size_t c = 0; c < seen.size(); ++c) {
      if (!seen[c]) Fail(fmt::format("no rank reported client {}", c));
    }
    int64_t cores = 0;
    for (const auto& [host, counts] : hosts) cores += std::min(counts.first, counts.second);
    report.cores = static_cast<int>(std::max<int64_t>(1, cores));
  }

  const RuntimeOptions& options_;
  const PlanTable& plans_;  // every client's public plan; rank 0 builds no client
  ServerProtocol& server_;
  RunObserver& observer_;
  Endpoint& endpoint_;
  const Placement placement_;
  std::vector<std::vector<int64_t>> hosted_;  // [rank]: the clients it hosts
  size_t first_unfinished_ = 0;               // RunOver's cursor: every client before it has finished
  const Eigen::Index params_;
  UpdateMessage update_;                  // reused for every received update
  std::vector<bool> finished_;            // a stop notice arrived: the client needs no more broadcasts
  std::vector<int64_t> settled_at_;       // a paused client's newest v̂_k it has said it holds (kSettled)
  Liveness liveness_;                     // silence and exclusion (sim/protocol/liveness.h), LivenessSeconds()
  std::vector<double> last_heard_client_;  // seconds since start_
  std::vector<double> last_heard_rank_;
  std::vector<int64_t> idle_at_;   // [rank]: the v̂_k it last said it is idle holding (kIdle), −1 before
  std::vector<int64_t> running_;   // [rank]: its clients whose stop notice has not arrived
  double skipped_ = 0.0;           // idle seconds skipped on the liveness clock
  CycleCalibration calibration_;
  uint64_t observer_ticks_ = 0;
  RunClock clock_;
  Clock::time_point start_;
};

}  // namespace

RuntimeReport RunServerRank(const RuntimeOptions& options, const PlanTable& plans,
                            ServerProtocol& server, RunObserver& observer, Endpoint& endpoint,
                            const Placement& placement, std::vector<ClientOutcome>& outcomes) {
  ServerRank rank(options, plans, server, observer, endpoint, placement);
  return rank.Run(outcomes);
}

}  // namespace asyncdp::sim::mpi
