// The client side of the random check-in protocols (Balle et al.; docs/theory.md §4): what client j sends
// when the server asks it at a step — its update before noise at the server's model θ, the clipped-gradient
// sum of its records (clip C per record; one record at the record level), and at the user level
// (C_u = dp.client_clip > 0) that sum projected onto the ball of radius C_u. The noise is the server's
// (checkin_server.h). An event handler's part with no threads and no clock: where it runs — on the
// server's thread, as tasks on worker threads, or on the rank hosting the client — is the runtime's
// (sim/runtime/step_runtime.h).
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <span>
#include <vector>

#include "data/dataset.h"
#include "models/model.h"

namespace asyncdp::sim::checkin {

struct CheckInClients {
  const models::Model& model;
  const data::Dataset& data;
  const std::vector<std::vector<int64_t>>& rows;  // client j's rows of `data`
  double clip = 0.0;                              // C, per record
  double client_clip = 0.0;                       // C_u at the user level; 0 at the record level

  bool user_level() const { return client_clip > 0.0; }
  // Client `client`'s update before noise at `theta` into `out` (overwritten), computed with `workspace`;
  // returns its record count.
  int64_t Update(std::span<const float> theta, int32_t client, Eigen::VectorXf& out,
                 models::Workspace& workspace) const;
};

}  // namespace asyncdp::sim::checkin
