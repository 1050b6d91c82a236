// Observers of a run (conventions.md §9): metrics, progress and the ε tracker subscribe to run events
// instead of being called inline by the protocol. Runtimes call them from the thread that owns the server,
// so an observer may read the server's state without locks.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/protocol/messages.h"
#include "sim/protocol/run_outcome.h"
#include "sim/protocol/server.h"

namespace asyncdp::sim {

// What the runtime knows when it calls an observer. `time` is virtual seconds (virtual runtime) or wall
// seconds since the start (threads runtime).
struct RunClock {
  double time = 0.0;
  int64_t gradients = 0;  // per-example gradients in all updates the server has applied
};

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  // The server has just formed v̂_k (server.global_round() == k) and is about to broadcast it.
  virtual void OnGlobalRound(const ServerProtocol& /*server*/, const RunClock& /*clock*/) {}
  // The server is about to apply client `message.client`'s (i, U): exactly what the threat model shows
  // the server (the privacy audit's white-box observer, sim/audit/). Called before OnGlobalRound of any
  // broadcast the update triggers.
  virtual void OnUpdate(const UpdateMessage& /*message*/, const RunClock& /*clock*/) {}
  // The server excluded a silent client (protocol.exclude_after).
  virtual void OnClientExcluded(int64_t /*client*/, const RunClock& /*clock*/) {}
  // The run is over: every client stopped or was excluded (or the run stalled).
  virtual void OnFinish(const ServerProtocol& /*server*/, const RunClock& /*clock*/) {}
  // Random check-ins (sim/checkin/), which have no ServerProtocol: the server has taken `taken` of the
  // run's `total` steps (clock.time = clock.gradients = taken). Their progress and Ctrl-C hook.
  virtual void OnCheckInStep(int64_t /*taken*/, int64_t /*total*/, const RunClock& /*clock*/) {}
  // A check-in run is over after `taken` steps (fewer than planned when it was cancelled).
  virtual void OnCheckInFinish(int64_t /*taken*/, const RunClock& /*clock*/) {}
};

// Fans events out to several observers, in registration order.
class ObserverList final : public RunObserver {
 public:
  void Add(RunObserver* observer) { observers_.push_back(observer); }
  void OnGlobalRound(const ServerProtocol& server, const RunClock& clock) override {
    for (auto* o : observers_) o->OnGlobalRound(server, clock);
  }
  void OnUpdate(const UpdateMessage& message, const RunClock& clock) override {
    for (auto* o : observers_) o->OnUpdate(message, clock);
  }
  void OnClientExcluded(int64_t client, const RunClock& clock) override {
    for (auto* o : observers_) o->OnClientExcluded(client, clock);
  }
  void OnFinish(const ServerProtocol& server, const RunClock& clock) override {
    for (auto* o : observers_) o->OnFinish(server, clock);
  }
  void OnCheckInStep(int64_t taken, int64_t total, const RunClock& clock) override {
    for (auto* o : observers_) o->OnCheckInStep(taken, total, clock);
  }
  void OnCheckInFinish(int64_t taken, const RunClock& clock) override {
    for (auto* o : observers_) o->OnCheckInFinish(taken, clock);
  }

 private:
  std::vector<RunObserver*> observers_;
};

// What a runtime reports about the execution itself.
struct RuntimeReport {
  double end_time = 0.0;          // virtual or wall seconds
  double wall_seconds = 0.0;
  double compute_seconds = 0.0;   // wall time inside ComputeRound, summed over clients
  double observer_seconds = 0.0;  // wall time inside observers (evaluation, ε so far, progress)
  int cores = 1;                  // threads that ran ComputeRound: the work could use at most this many
  // Threads runtime: CPU time of its worker threads (their own clocks); 0 = not measured. Against
  // cores × wall it shows how much of the machine the run actually got (a shared machine gives less).
  double worker_cpu_seconds = 0.0;
  int64_t gradients = 0;
  int64_t updates = 0;
  int64_t events = 0;             // virtual runtime: events processed
  // The run ended while some client had neither finished nor stopped by a rule (sim/protocol/run_outcome.h):
  // truncated, with those clients and why (SettleReport). stalled: some waited for a broadcast that could
  // not come. Never hangs: it stops.
  bool truncated = false;
  bool stalled = false;
  std::vector<UnfinishedClient> unfinished;
  bool cancelled = false;           // RuntimeOptions::cancel was set before the clients finished
  std::vector<int64_t> excluded;    // every exclusion in order (a client re-admitted and excluded again twice)
};

// Share of the run's core-seconds not spent in gradient + noise work (ComputeRound) or in observers, with
// the work spread over report.cores: 1 − compute / (cores · wall − observers). Observers (evaluation) occupy
// one core while other threads may go on computing rounds. Event handling, messages, model copies, waiting
// and idle cores all count as overhead.
inline double ProtocolOverhead(const RuntimeReport& report) {
  const double available = static_cast<double>(report.cores) * report.wall_seconds - report.observer_seconds;
  return available > 0.0 ? 1.0 - report.compute_seconds / available : 0.0;
}

// How much of the machine the run got: the workers' CPU time over cores × wall (threads runtime; none where
// the worker clocks are not read). Near 1 the workers had their cores throughout and ProtocolOverhead
// measures the protocol; well below 1 another process held the cores for part of the run, and the overhead
// counts that wait too (BENCHMARKS.md reads the threads runtime's overhead only beside it).
inline std::optional<double> CpuShare(const RuntimeReport& report) {
  const double available = static_cast<double>(report.cores) * report.wall_seconds;
  if (report.worker_cpu_seconds <= 0.0 || available <= 0.0) return std::nullopt;
  return report.worker_cpu_seconds / available;
}

}  // namespace asyncdp::sim
