// The canaries of the one-run audit attached to a training run (audit.canaries = m in a train config; docs/audit.md,
// "Auditing a training run"). Steinke, Nasr & Jagielski 2023 ("Privacy auditing with one (1) training
// run") need only the run itself: m canaries are planted in the audited client's data, canary j iff its
// fair coin (core/audit/one_run.h, DrawCanaryInclusion from the run's seed) is IN; the run trains as usual;
// at the end each canary gets a score, the audit guesses on the top/bottom scores, and the number of
// correct guesses gives eps_lower at the stated confidence, set against the epsilon every accountant
// reports for that client. summary.json gains an "audit" block; `asyncdp train` exits 3 on VIOLATION.
//
// The canaries are part of the training data, and the accountants account the data the run used:
//   Poisson (add/remove)   the included canaries are appended, N_c grows by them, and the client's plan
//                          (T, q_i = s_i / N_c) is built from the grown N_c (BuildExperiment plants them
//                          before any plan is made);
//   fixed-size, shuffle    each included canary takes the place of one of the client's own records (the
//   (replace-one)          last ones), N_c is unchanged and the replaced records are not trained on.
// Canaries:
//   dirac        white-box gradient canaries (models/dirac_canary.h): the model of every client gains m
//                parameters that the loss never reads, canary j's clipped gradient is C e_j; the observer
//                (the server) projects each update of the client on e_j. Score: the likelihood ratio of
//                the round's projections (core/audit/canary_statistics.h) when rounds subsample, else
//                their sum;
//   mislabelled  copies of m distinct records of the client, each with another label (from the seed):
//                the input-space canary, trained on by the configured model; the observer sees the final
//                model only. Score: -(final model's loss on the canary).
// With audit.canaries = 0 nothing here runs and the training is unchanged.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/sampling.h"
#include "data/dataset.h"
#include "data/row_view.h"
#include "models/dirac_canary.h"
#include "models/model.h"
#include "sim/audit/audit_options.h"
#include "sim/config.h"
#include "sim/round_plan.h"

namespace asyncdp::sim::audit {

// What PlantTrainCanaries did to the experiment (immutable once the experiment is built).
struct TrainCanaries {
  int64_t client = 0;
  int64_t canaries = 0;  // m
  CanaryKind kind = CanaryKind::kDirac;
  std::vector<uint8_t> included;  // canary j's coin (nonzero = planted)
  int64_t planted = 0;            // included canaries
  int64_t records_before = 0;     // the client's N_c without canaries
  int64_t replaced = 0;           // replace-one samplers: own records left out to make room
  double noise_scale = 1.0;       // audit.test_noise_scale (fault injection)
  // Dirac: every other client's model (no canary rows) is Experiment::model; this one has the rows.
  std::unique_ptr<models::DiracCanaryModel> audited_model;
  int64_t first_coordinate = 0;  // Dirac: the parameter of canary 0
  // Mislabelled: canary j as one row (the relabelled copy), scored on the final model.
  data::Dataset canary_rows;
  // The audited client's data with the canaries planted (its own copy: the canaries change its rows);
  // shards[client] is a view of all of it. Every other client still views the one loaded training set.
  std::shared_ptr<const data::Dataset> planted_shard;
};

// Checks the audit.* keys against the rest of the configuration (ConfigError naming the key).
void ValidateTrainAudit(const TrainConfig& config);

// Plants the canaries: points shards[client] at a planted copy of the client's
// rows and, for Dirac canaries, wraps `model`. BuildExperiment
// calls it after the model is made and before any plan, so N_c, the plans and the accountants see the
// data the run trains on. Returns nullptr when audit.canaries = 0 (nothing changed).
std::shared_ptr<TrainCanaries> PlantTrainCanaries(const TrainConfig& config, SamplingModel sampling,
                                                  std::vector<data::RowView>& shards,
                                                  std::unique_ptr<models::Model>& model);

// Client `client`'s N_c once the canaries are planted: its `records` plus the included canaries when it is
// the audited client under an add/remove sampler (Poisson), else `records`. From the seed and public values
// alone, so an MPI rank plans every client before it reads any row (PlantTrainCanaries checks it agrees).
int64_t RecordsWithCanaries(const TrainConfig& config, SamplingModel sampling, int64_t client,
                            int64_t records);

// The model client c trains with, and the plan it runs (the fault injection scales the audited
// client's noise; the accountants keep e.plans).
// `canaries` may be null (no audit): then `model` and `plan` themselves.
const models::Model& ClientModel(const TrainCanaries* canaries, const models::Model& model, size_t client);
RoundPlan ClientRunPlan(const TrainCanaries* canaries, const RoundPlan& plan, size_t client);

}  // namespace asyncdp::sim::audit
