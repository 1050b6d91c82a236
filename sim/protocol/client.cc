#include "sim/protocol/client.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "core/noise.h"
#include "core/random.h"
#include "core/secure_noise.h"

namespace asyncdp::sim {

ClientProtocol::ClientProtocol(const ClientOptions& options, const data::Dataset& shard,
                               const models::Model& model, RoundPlan plan, const DelayRule& rule,
                               std::unique_ptr<BatchSampler> sampler, const Eigen::VectorXf& initial_model,
                               AccuracyCheck accuracy_check)
    : ClientProtocol(options, shard, nullptr, model, std::move(plan), rule, std::move(sampler), initial_model,
                     std::move(accuracy_check)) {}

ClientProtocol::ClientProtocol(const ClientOptions& options, const data::RowView& shard,
                               const models::Model& model, RoundPlan plan, const DelayRule& rule,
                               std::unique_ptr<BatchSampler> sampler, const Eigen::VectorXf& initial_model,
                               AccuracyCheck accuracy_check)
    : ClientProtocol(options, *shard.data, &shard.indices, model, std::move(plan), rule, std::move(sampler),
                     initial_model, std::move(accuracy_check)) {}

ClientProtocol::ClientProtocol(const ClientOptions& options, const data::Dataset& data,
                               const std::vector<int64_t>* view_rows, const models::Model& model, RoundPlan plan,
                               const DelayRule& rule, std::unique_ptr<BatchSampler> sampler,
                               const Eigen::VectorXf& initial_model, AccuracyCheck accuracy_check)
    : options_(options),
      data_(data),
      view_rows_(view_rows),
      records_(view_rows != nullptr ? static_cast<int64_t>(view_rows->size()) : data.rows()),
      model_(model),
      plan_(std::move(plan)),
      rule_(rule),
      sampler_(std::move(sampler)),
      entropy_(options.noise == NoiseMode::kSecure ? std::make_unique<OsEntropy>() : nullptr),
      scratch_batch_(std::max<int64_t>(1, plan_.max_sample_size())),
      local_model_(initial_model),
      round_model_(initial_model.size()),
      round_sum_(initial_model.size()),
      accuracy_check_(std::move(accuracy_check)),
      last_global_(std::make_shared<const Eigen::VectorXf>(initial_model)) {
  ASYNCDP_CHECK(initial_model.size() == model.NumParams());
  if (!options_.phase_ends.empty()) {
    ASYNCDP_CHECK(accuracy_check_ && options_.phase_ends.back() == plan_.rounds());
    tracker_.emplace(options_.accuracy_target, options_.phase_ends);
  }
  ASYNCDP_CHECK(plan_.noise_multipliers.size() == plan_.sample_sizes.size());
  batch_.reserve(static_cast<size_t>(2 * plan_.max_sample_size() + 16));
  if (view_rows_ != nullptr) data_batch_.reserve(batch_.capacity());
}

bool ClientProtocol::CanStartRound() const {
  return !stopped() && !paused_ && !in_round_ && rule_.Allows(global_round_, local_round_);
}

bool ClientProtocol::BeginRound() {
  ASYNCDP_CHECK(CanStartRound());
  if (tracker_) {
    // Phase end: the accuracy of the last received global model on the held-out rows (§6.4 step 4).
    switch (tracker_->BeforeRound(local_round_, global_round_, [&] { return accuracy_check_(*last_global_); })) {
      case PhaseDecision::kContinue: break;
      case PhaseDecision::kPause: paused_ = true; return false;
      case PhaseDecision::kStopReached: stop_ = ClientStop::kTargetReached; return false;
      case PhaseDecision::kStopMissed: stop_ = ClientStop::kTargetMissed; return false;
    }
  }
  if (local_round_ >= plan_.rounds()) {
    stop_ = ClientStop::kCompleted;
    return false;
  }
  if (options_.stop_at_round >= 0 && local_round_ >= options_.stop_at_round) {
    stop_ = ClientStop::kDroppedOut;
    return false;
  }
  if (options_.budget_rounds >= 0 && local_round_ >= options_.budget_rounds) {
    stop_ = ClientStop::kBudgetExhausted;
    return false;
  }
  round_staleness_ = std::max<int64_t>(0, local_round_ - global_round_);
  ASYNCDP_CHECK(round_staleness_ <= rule_.MaxStaleness());
  round_computed_at_ = global_round_;
  std::swap(round_model_, local_model_);  // O(1): the round computes on ŵ without copying it
  replaced_in_round_ = false;
  in_round_ = true;
  return true;
}

void ClientProtocol::ComputeRound(models::Workspace* scratch) {
  ASYNCDP_CHECK(in_round_);
  if (scratch == nullptr) {
    if (!workspace_) workspace_ = model_.NewWorkspace(scratch_batch());
    scratch = workspace_.get();
  }
  const auto round = static_cast<uint32_t>(local_round_);
  const auto client = static_cast<uint32_t>(options_.id);
  sampler_->Sample(round, plan_.sample_sizes[local_round_], batch_);
  std::span<const int64_t> rows = batch_;
  if (view_rows_ != nullptr) {  // shard positions → rows of the loaded data set (same order)
    data_batch_.resize(batch_.size());
    for (size_t j = 0; j < batch_.size(); ++j) data_batch_[j] = (*view_rows_)[static_cast<size_t>(batch_[j])];
    rows = data_batch_;
  }
  round_clip_ = clip_;
  const auto stats = model_.ClippedGradientSum(
      std::span<const float>(round_model_.data(), round_model_.size()), data_, rows, round_clip_,
      std::span<float>(round_sum_.data(), round_sum_.size()), *scratch);
  clip_totals_.examples += stats.examples;
  clip_totals_.clipped += stats.clipped;
  clip_totals_.norm_sum += stats.norm_sum;
  double noise_clip = round_clip_;
  if (options_.client_clip > 0) {
    // User-level DP: the client's whole contribution of the round, clipped to C_u (a projection onto the
    // ball, 1-Lipschitz: a record still moves it by at most C), noised at the scale of C_u.
    const double norm = round_sum_.norm();
    if (norm > options_.client_clip) round_sum_ *= static_cast<float>(options_.client_clip / norm);
    noise_clip = options_.client_clip;
  }
  const double sigma = plan_.noise_multipliers[local_round_];
  if (sigma > 0) {
    const std::span<float> sum(round_sum_.data(), round_sum_.size());
    if (options_.noise == NoiseMode::kSecure) {
      AddSecureRoundNoise(ChooseSecureNoiseLattice(sigma, round_clip_, round_sum_.size()), *entropy_, sum);
    } else {
      // One draw of N(0, C²σ²I) per round, added to the sum (docs/theory.md §2).
      AddRoundNoise(StreamKey{options_.seed, client, round, StreamPurpose::kGradientNoise}, noise_clip, sigma, sum);
    }
  }
  const AdaptiveClipOptions& adaptive = options_.adaptive_clip;
  if (adaptive.enabled) {
    // The noisy fraction of unclipped examples (a second Gaussian release of the round, sensitivity 1,
    // accounted with the gradient's: PrivacySetup::AccountedSigma), over the planned s_i (public), then the
    // geometric update of Andrew et al. (2021), Algorithm 1.
    double unclipped = static_cast<double>(stats.examples - stats.clipped);
    if (adaptive.count_sigma > 0) {
      RandomStream noise(StreamKey{options_.seed, client, round, StreamPurpose::kClipCount});
      unclipped += adaptive.count_sigma * noise.NextNormal();
    }
    const double fraction = unclipped / static_cast<double>(std::max<int64_t>(1, plan_.sample_sizes[local_round_]));
    // Kept finite and positive (post-processing of the public trajectory, no privacy cost): a clip that
    // underflowed to 0 or overflowed to infinity would stop clipping or make the noise infinite.
    clip_ = std::clamp(clip_ * std::exp(-adaptive.lr * (fraction - adaptive.quantile)), 1e-12, 1e12);
  }
}

UpdateMessage ClientProtocol::CompleteRound() {
  ASYNCDP_CHECK(in_round_);
  const double step = plan_.step_sizes[local_round_];
  // ŵ ← ŵ − η̄_i·U (Algorithm 4 line 14, descent sign per docs/theory.md §2). ŵ may have been replaced
  // by a newer v̂_k while the round was computed; the update then applies to the new model, as in the paper.
  if (!replaced_in_round_) std::swap(round_model_, local_model_);
  local_model_ -= static_cast<float>(step) * round_sum_;
  gradients_ += static_cast<int64_t>(batch_.size());
  planned_gradients_ += plan_.sample_sizes[local_round_];
  // Counted here, not at BeginRound: a round a runtime abandons at shutdown was never completed or charged.
  if (round_staleness_ >= static_cast<int64_t>(staleness_.size())) staleness_.resize(round_staleness_ + 1, 0);
  ++staleness_[round_staleness_];
  max_staleness_ = std::max(max_staleness_, round_staleness_);
  UpdateMessage message{options_.id, local_round_, step, std::move(round_sum_), round_computed_at_, round_clip_};
  if (spare_sums_.empty()) {
    round_sum_.resize(local_model_.size());
  } else {
    round_sum_ = std::move(spare_sums_.back());
    spare_sums_.pop_back();
  }
  ++local_round_;
  in_round_ = false;
  return message;
}

void ClientProtocol::RecycleBuffer(Eigen::VectorXf&& buffer) {
  // Keep a few: a client has at most a handful of updates in flight under a bounded delay rule.
  constexpr size_t kMaxSpare = 8;
  if (buffer.size() == local_model_.size() && spare_sums_.size() < kMaxSpare) spare_sums_.push_back(std::move(buffer));
}

void ClientProtocol::OnBroadcast(const BroadcastMessage& message) {
  if (message.global_round <= global_round_) return;  // stale or duplicate (Algorithm 3)
  global_round_ = message.global_round;
  // During a round local_model_ is the spare buffer (round_model_ holds ŵ being computed on), so the
  // newer model lands there and CompleteRound applies U to it.
  if (in_round_) replaced_in_round_ = true;
  local_model_ = *message.model;
  last_global_ = message.model;
  if (paused_ && global_round_ % options_.paused_check_stride == 0 &&
      tracker_->OnModelWhilePaused(local_round_, global_round_, accuracy_check_(*message.model))) {
    paused_ = false;  // re-joins with the next phase (§6.4 step 4)
  }
}

}  // namespace asyncdp::sim
