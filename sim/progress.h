// Progress with an ETA on stderr, only when stderr is a terminal (logs and CI output stay clean).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/runtime/run_observer.h"

namespace asyncdp::sim {

class ProgressReporter final : public RunObserver {
 public:
  // expected_global_rounds: the global round the run ends at if nothing stops early.
  // phase_ends (proactive runs): per client the cumulative rounds at which its phases end (the public
  // plan), so the line can show which phase each client's applied rounds are in, and who is paused.
  explicit ProgressReporter(int64_t expected_global_rounds, std::vector<std::vector<int64_t>> phase_ends = {});
  // "phases 1:3 2:1 paused:1": clients per phase (1-based) by their delivered rounds, and paused ones.
  static std::string PhaseSummary(const ServerProtocol& server, const std::vector<std::vector<int64_t>>& phase_ends);
  void OnGlobalRound(const ServerProtocol& server, const RunClock& clock) override;
  void OnFinish(const ServerProtocol& server, const RunClock& clock) override;
  // Random check-ins: "step t/T" in place of the global round (expected_global_rounds is ignored).
  void OnCheckInStep(int64_t taken, int64_t total, const RunClock& clock) override;
  void OnCheckInFinish(int64_t taken, const RunClock& clock) override;

 private:
  // Redraws the line at most every 200 ms: `what` done of `expected`, the gradients (none when < 0), and
  // `extra` after the ETA.
  void Draw(const char* what, int64_t done, int64_t expected, int64_t gradients, const std::string& extra);
  void End();

  int64_t expected_;
  std::vector<std::vector<int64_t>> phase_ends_;
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_print_;
};

}  // namespace asyncdp::sim
