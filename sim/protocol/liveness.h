// Silence, exclusion and the end of a run on a real clock (docs/design.md, "End of a run"): one definition
// for the threads and MPI runtimes; the virtual runtime keeps the same exclusion rule with a timer per
// client on its event queue and ends a run by the same cut-off (CutOffAt; sim/runtime/virtual_runtime.cc).
//
// - Silence counts from when a client's message *arrived* (not when the server got round to handling it)
//   or from the newest v̂_k, whichever is later: a new model is new work for everyone.
// - A client is excluded when it is lagging (it holds up the next broadcast, ServerProtocol::lagging), has
//   been silent for more than exclude_after, and somebody is held up by it (ServerProtocol::held_up). When
//   every blocking client lags, nobody waits on anybody and the silence is the machine's (a descheduled
//   process, a loaded core), so nobody is excluded: one late timer can no longer exclude every client.
// - At the end of a run an excluded client that has not stopped is waited for while it stays silent for
//   less than exclude_after more; after that it is cut off, and the run reports it (run_outcome.h).
//
// Times are seconds on the runtime's clock. Thread safety: none; the thread that owns the server uses it.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/protocol/server.h"

namespace asyncdp::sim {

class Liveness {
 public:
  // exclude_after = 0: nobody is ever excluded or cut off.
  Liveness(int64_t clients, double exclude_after, double start = 0.0);

  // A message of `client` arrived at `arrival`.
  void Heard(int64_t client, double arrival);
  // v̂_k was formed at `now`: every client gets a fresh exclude_after to respond.
  void ModelFormed(double now);
  // Seconds of silence of `client` at `now`.
  double SilentFor(int64_t client, double now) const;

  // The clients to exclude at `now`, in id order (empty when exclusion is off or nobody is held up).
  std::vector<int64_t> ToExclude(const ServerProtocol& server, double now) const;
  // An excluded client not waited for any more at the end of the run.
  bool CutOff(const ServerProtocol& server, int64_t client, double now) const;
  // The time after which the excluded `client` is cut off if nothing is heard from it before: CutOff holds
  // at every later time (∞ when it is not excluded or exclusion is off). The virtual runtime, whose clock
  // jumps from event to event, ends a run there (sim/runtime/virtual_runtime.cc).
  double CutOffAt(const ServerProtocol& server, int64_t client) const;
  // The earliest time at which some client could be excluded, if nothing is heard before (∞ if none can).
  double NextExclusion(const ServerProtocol& server) const;

  // How far a runtime's liveness clock must jump from `now` for the deadline `next` (NextExclusion or
  // CutOffAt) to have passed: exclusion and cut-off hold only strictly after it, so a hair (10⁻⁹ relative)
  // beyond; 0 when it has passed already. The threads and MPI runtimes skip idle time with it.
  static double SkipPast(double next, double now);

  double exclude_after() const { return exclude_after_; }
  // When the newest v̂_k was formed: no client is cut off before exclude_after after it.
  double last_model() const { return last_model_; }

 private:
  double exclude_after_;
  std::vector<double> last_heard_;
  double last_model_;
};

}  // namespace asyncdp::sim
