// output.trace: the protocol's event trace, events.csv — every applied update (client, local round i, the
// k it was computed on, the global round it was applied at), every broadcast k and every exclusion, in the
// order the server saw them. It lets anyone check a run's protocol invariants from its outputs alone, on
// any runtime (tests/sim/runtime/runtime_invariants_test.cc does, with an oracle sharing no code with the
// server). A diagnostic: the order of arrivals reflects compute times, which under Poisson sampling depend
// on realised batch sizes, so it is not covered by ε (docs/design.md, released fields).
#pragma once

#include <string>

#include "sim/runtime/run_observer.h"

namespace asyncdp::sim {

class TraceRecorder final : public RunObserver {
 public:
  TraceRecorder();
  void OnUpdate(const UpdateMessage& message, const RunClock& clock) override;
  void OnGlobalRound(const ServerProtocol& server, const RunClock& clock) override;
  void OnClientExcluded(int64_t client, const RunClock& clock) override;
  const std::string& csv() const { return csv_; }

 private:
  std::string csv_;
  int64_t global_round_ = 0;  // the newest v̂_k formed so far
};

}  // namespace asyncdp::sim
