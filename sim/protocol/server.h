// The server of the asynchronous framework (proactive-dp.md §4.3) as event handlers, no threads inside.
// It applies each (c, i, U) on arrival, v̂ ← v̂ − η̄_i·U (descent, §2.4), and broadcasts v̂_k with the
// largest k such that every *blocking* client has delivered all of its rounds 0..k−1. A client stops
// blocking once it has delivered every round it will ever send (it completed its plan or exhausted its
// budget) or when the runtime excludes it (silent for protocol.exclude_after).
//
// Cost: O(P) per update plus O(1) amortised bookkeeping; a broadcast copies v̂ once (shared by all recipients).
// Thread safety: none; one runtime thread owns the server.
#pragma once

#include <Eigen/Dense>

#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "sim/protocol/messages.h"

namespace asyncdp::sim {

class ServerProtocol {
 public:
  ServerProtocol(int64_t num_clients, const Eigen::VectorXf& initial_model);

  // Applies an update; returns the broadcast it triggers, if the global round advanced.
  std::optional<BroadcastMessage> OnUpdate(const UpdateMessage& message);
  // The client will send no rounds ≥ total_rounds; once those are in it no longer blocks broadcasts.
  std::optional<BroadcastMessage> OnClientStopped(int64_t client, int64_t total_rounds);
  // The runtime gave up on a silent client (exclude_after): it no longer blocks broadcasts.
  std::optional<BroadcastMessage> Exclude(int64_t client);

  const Eigen::VectorXf& model() const { return model_; }
  int64_t global_round() const { return global_round_; }
  int64_t updates_applied() const { return updates_applied_; }
  // Rounds 0..delivered_prefix(c)−1 of client c are all in.
  int64_t delivered_prefix(int64_t client) const { return prefix_[client]; }
  // Rounds of client c applied ahead of its prefix (out-of-order arrivals): with the prefix, every round
  // of c that v̂ already contains.
  const std::set<int64_t>& early_rounds(int64_t client) const { return early_[client]; }
  bool excluded(int64_t client) const { return excluded_[client]; }
  bool blocking(int64_t client) const { return blocking_[client]; }
  // The client holds up the next broadcast: it blocks and has delivered no round beyond the current
  // global round. A client waiting for a broadcast is silent because of the laggards, not because it
  // failed, so exclude_after applies to laggards only.
  bool lagging(int64_t client) const { return blocking_[client] && prefix_[client] <= global_round_; }
  const std::vector<int64_t>& excluded_clients() const { return excluded_order_; }
  // True when no client blocks any more (all stopped or excluded): the run is over.
  bool all_released() const { return blocking_count_ == 0; }
  // A shared copy of v̂ (copy-on-broadcast).
  ModelSnapshot Snapshot() const;

 private:
  void SetPrefix(int64_t client, int64_t prefix);
  void Release(int64_t client);
  // Recomputes min_prefix_ / at_min_ by a scan over the blocking clients.
  void RescanMinimum();
  std::optional<BroadcastMessage> MaybeBroadcast();

  Eigen::VectorXf model_;  // v̂
  int64_t global_round_ = 0;
  int64_t updates_applied_ = 0;
  std::vector<int64_t> prefix_;               // contiguous rounds delivered per client
  std::vector<std::set<int64_t>> early_;      // rounds received ahead of the prefix (out-of-order arrival)
  std::vector<int64_t> final_rounds_;         // rounds the client will ever send; -1 = unknown
  std::vector<bool> blocking_;
  std::vector<bool> excluded_;
  std::vector<int64_t> excluded_order_;
  // min over blocking clients of prefix_ (the candidate k) and how many blocking clients sit at it. The
  // minimum only grows, so it is rescanned when its last client moves on: at most once per global round,
  // O(1) amortised per update with no allocation.
  int64_t blocking_count_ = 0;
  int64_t min_prefix_ = 0;
  int64_t at_min_ = 0;
};

}  // namespace asyncdp::sim
