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
// each client's schedule, the server of Algorithm 3, Appendix A; docs/theory.md §3). Exactly what the accountant covers: no realised
// batch size or other data-dependent value travels with it (under Poisson sampling |B_i| is a function of
// the data); anything the server needs about a round comes from the public plan (s_i, η̄_i).
struct UpdateMessage {
  int64_t client = 0;
  int64_t local_round = 0;
  double step_size = 0.0;        // η̄_i from the plan (already divided by the planned s_i if that option is on)
  Eigen::VectorXf update;        // U = Σ clip_C(∇f) + N(0, C²σ²I)
  // k of the v̂_k the round started from (protocol state, no data): the server's "applied-at minus
  // computed-at global round" metric, which staleness i − k (clamped at 0) cannot show for a client whose
  // local rounds lag the global round (excluded, re-admitted or re-joining clients).
  int64_t computed_at = 0;
  // C the round clipped to (dp.clip, or the client's adaptive clip norm): a function of released noisy counts
  // only (adaptive clipping), so public; the server reports the clip trajectory from it.
  double clip = 0.0;
};

// (k, v̂_k): the global model once every client's rounds ≤ k−1 are in.
struct BroadcastMessage {
  int64_t global_round = 0;
  ModelSnapshot model;
};

}  // namespace asyncdp::sim
