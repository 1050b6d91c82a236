// A client of the asynchronous framework (Algorithms 2–4, Appendix A; docs/theory.md §3) as event handlers with no
// knowledge of threads or clocks; sim/runtime/ decides when each handler runs.
//
// One local round is split in three steps so a runtime can run the heavy middle step elsewhere:
//   BeginRound    — checks Υ(k, i) and the privacy budget (a round count planned before training from the
//                   public schedule), records staleness, snapshots ŵ;
//   ComputeRound  — samples the batch, U = Σ clip_C(∇f(ŵ_snapshot; ξ)) + N(0, C²σ_i²I) (noise once, §2.2;
//                   or the secure lattice noise of core/secure_noise.h);
//                   touches only this round's buffers, so OnBroadcast may run concurrently;
//   CompleteRound — ŵ ← ŵ − η̄_i·U (descent, §2.4), i ← i+1, returns (i, U) for the server.
// OnBroadcast implements ISRReceive (Algorithm 3): a newer v̂_k replaces ŵ; older ones are ignored.
// With an accuracy target (Appendix E, Figure 15; docs/theory.md §9, sim/proactive/target_tracker.h) BeginRound checks the last
// received global model at each phase end and may pause the client; a paused client keeps receiving, and
// OnBroadcast resumes it when a newer model falls below target. The runtime tells the server (pause and
// resume notices) by comparing paused() before and after.
//
// Thread safety: none; the runtime serialises calls per client (ComputeRound may overlap OnBroadcast only).
#pragma once

#include <Eigen/Dense>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/sampling.h"
#include "core/secure_noise.h"
#include "data/dataset.h"
#include "data/row_view.h"
#include "models/model.h"
#include "sim/protocol/delay_rule.h"
#include "sim/proactive/target_tracker.h"
#include "sim/protocol/messages.h"
#include "sim/round_plan.h"

namespace asyncdp::sim {

// How a round's noise is drawn.
enum class NoiseMode {
  kReproducible,  // N(0, C²σ²I) from the Philox stream StreamKey{seed, client, round, kGradientNoise}
  kSecure,        // lattice rounding + exact discrete Gaussian from OS entropy (core/secure_noise.h)
};

// Adaptive clipping (Andrew et al. 2021; docs/theory.md §2, "Adaptive clipping"): after each round
// C ← C·exp(−lr (b̃ − quantile)), b̃ = (unclipped count + N(0, count_sigma²)) / s_i, the count's noise from
// the stream (seed, client, round, kClipCount).
struct AdaptiveClipOptions {
  bool enabled = false;
  double quantile = 0.5;
  double lr = 0.2;
  double count_sigma = 0.0;  // 0 = the exact count (non-private runs)
};

struct ClientOptions {
  int64_t id = 0;
  uint64_t seed = 1;       // noise streams (reproducible mode): (seed, id, round, purpose)
  double clip = 0.1;       // C (adaptive clipping: the initial C)
  AdaptiveClipOptions adaptive_clip;
  // User-level DP (dp.unit = "client"): > 0 clips the round's whole sum to this norm, and the noise is
  // N(0, σ² client_clip² I); 0 = record-level (noise N(0, σ² C² I)).
  double client_clip = 0.0;
  NoiseMode noise = NoiseMode::kReproducible;
  int64_t stop_at_round = -1;  // fault injection: stop silently before this round (-1 = never)
  // The rounds the client's privacy budget permits, computed before training from the public plan
  // (accounting::RoundsWithinBudget); -1 = no budget. The client stops before round `budget_rounds`.
  int64_t budget_rounds = -1;
  // Accuracy target on the client's held-out rows (§6.4), with the cumulative local round at which each
  // phase of the plan ends; empty phase_ends = no target.
  double accuracy_target = 0.0;
  std::vector<int64_t> phase_ends;
  // While paused, re-check only the models of global rounds k ≡ 0 (mod this): the private checks' count is
  // planned before training (sim/proactive/private_checks.h); 1 = every model.
  int64_t paused_check_stride = 1;
};

// Accuracy of a model on the client's held-out rows (the proactive accuracy check).
using AccuracyCheck = std::function<double(const Eigen::VectorXf&)>;

// Why a client stopped taking rounds.
enum class ClientStop {
  kRunning,
  kCompleted,
  kBudgetExhausted,
  kDroppedOut,
  kTargetReached,  // the last phase ended at or above the accuracy target
  kTargetMissed,   // the last phase ended below target: no budget for another
  kNotAdmitted,    // its budget cannot reach its target: it never joined (§6.4 step 2)
};

class ClientProtocol {
 public:
  // The shard is every row of `shard`.
  ClientProtocol(const ClientOptions& options, const data::Dataset& shard, const models::Model& model,
                 RoundPlan plan, const DelayRule& rule, std::unique_ptr<BatchSampler> sampler,
                 const Eigen::VectorXf& initial_model, AccuracyCheck accuracy_check = {});
  // The shard is a view into the run's one loaded data set (no copy); `shard` (and its data set) must
  // outlive the client. The sampler draws positions 0..N_c−1 of the view; they are mapped to rows of the
  // data set before the model reads them, so a view trains exactly like a copied shard.
  ClientProtocol(const ClientOptions& options, const data::RowView& shard, const models::Model& model,
                 RoundPlan plan, const DelayRule& rule, std::unique_ptr<BatchSampler> sampler,
                 const Eigen::VectorXf& initial_model, AccuracyCheck accuracy_check = {});

