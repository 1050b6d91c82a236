// The server of the random check-in protocols as an event handler (no threads, no clock): the driver
// (checkin_run.h) calls OnStep once per server step with the clients checked in to it.
//
// one_client (Alg. 1): j uniform in S_i (stream {seed, step, window, kCheckInSelection}); the step's noisy
//   update is g~ = clip_C(grad l(theta; d_j)) + N(0, sigma^2 C^2 I) (the local randomizer A_ldp), or for an
//   empty step the dummy A_ldp(0) = N(0, sigma^2 C^2 I); the others in S_i are discarded. At the user level
//   (options.client_clip = C_u > 0) client j's data set D_j replaces d_j and
//   A_ldp(D_j) = clip_{C_u}(sum_{d in D_j} clip_C(grad l(theta; d))) + N(0, sigma^2 C_u^2 I), the dummy
//   N(0, sigma^2 C_u^2 I). g~ is summed into
//   the accumulator; every b steps (ModelUpdate) theta <- theta - eta_t * accumulator / b.
// average (Alg. 2): every client in S_i sends A_ldp(its gradient); theta <- theta - eta_t * their mean; an
//   empty step is skipped. The sum of |S_i| independent N(0, sigma^2 C^2 I) draws is drawn as one
//   N(0, |S_i| sigma^2 C^2 I) (the same distribution).
// eta_t follows schedule.step_rule with t = model updates so far. Noise: stream GradientNoiseKey(seed,
// kServerNoiseStream, global step).
//
// Where the clients' updates are computed is the runtime's (sim/runtime/step_runtime.h): with none
// (protocol.runtime = virtual) the server computes them itself, one after another, and at the record level
// the averaged step's records in one clipped-gradient sum. With one (threads, mpi), every checked-in client
// of the step computes its update (checkin_client.h) into a buffer of its own and the server sums them in
// the step's client order, so the result does not depend on the thread count, on which thread finishes
// first, or on the ranks. At the user level that is the virtual runtime's order and arithmetic, so all
// runtimes agree bit for bit; at the record level an averaged step's sum is per client rather than one
// batched sum, the same numbers added in another grouping (equal up to float rounding).
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/step_size.h"
#include "models/model.h"
#include "sim/checkin/checkin_client.h"
#include "sim/checkin/checkin_options.h"
#include "sim/runtime/step_runtime.h"

namespace asyncdp::sim::checkin {

struct StepOutcome {
  bool empty = false;          // nobody checked in
  bool dummy = false;          // one_client: the dummy update A_ldp(0) was applied
  bool model_updated = false;  // theta changed at this step
  int64_t used = 0;            // clients whose update was used
  int64_t records = 0;         // records whose gradients entered the step
  int64_t discarded = 0;       // checked-in clients not used (one_client: |S_i| - 1)
};

class CheckInServer {
 public:
  // `clients` compute the updates; `runtime` (null: on this thread) says where. sigma is the noise
  // multiplier (0 = no noise).
  CheckInServer(const CheckInOptions& options, const CheckInClients& clients, StepRuntime* runtime,
                Eigen::VectorXf initial, StepSizeOptions step_size, double sigma);
  ~CheckInServer();
  CheckInServer(const CheckInServer&) = delete;
  CheckInServer& operator=(const CheckInServer&) = delete;

  // Step `global_step` (0-based over all windows) of window `window`, checked-in clients `checked_in`.
  StepOutcome OnStep(int64_t window, int64_t global_step, std::span<const int32_t> checked_in);
  // Applies a partially filled accumulator (fewer than b steps) at the end of the run.
  void Flush();

  const Eigen::VectorXf& model() const { return theta_; }
  int64_t updates() const { return updates_; }

  static constexpr uint32_t kServerNoiseStream = 0xFFFFFFFFu;

 private:
  void Apply(double divisor);
  // Adds client j's update before noise to step_update_ (computed here); returns its record count.
  int64_t AddClientUpdate(int32_t client);
  // With a runtime: the clients' updates computed (or fetched) there, summed into step_update_ in
  // `clients` order.
  int64_t AddClientUpdatesOfRuntime(std::span<const int32_t> clients);

  CheckInOptions options_;
  const CheckInClients& clients_;
  StepRuntime* runtime_;
  StepSizeOptions step_size_;
  double sigma_;
  Eigen::VectorXf theta_;
  Eigen::VectorXf step_update_;   // this step's noisy update
  Eigen::VectorXf client_update_;  // one client's update before noise
  Eigen::VectorXf accumulator_;   // one_client: sum of the noisy updates since the last model update
  int64_t accumulated_steps_ = 0;
  int64_t updates_ = 0;
  std::unique_ptr<models::Workspace> workspace_;
  std::vector<int64_t> batch_;
  // With a runtime: one buffer per client of the current step.
  std::vector<Eigen::VectorXf> task_updates_;
  std::vector<int64_t> task_records_;
};

}  // namespace asyncdp::sim::checkin
