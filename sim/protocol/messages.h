// Messages between clients and the server. A broadcast is one immutable copy of v̂_k shared by every
// recipient (copy-on-broadcast); an update owns the client's noisy sum U, moved (not copied) from the
// client to the server, whose runtime hands the buffer back for reuse (ClientProtocol::RecycleBuffer).
#pragma once

#include <Eigen/Dense>

#include <cstdint>
#include <memory>

namespace asyncdp::sim {

using ModelSnapshot = std::shared_ptr<const Eigen::VectorXf>;

// (i, U) of Algorithm 4, with the a-priori round step size η̄_i of that client's round (the server needs
// each client's schedule, proactive-dp.md §4.3 spec note).
struct UpdateMessage {
  int64_t client = 0;
  int64_t local_round = 0;
  double step_size = 0.0;        // η̄_i (already divided by s_i if that option is on)
  int64_t batch_size = 0;        // records actually sampled (varies under Poisson sampling)
  Eigen::VectorXf update;        // U = Σ clip_C(∇f) + N(0, C²σ²I)
};

// (k, v̂_k): the global model once every client's rounds ≤ k−1 are in.
struct BroadcastMessage {
  int64_t global_round = 0;
  ModelSnapshot model;
};

}  // namespace asyncdp::sim
