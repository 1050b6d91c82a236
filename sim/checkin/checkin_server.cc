#include "sim/checkin/checkin_server.h"

#include <cmath>

#include "core/noise.h"
#include "core/random.h"

namespace asyncdp::sim::checkin {

CheckInServer::CheckInServer(const CheckInOptions& options, const models::Model& model,
                             const data::Dataset& records, Eigen::VectorXf initial, StepSizeOptions step_size,
                             double clip, double sigma)
    : options_(options),
      model_(model),
      records_(records),
      step_size_(step_size),
      clip_(clip),
      sigma_(sigma),
      theta_(std::move(initial)),
      step_update_(Eigen::VectorXf::Zero(theta_.size())),
      accumulator_(Eigen::VectorXf::Zero(theta_.size())),
      workspace_(model.NewWorkspace(256)) {}

StepOutcome CheckInServer::OnStep(int64_t window, int64_t global_step, std::span<const int32_t> checked_in) {
  StepOutcome out;
  out.empty = checked_in.empty();
  const StreamKey noise_key = GradientNoiseKey(options_.seed, kServerNoiseStream, static_cast<uint32_t>(global_step));
  batch_.clear();
  if (options_.step_rule == StepRule::kOneClient) {
    if (!checked_in.empty()) {
      RandomStream pick(StreamKey{options_.seed, static_cast<uint32_t>(global_step), static_cast<uint32_t>(window),
                                  StreamPurpose::kCheckInSelection});
      batch_.push_back(checked_in[pick.NextBelow(checked_in.size())]);
      out.used = 1;
      out.discarded = static_cast<int64_t>(checked_in.size()) - 1;
    } else {
      out.dummy = true;
    }
    step_update_.setZero();
    if (!batch_.empty()) {
      model_.ClippedGradientSum(std::span<const float>(theta_.data(), static_cast<size_t>(theta_.size())), records_,
                              batch_, clip_, std::span<float>(step_update_.data(), static_cast<size_t>(step_update_.size())),
                              *workspace_);
    }
    if (sigma_ > 0.0) AddRoundNoise(noise_key, clip_, sigma_, std::span<float>(step_update_.data(), static_cast<size_t>(step_update_.size())));
    accumulator_ += step_update_;
    if (++accumulated_steps_ == options_.batch_steps) {
      Apply(static_cast<double>(options_.batch_steps));
      out.model_updated = true;
    }
    return out;
  }
  // Average rule: skip empty steps; otherwise the mean of the checked-in clients' noisy updates.
  if (checked_in.empty()) return out;
  batch_.assign(checked_in.begin(), checked_in.end());
  out.used = static_cast<int64_t>(batch_.size());
  step_update_.setZero();
  model_.ClippedGradientSum(std::span<const float>(theta_.data(), static_cast<size_t>(theta_.size())), records_,
                              batch_, clip_, std::span<float>(step_update_.data(), static_cast<size_t>(step_update_.size())),
                              *workspace_);
  if (sigma_ > 0.0) {
    AddRoundNoise(noise_key, clip_, sigma_ * std::sqrt(static_cast<double>(batch_.size())),
                  std::span<float>(step_update_.data(), static_cast<size_t>(step_update_.size())));
  }
  accumulator_ = step_update_;
  accumulated_steps_ = 1;
  Apply(static_cast<double>(batch_.size()));
  out.model_updated = true;
  return out;
}

void CheckInServer::Apply(double divisor) {
  const double eta = RoundStepSize(step_size_, updates_);
  theta_ -= static_cast<float>(eta / divisor) * accumulator_;
  accumulator_.setZero();
  accumulated_steps_ = 0;
  ++updates_;
}

void CheckInServer::Flush() {
  if (accumulated_steps_ > 0) Apply(static_cast<double>(options_.batch_steps));
}

}  // namespace asyncdp::sim::checkin
