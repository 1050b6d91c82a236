// The runtime of a participation policy whose server asks a step's clients for their updates (random
// check-ins, sim/checkin): how those computations run, apart from what they compute — the protocol/runtime
// split of asynchronous rounds (sim/protocol beside sim/runtime) for a synchronous server step.
//
// protocol.runtime = virtual needs none: the protocol computes the step on its own thread, as the virtual
// clock runs one event after another. threads: each of the step's clients is a task on `threads` worker
// threads (the ComputePool the virtual runtime lends its rounds; the waiting server thread computes too),
// each into a buffer of its own, so the caller can sum them in the step's client order and the result does
// not depend on the thread count or on which thread finishes first. mpi: rank 0 fetches the same buffers
// from the ranks hosting the clients (SetRemote; sim/checkin/mpi_checkin.h), which compute them here.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "models/model.h"
#include "sim/runtime/compute_pool.h"

namespace asyncdp::sim {

class StepRuntime {
 public:
  // One client's update at `theta` into `out` (overwritten) with `workspace`; returns its record count.
  using ClientWork = std::function<int64_t(std::span<const float> theta, int32_t client, Eigen::VectorXf& out,
                                           models::Workspace& workspace)>;
  // The same for every client of a step, computed elsewhere (MPI rank 0: on the ranks hosting them).
  using Remote = std::function<void(std::span<const float> theta, std::span<const int32_t> clients,
                                    std::vector<Eigen::VectorXf>& out, std::vector<int64_t>& records)>;

  // `threads` (>= 1) computing threads, the caller's included; a workspace of `model` for each; steps of
  // at most `max_clients` clients.
  StepRuntime(int threads, int64_t max_clients, const models::Model& model, ClientWork work);
  ~StepRuntime();
  StepRuntime(const StepRuntime&) = delete;  // the pool's tasks hold `this`
  StepRuntime& operator=(const StepRuntime&) = delete;

  void SetRemote(Remote remote) { remote_ = std::move(remote); }

  // out[j] and records[j] for clients[j] (resized to fit): computed here, or fetched when a remote is set.
  void Gather(std::span<const float> theta, std::span<const int32_t> clients,
              std::vector<Eigen::VectorXf>& out, std::vector<int64_t>& records);
  // The same, always computed here (a worker rank serving rank 0 with it).
  void Compute(std::span<const float> theta, std::span<const int32_t> clients,
               std::vector<Eigen::VectorXf>& out, std::vector<int64_t>& records);

 private:
  ClientWork work_;
  int64_t params_;
  // One workspace per thread that may run a task (0 = the caller's own thread).
  std::vector<std::unique_ptr<models::Workspace>> workspaces_;
  // What the pool's tasks read and write during one Compute call.
  struct Tasks {
    std::span<const float> theta;
    std::span<const int32_t> clients;
    std::vector<Eigen::VectorXf>* out = nullptr;
    std::vector<int64_t>* records = nullptr;
  } tasks_;
  std::unique_ptr<ComputePool> pool_;  // null with one thread: tasks run inline
  Remote remote_;
};

}  // namespace asyncdp::sim