  // Υ(k_latest, i), not stopped and not paused. A runtime calls BeginRound only when this is true.
  bool CanStartRound() const;
  // Starts local round i. Returns false (and stops the client) if the plan is done, the client drops
  // out, or the round would exceed the privacy budget; or (paused() then true) if a phase ended at target.
  bool BeginRound();
  // Samples the batch, sums its clipped gradients and adds the round's noise. `scratch` is the model's
  // scratch space for this round (a runtime lends one per worker thread: sim/runtime/worker_scratch.h); it
  // must come from model().NewWorkspace(scratch_batch()) and not be in use by another round. nullptr: the
  // client's own, created at its first round. The result does not depend on which one is used.
  void ComputeRound(models::Workspace* scratch = nullptr);
  UpdateMessage CompleteRound();
  // ISRReceive: adopt v̂_k if k is newer than what we hold.
  void OnBroadcast(const BroadcastMessage& message);
  // Takes back an update buffer the server has applied, so steady-state rounds allocate nothing.
  void RecycleBuffer(Eigen::VectorXf&& buffer);

  int64_t id() const { return options_.id; }
  int64_t local_round() const { return local_round_; }
  int64_t global_round() const { return global_round_; }
  ClientStop stop_reason() const { return stop_; }
  bool stopped() const { return stop_ != ClientStop::kRunning; }
  // At its accuracy target: computes nothing, still receives broadcasts (§6.4 step 4).
  bool paused() const { return paused_; }
  // Never joins: the runtimes skip it (MakeClients decides before training).
  void MarkNotAdmitted() { stop_ = ClientStop::kNotAdmitted; }
  // Phase decisions and checks; nullptr without an accuracy target.
  const TargetTracker* target_tracker() const { return tracker_ ? &*tracker_ : nullptr; }
  // The last global model received (v̂_0 before any broadcast).
  const ModelSnapshot& last_global_model() const { return last_global_; }
  bool in_round() const { return in_round_; }  // between BeginRound and CompleteRound
  const RoundPlan& plan() const { return plan_; }
  const models::Model& model() const { return model_; }
  // The batch size a workspace for this client's rounds is made for (its largest planned s_i).
  int64_t scratch_batch() const { return scratch_batch_; }
  int64_t records() const { return records_; }
  // Planned per-example gradients of the rounds completed so far (Σ s_i): public.
  int64_t planned_gradients() const { return planned_gradients_; }
  // Non-private diagnostics (never sent to the server; outputs label them): realised batch sizes summed,
  // and clipping statistics. Under Poisson sampling these are functions of the data.
  int64_t gradients() const { return gradients_; }
  // [s] = completed rounds that started with staleness i − k = s (sized max_staleness() + 1).
  const std::vector<int64_t>& staleness_histogram() const { return staleness_; }
  int64_t max_staleness() const { return max_staleness_; }
  const models::ClipStats& clip_totals() const { return clip_totals_; }
  // The clip norm the next round uses (dp.clip, or the adaptive clip after the rounds so far): public, a
  // function of the released noisy counts.
  double clip() const { return clip_; }
  // ŵ between rounds (during a round it is being computed on; CompleteRound brings it back).
  const Eigen::VectorXf& local_model() const { return local_model_; }

 private:
  ClientProtocol(const ClientOptions& options, const data::Dataset& data, const std::vector<int64_t>* view_rows,
                 const models::Model& model, RoundPlan plan, const DelayRule& rule,
                 std::unique_ptr<BatchSampler> sampler, const Eigen::VectorXf& initial_model,
                 AccuracyCheck accuracy_check);

  ClientOptions options_;
  const data::Dataset& data_;
  const std::vector<int64_t>* view_rows_;  // the shard's rows of data_; nullptr = all of data_
  int64_t records_;                        // N_c
  const models::Model& model_;
  RoundPlan plan_;
  const DelayRule& rule_;
  std::unique_ptr<BatchSampler> sampler_;
  std::unique_ptr<OsEntropy> entropy_;  // secure noise only
  int64_t scratch_batch_;  // max(1, s_max): RoundPlan::max_sample_size() scans the plan, so it is kept
  std::unique_ptr<models::Workspace> workspace_;  // own scratch, only if a round runs without a lent one

  Eigen::VectorXf local_model_;  // ŵ
  int64_t local_round_ = 0;      // i
  int64_t global_round_ = 0;     // k_latest
  ClientStop stop_ = ClientStop::kRunning;
  bool in_round_ = false;
  bool paused_ = false;
  int64_t round_staleness_ = 0;   // i − k at BeginRound, counted when the round completes
  int64_t round_computed_at_ = 0; // k at BeginRound

  // Buffers of the round in flight (reused: no allocation per round in steady state).
  // ŵ at BeginRound, moved (not copied) out of local_model_; a broadcast during the round refills
  // local_model_ (replaced_in_round_), otherwise CompleteRound moves it back.
  Eigen::VectorXf round_model_;
  bool replaced_in_round_ = false;
  Eigen::VectorXf round_sum_;    // U; moved into the UpdateMessage, replaced from spare_sums_
  std::vector<Eigen::VectorXf> spare_sums_;  // applied updates handed back by the runtime
  std::vector<int64_t> batch_;       // positions in the shard, as sampled
  std::vector<int64_t> data_batch_;  // the same rows of data_ (view shards only)

  double clip_ = options_.clip;  // C of the next round (adaptive clipping moves it)
  double round_clip_ = 0.0;  // C of the round in flight (sent with its update)
  int64_t gradients_ = 0;
  int64_t planned_gradients_ = 0;
  std::vector<int64_t> staleness_;  // [i − k at round start] → count
  int64_t max_staleness_ = 0;
  models::ClipStats clip_totals_;
  AccuracyCheck accuracy_check_;
  std::optional<TargetTracker> tracker_;
  ModelSnapshot last_global_;
};

}  // namespace asyncdp::sim
