// Canary trainings through the real protocol (docs/audit.md): the experiment of a TrainConfig is built
// once (data, partition, model, plans, sigma — sim/experiment.h), then each audit run trains all clients
// on the virtual runtime with its own seed (noise, batches, initial model, latencies), the audited client
// holding a Dirac canary or not. The observer records what the threat model shows: every (i, U) of the
// audited client projected on the canary coordinates (white-box), and the final model's canary
// coordinates (final-model view).
//
// Neighbouring data sets, as the accountants assume for the sampler run (core/privacy_assumptions.h), or,
// with --canary client (user-level DP, dp.unit = "client"), the audited client's data set whole: in = every
// record a canary (round update clip_{C_u}(s_t C e) + noise), out = the same rows without a gradient
// (update 0 + noise, the client without data), accounted at the user level (rate 1, multiplier sigma):
//   Poisson (add/remove)        in = the client's N_c records plus the canary row; the sampling rate stays
//                               the public q_i = s_i / N_c of the plan (the rate the accountants compose);
//   fixed-size, shuffle         in = the client's records with the last one replaced by the canary row;
//   (replace-one)               out = the client's records unchanged.
// A mislabelled canary (--canary mislabelled) is a copy of one of the client's records with another label
// (models/data_canary.h, ChooseMislabelledCanary from the config's seed), planted the same way and trained
// on by the configured model; the observer sees the final model only and scores its loss on the record.
// A one-run audit plants m canaries the same way, each slot holding its canary iff the canary's coin
// (core/audit/one_run.h, DrawCanaryInclusion) came up IN.
//
// Thread safety: a CanaryExperiment is immutable after construction; Run* may be called concurrently.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "models/data_canary.h"
#include "models/dirac_canary.h"
#include "sim/audit/audit_options.h"
#include "sim/config.h"
#include "sim/experiment.h"
#include "sim/plan_table.h"

namespace asyncdp::sim::audit {

// What one run shows the observer. projections[t * m + j] = <U_t, e_j> / C (C_u for a whole-client canary) for local round t of the
// audited client and canary j (0 where round t was never sent: received[t] = 0); final_coordinates[j] =
// the final global model's canary coordinate j.
struct RunTrace {
  int64_t canaries = 1;
  std::vector<double> projections;
  std::vector<uint8_t> received;
  std::vector<double> final_coordinates;
  int64_t rounds_done = 0;  // local rounds the audited client completed
  // Mislabelled canary: the final model's loss on the canary record (NaN otherwise).
  double canary_loss = std::numeric_limits<double>::quiet_NaN();
};

// How a run's trace becomes one score per canary ("higher = the canary looks present").
struct ScoreRule {
  AuditView view = AuditView::kWhiteBox;
  AuditStatistic statistic = AuditStatistic::kSum;  // resolved: never kAuto
  // Per local round t: x'_t = (x_t - offset[t]) / scale[t] ~ N(b_t, (sigma_t / scale[t])^2), b_t the
  // canary's presence in batch t, inclusion probability rate[t].
  std::vector<double> offset, scale, rate, sigma;
};

class CanaryExperiment {
 public:
  // Builds the experiment (reads the data) and the canary layout. Throws ConfigError for combinations the
  // audit cannot run (no DP, opposite canaries under Poisson sampling, the likelihood ratio with shuffled
  // batches or the final-model view, a client out of range, too few records for the canaries).
  CanaryExperiment(const TrainConfig& config, const AuditOptions& options);

  // A multi-run training with (include = true) or without the canary.
  RunTrace RunMultiRun(uint64_t seed, bool include) const;
  // The one-run training: canary j is planted iff included[j] (m = options.canaries entries).
  RunTrace RunOneRun(uint64_t seed, const std::vector<uint8_t>& included) const;

  // The score of canary j in a trace.
  double Score(const RunTrace& trace, int64_t canary) const;

  const Experiment& experiment() const { return experiment_; }
  const AuditOptions& options() const { return options_; }
  const ScoreRule& score_rule() const { return rule_; }
  int64_t client() const { return options_.client; }
  int64_t client_records() const {
    return experiment_.data.shards[static_cast<size_t>(options_.client)].rows();
  }

 private:
  struct AuditedClient {
    data::Dataset shard;
    std::unique_ptr<models::DiracCanaryModel> model;
  };
  AuditedClient MakeAuditedClient(const std::vector<uint8_t>& included) const;
  RunTrace RunOnce(const AuditedClient& audited, uint64_t seed) const;

  AuditOptions options_;
  Experiment experiment_;
  int64_t canaries_ = 1;  // canary coordinates appended to the model (1, or m for one-run)
  double projection_scale_ = 1.0;  // C (record canaries) or C_u (whole-client canary)
  std::shared_ptr<const models::Model> base_model_;
  std::unique_ptr<models::DiracCanaryModel> plain_model_;  // the other clients: no canary rows
  PlanTable run_plans_;                                    // plans with the noise the clients add
  AuditedClient in_, out_;                                 // multi-run variants
  models::MislabelledCanary mislabelled_;                  // --canary mislabelled: which record, which label
  data::Dataset mislabelled_row_;                          // that record with its new label (one row)
  ScoreRule rule_;
};

}  // namespace asyncdp::sim::audit
