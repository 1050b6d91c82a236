#include "sim/runtime/step_runtime.h"

#include <algorithm>

namespace asyncdp::sim {

// Workspaces for client data sets of up to this many rows at once; larger ones are processed in chunks.
constexpr int64_t kWorkspaceBatch = 256;

StepRuntime::StepRuntime(int threads, int64_t max_clients, const models::Model& model, ClientWork work)
    : work_(std::move(work)), params_(model.NumParams()) {
  threads = std::max(1, threads);
  for (int t = 0; t < threads; ++t) workspaces_.push_back(model.NewWorkspace(kWorkspaceBatch));
  if (threads == 1) return;
  // Job ids are a client's position in its step (at most max_clients); the waiting caller runs tasks too,
  // so threads - 1 background threads make `threads` computing.
  pool_ = std::make_unique<ComputePool>(threads - 1, max_clients, [this](int64_t job, int thread) {
    const auto j = static_cast<size_t>(job);
    (*tasks_.records)[j] =
        work_(tasks_.theta, tasks_.clients[j], (*tasks_.out)[j], *workspaces_[static_cast<size_t>(thread)]);
  });
}

StepRuntime::~StepRuntime() = default;

void StepRuntime::Gather(std::span<const float> theta, std::span<const int32_t> clients,
                         std::vector<Eigen::VectorXf>& out, std::vector<int64_t>& records) {
  if (remote_) {
    remote_(theta, clients, out, records);
  } else {
    Compute(theta, clients, out, records);
  }
}

void StepRuntime::Compute(std::span<const float> theta, std::span<const int32_t> clients,
                          std::vector<Eigen::VectorXf>& out, std::vector<int64_t>& records) {
  const size_t k = clients.size();
  if (out.size() < k) out.resize(k, Eigen::VectorXf::Zero(params_));
  records.assign(k, 0);
  if (pool_) {
    tasks_ = {theta, clients, &out, &records};
    for (size_t j = 0; j < k; ++j) pool_->Submit(static_cast<int64_t>(j));
    for (size_t j = 0; j < k; ++j) pool_->Wait(static_cast<int64_t>(j));
  } else {
    for (size_t j = 0; j < k; ++j) records[j] = work_(theta, clients[j], out[j], *workspaces_[0]);
  }
}

}  // namespace asyncdp::sim
