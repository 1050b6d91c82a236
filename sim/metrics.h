// MetricsRecorder: evaluates the global model v̂_k at evenly spaced global rounds and at the end, and
// records one metrics.csv row per evaluation (global round, time, planned gradients so far, ε so far,
// losses, test accuracy). ε so far is the largest over clients of dp.accountant's ε for every round of that
// client already applied to the global model — the contiguous prefix and the rounds that arrived out of
// order (per-client record-level DP, docs/theory.md §4).
// Columns: `gradients` counts the *planned* s_i of the applied rounds (public). Non-private diagnostics,
// computed and written only with output.diagnostics: `diag_train_loss` (a loss on client records);
// with eval.reference_optimum `diag_suboptimality` F(v̂) − F(w*) over every shard and `diag_distance_sq`
// ||v̂ − w*||² (models/convergence_measures.h); with eval.gradient_norm `diag_gradient_norm` ||∇F(v̂)|| over
// the train_rows rows.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include "core/accounting/running_epsilon.h"
#include "sim/experiment.h"
#include "sim/runtime/run_observer.h"

namespace asyncdp::sim {

struct MetricsRow {
  int64_t global_round = 0;
  double time = 0.0;
  int64_t gradients = 0;     // planned Σ s_i of the applied rounds
  double epsilon = 0.0;      // +inf without noise
  double train_loss = 0.0;   // non-private diagnostic; NaN when eval.train_rows = 0
  double suboptimality = std::numeric_limits<double>::quiet_NaN();  // diagnostics, eval.reference_optimum
  double distance_sq = std::numeric_limits<double>::quiet_NaN();    // diagnostics, eval.reference_optimum
  double gradient_norm = std::numeric_limits<double>::quiet_NaN();  // diagnostics, eval.gradient_norm
  double test_loss = 0.0;
  double test_accuracy = 0.0;
  double clip = 0.0;         // adaptive clipping: mean C of the clients' last applied updates (public)
};

class MetricsRecorder final : public RunObserver {
 public:
  explicit MetricsRecorder(const Experiment& experiment);
  void OnGlobalRound(const ServerProtocol& server, const RunClock& clock) override;
  void OnFinish(const ServerProtocol& server, const RunClock& clock) override;

  const std::vector<MetricsRow>& rows() const { return rows_; }
  // Wall seconds spent on the running ε column (part of summary.json's accounting_seconds).
  double epsilon_seconds() const { return epsilon_seconds_; }
  // Header and rows of metrics.csv; `diagnostics` adds the diag_* columns the configuration asks for.
  std::string ToCsv(const std::string& time_unit, bool diagnostics) const;

 private:
  void Record(const ServerProtocol& server, const RunClock& clock);
  double EpsilonSoFar(const ServerProtocol& server);
  const accounting::RunningEpsilon& RunningOf(size_t client);

  const Experiment& experiment_;
  // F's parts, for the suboptimality (with eval.reference_optimum only): the shards copied out of their
  // views once, so F is evaluated part by part as ever.
  std::vector<data::Dataset> parts_;
  std::vector<const data::Dataset*> part_ptrs_;
  std::unique_ptr<models::Workspace> workspace_;  // for the gradient norm
  int64_t every_;       // evaluate when k crosses a multiple of this
  int64_t next_eval_;
  std::vector<MetricsRow> rows_;
  // Applied schedule (q, σ, count per group) → ε: clients with equal shards and progress share one value.
  std::map<std::vector<std::tuple<double, double, int64_t>>, double> epsilon_cache_;
  // Whole plan (q, σ, count per group) → its running-ε composer (core/accounting/running_epsilon.h), and
  // each client's.
  std::map<std::vector<std::tuple<double, double, int64_t>>, std::unique_ptr<accounting::RunningEpsilon>> running_;
  std::vector<const accounting::RunningEpsilon*> client_running_;
  double epsilon_seconds_ = 0.0;
};

}  // namespace asyncdp::sim
