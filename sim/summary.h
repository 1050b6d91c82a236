// The part of summary.json every training run carries, whatever its participation policy — asynchronous
// rounds (sim/run_summary.h) or random check-ins (sim/checkin/checkin_summary.h) — typed, and written to
// JSON in one place so the policies cannot drift apart: the accuracy (none for a diverged model), the
// headline privacy values, how the run ended (docs/design.md, "End of a run"), its timing, and what it was
// (runtime, seed, model, resolved configuration, versions). Each policy adds its own sections beside these.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/config.h"
#include "sim/headline_epsilon.h"
#include "sim/metrics.h"
#include "sim/protocol/run_outcome.h"
#include "sim/runtime/run_observer.h"

namespace asyncdp::sim {

// Test accuracy and loss at the final evaluation. A model with a non-finite parameter (or loss) has
// diverged: its "accuracy" is an artefact of how NaN compares, so none is reported.
struct SummaryAccuracy {
  bool diverged = false;
  std::optional<double> test_accuracy;  // none when diverged
  std::optional<double> test_loss;
};
// Logs an error when the model diverged (what to change).
SummaryAccuracy AccuracyOf(const Eigen::VectorXf& model, const MetricsRow& last);

// How the run ended: truncated when any client neither finished nor stopped by a rule; each such client
// with why and how far it got. `asyncdp train` exits 4 on a truncated run unless protocol.allow_truncation.
struct SummaryOutcome {
  bool truncated = false;
  bool stalled = false;
  bool cancelled = false;
  std::vector<UnfinishedClient> unfinished;
};
SummaryOutcome OutcomeOf(const RuntimeReport& report);

struct SummaryCore {
  SummaryAccuracy accuracy;
  // The policy's privacy report, and its headline ε: written as both privacy.epsilon and the top-level
  // "epsilon" (one source, so they cannot differ), and read by the CLI's "done:" line.
  nlohmann::json privacy;
  std::vector<HeadlineEpsilon> epsilon;
  double delta = 0.0;
  double sigma = 0.0;  // the noise multiplier the run used (0: no noise)
  bool sigma_calibrated = false;
  double clip = 0.0;
  std::optional<double> client_clip;  // user-level DP (dp.unit = "client"): a client's update clip
  // σ calibration, budget halts, running ε and the final report (what the accountant cost the user).
  double accounting_seconds = 0.0;
  SummaryOutcome outcome;
  double wall_seconds = 0.0;              // the whole call, set-up and reporting included
  std::optional<double> virtual_seconds;  // the run's virtual clock at the end (none on a wall clock)
  RuntimeKind runtime = RuntimeKind::kVirtual;
  uint64_t seed = 0;
  std::string model_kind;
  int64_t parameters = 0;
  std::string config_toml;  // the resolved configuration (ToToml)
};

// summary.json's common fields (docs/design.md, "Released fields"); a policy adds its sections to it.
nlohmann::json CommonSummaryJson(const SummaryCore& core);

// What a run reports: the typed core (TrainResult::summary_core: what the CLI and embeddings read) and
// summary.json, written from that core plus the policy's own sections.
struct Summary {
  SummaryCore core;
  nlohmann::json json;
};

}  // namespace asyncdp::sim
