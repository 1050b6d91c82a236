#include "sim/checkin/checkin_server.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "core/noise.h"
#include "core/random.h"

namespace asyncdp::sim::checkin {
namespace {

std::span<float> Span(Eigen::VectorXf& v) { return {v.data(), static_cast<size_t>(v.size())}; }
std::span<const float> ConstSpan(const Eigen::VectorXf& v) {
  return {v.data(), static_cast<size_t>(v.size())};
}

}  // namespace

CheckInServer::CheckInServer(const CheckInOptions& options, const models::Model& model,
                             const data::Dataset& data, std::vector<std::vector<int64_t>> client_rows,
                             Eigen::VectorXf initial, StepSizeOptions step_size, double clip, double sigma)
    : options_(options),
      model_(model),
      data_(data),
      client_rows_(std::move(client_rows)),
      step_size_(step_size),
      clip_(clip),
      sigma_(sigma),
      theta_(std::move(initial)),
      step_update_(Eigen::VectorXf::Zero(theta_.size())),
      client_update_(Eigen::VectorXf::Zero(theta_.size())),
      accumulator_(Eigen::VectorXf::Zero(theta_.size())),
      workspace_(model.NewWorkspace(256)) {  // larger client data sets are processed in chunks
  if (options_.runtime == RuntimeKind::kVirtual) return;
  const int threads = std::max(1, options_.worker_threads);
  for (int t = 0; t < threads; ++t) thread_workspaces_.push_back(model.NewWorkspace(256));
  if (threads == 1) return;
  // Job ids are a client's position in its step (at most n); the waiting server thread runs tasks too, so
  // threads - 1 background threads make `threads` computing.
  pool_ = std::make_unique<ComputePool>(threads - 1, options_.clients, [this](int64_t job, int thread) {
    const auto j = static_cast<size_t>(job);
    (*tasks_.records)[j] = ClientUpdate(tasks_.theta, tasks_.clients[j], (*tasks_.out)[j],
                                        *thread_workspaces_[static_cast<size_t>(thread)]);
  });
}

CheckInServer::~CheckInServer() = default;

int64_t CheckInServer::ClientUpdate(std::span<const float> theta, int32_t client, Eigen::VectorXf& out,
                                    models::Workspace& workspace) const {
  const std::vector<int64_t>& rows = client_rows_[static_cast<size_t>(client)];
  out.setZero();
  model_.ClippedGradientSum(theta, data_, rows, clip_, Span(out), workspace);
  if (options_.user_level()) {
    // The client's whole update is projected onto the ball of radius C_u (docs/theory.md §4, user level).
    const double norm = out.norm();
    if (norm > options_.client_clip) out *= static_cast<float>(options_.client_clip / norm);
  }
  return static_cast<int64_t>(rows.size());
}

void CheckInServer::ComputeClientUpdates(std::span<const float> theta, std::span<const int32_t> clients,
                                         std::vector<Eigen::VectorXf>& out, std::vector<int64_t>& records) {
  ASYNCDP_CHECK(!thread_workspaces_.empty());
  const size_t k = clients.size();
  if (out.size() < k) out.resize(k, Eigen::VectorXf::Zero(theta_.size()));
  records.assign(k, 0);
  if (pool_) {
    tasks_ = {theta, clients, &out, &records};
    for (size_t j = 0; j < k; ++j) pool_->Submit(static_cast<int64_t>(j));
    for (size_t j = 0; j < k; ++j) pool_->Wait(static_cast<int64_t>(j));
  } else {
    for (size_t j = 0; j < k; ++j)
      records[j] = ClientUpdate(theta, clients[j], out[j], *thread_workspaces_[0]);
  }
}

int64_t CheckInServer::AddClientUpdatesConcurrently(std::span<const int32_t> clients) {
  if (remote_) {
    remote_(ConstSpan(theta_), clients, task_updates_, task_records_);
  } else {
    ComputeClientUpdates(ConstSpan(theta_), clients, task_updates_, task_records_);
  }
  int64_t records = 0;
  for (size_t j = 0; j < clients.size(); ++j) {
    step_update_ += task_updates_[j];
    records += task_records_[j];
  }
  return records;
}

int64_t CheckInServer::AddClientUpdate(int32_t client) {
  const int64_t records = ClientUpdate(ConstSpan(theta_), client, client_update_, *workspace_);
  step_update_ += client_update_;
  return records;
}

StepOutcome CheckInServer::OnStep(int64_t window, int64_t global_step, std::span<const int32_t> checked_in) {
  StepOutcome out;
  out.empty = checked_in.empty();
  const StreamKey noise_key = GradientNoiseKey(options_.seed, kServerNoiseStream, static_cast<uint32_t>(global_step));
  // The randomizer's noise scale: C per record, C_u per client at the user level.
  const double noise_clip = options_.user_level() ? options_.client_clip : clip_;
  step_update_.setZero();
  if (options_.step_rule == StepRule::kOneClient) {
    if (!checked_in.empty()) {
      RandomStream pick(StreamKey{options_.seed, static_cast<uint32_t>(global_step), static_cast<uint32_t>(window),
                                  StreamPurpose::kCheckInSelection});
      const int32_t chosen = checked_in[pick.NextBelow(checked_in.size())];
      out.records = concurrent() ? AddClientUpdatesConcurrently({&chosen, 1}) : AddClientUpdate(chosen);
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
  if (concurrent()) {
    out.records = AddClientUpdatesConcurrently(checked_in);
  } else if (options_.user_level()) {
    for (const int32_t client : checked_in) out.records += AddClientUpdate(client);
  } else {
    // Record level: one record per client, so the clients' clipped gradients are one clipped-gradient sum.
    batch_.clear();
    for (const int32_t client : checked_in) {
      const auto& rows = client_rows_[static_cast<size_t>(client)];
      batch_.insert(batch_.end(), rows.begin(), rows.end());
    }
    model_.ClippedGradientSum(Span(theta_), data_, batch_, clip_, Span(step_update_), *workspace_);
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
