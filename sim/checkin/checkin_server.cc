#include "sim/checkin/checkin_server.h"

#include <cmath>

#include "core/noise.h"
#include "core/random.h"

namespace asyncdp::sim::checkin {
namespace {

std::span<float> Span(Eigen::VectorXf& v) { return {v.data(), static_cast<size_t>(v.size())}; }
std::span<const float> ConstSpan(const Eigen::VectorXf& v) {
  return {v.data(), static_cast<size_t>(v.size())};
}

}  // namespace

CheckInServer::CheckInServer(const CheckInOptions& options, const CheckInClients& clients,
                             StepRuntime* runtime, Eigen::VectorXf initial, StepSizeOptions step_size,
                             double sigma)
    : options_(options),
      clients_(clients),
      runtime_(runtime),
      step_size_(step_size),
      sigma_(sigma),
      theta_(std::move(initial)),
      step_update_(Eigen::VectorXf::Zero(theta_.size())),
      client_update_(Eigen::VectorXf::Zero(theta_.size())),
      accumulator_(Eigen::VectorXf::Zero(theta_.size())),
      workspace_(clients.model.NewWorkspace(256)) {}  // larger client data sets are processed in chunks

CheckInServer::~CheckInServer() = default;

int64_t CheckInServer::AddClientUpdatesOfRuntime(std::span<const int32_t> clients) {
  runtime_->Gather(ConstSpan(theta_), clients, task_updates_, task_records_);
  int64_t records = 0;
  for (size_t j = 0; j < clients.size(); ++j) {
    step_update_ += task_updates_[j];
    records += task_records_[j];
  }
  return records;
}

int64_t CheckInServer::AddClientUpdate(int32_t client) {
  const int64_t records = clients_.Update(ConstSpan(theta_), client, client_update_, *workspace_);
  step_update_ += client_update_;
  return records;
}

StepOutcome CheckInServer::OnStep(int64_t window, int64_t global_step, std::span<const int32_t> checked_in) {
  StepOutcome out;
  out.empty = checked_in.empty();
  const StreamKey noise_key = GradientNoiseKey(options_.seed, kServerNoiseStream, static_cast<uint32_t>(global_step));
  // The randomizer's noise scale: C per record, C_u per client at the user level.
  const double noise_clip = clients_.user_level() ? clients_.client_clip : clients_.clip;
  step_update_.setZero();
  if (options_.step_rule == StepRule::kOneClient) {
    if (!checked_in.empty()) {
      RandomStream pick(StreamKey{options_.seed, static_cast<uint32_t>(global_step), static_cast<uint32_t>(window),
                                  StreamPurpose::kCheckInSelection});
      const int32_t chosen = checked_in[pick.NextBelow(checked_in.size())];
      out.records = runtime_ != nullptr ? AddClientUpdatesOfRuntime({&chosen, 1}) : AddClientUpdate(chosen);
      out.used = 1;
      out.discarded = static_cast<int64_t>(checked_in.size()) - 1;
    } else {
      out.dummy = true;
    }
    if (sigma_ > 0.0) AddRoundNoise(noise_key, noise_clip, sigma_, Span(step_update_));
    accumulator_ += step_update_;
    if (++accumulated_steps_ == options_.batch_steps) {
      Apply(static_cast<double>(options_.batch_steps));
      out.model_updated = true;
    }
    return out;
  }
  // Average rule: skip empty steps; otherwise the mean of the checked-in clients' noisy updates.
  if (checked_in.empty()) return out;
  if (runtime_ != nullptr) {
    out.records = AddClientUpdatesOfRuntime(checked_in);
  } else if (clients_.user_level()) {
    for (const int32_t client : checked_in) out.records += AddClientUpdate(client);
  } else {
    // Record level: one record per client, so the clients' clipped gradients are one clipped-gradient sum.
    batch_.clear();
    for (const int32_t client : checked_in) {
      const auto& rows = clients_.rows[static_cast<size_t>(client)];
      batch_.insert(batch_.end(), rows.begin(), rows.end());
    }
    clients_.model.ClippedGradientSum(Span(theta_), clients_.data, batch_, clients_.clip, Span(step_update_),
                                      *workspace_);
    out.records = static_cast<int64_t>(batch_.size());
  }
  out.used = static_cast<int64_t>(checked_in.size());
  if (sigma_ > 0.0) {
    // |S_i| independent N(0, sigma^2 c^2 I) draws, drawn as one N(0, |S_i| sigma^2 c^2 I).
    AddRoundNoise(noise_key, noise_clip, sigma_ * std::sqrt(static_cast<double>(checked_in.size())),
                  Span(step_update_));
  }
  accumulator_ = step_update_;
  accumulated_steps_ = 1;
  Apply(static_cast<double>(checked_in.size()));
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
