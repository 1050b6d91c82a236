#include "sim/checkin/checkin_client.h"

namespace asyncdp::sim::checkin {

int64_t CheckInClients::Update(std::span<const float> theta, int32_t client, Eigen::VectorXf& out,
                               models::Workspace& workspace) const {
  const std::vector<int64_t>& mine = rows[static_cast<size_t>(client)];
  out.setZero();
  model.ClippedGradientSum(theta, data, mine, clip,
                           std::span<float>(out.data(), static_cast<size_t>(out.size())), workspace);
  if (user_level()) {
    // The client's whole update is projected onto the ball of radius C_u (docs/theory.md §4, user level).
    const double norm = out.norm();
    if (norm > client_clip) out *= static_cast<float>(client_clip / norm);
  }
  return static_cast<int64_t>(mine.size());
}

}  // namespace asyncdp::sim::checkin
