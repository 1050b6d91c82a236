#include "sim/protocol/server.h"

#include <algorithm>
#include <limits>

#include "core/check.h"

namespace asyncdp::sim {

ServerProtocol::ServerProtocol(int64_t num_clients, const Eigen::VectorXf& initial_model, ServerOptions options)
    : options_(options),
      model_(initial_model),
      prefix_(num_clients, 0),
      early_(num_clients),
      final_rounds_(num_clients, -1),
      blocking_(num_clients, true),
      excluded_(num_clients, false),
      paused_(num_clients, false),
      rejoining_(num_clients, false),
      readmissions_(num_clients, 0),
      max_lag_(num_clients, 0),
      lag_sum_(num_clients, 0),
      updates_of_(num_clients, 0),
      last_clip_(num_clients, 0.0) {
  ASYNCDP_CHECK(num_clients >= 1);
  blocking_count_ = num_clients;
  at_min_ = num_clients;
}

void ServerProtocol::RescanMinimum() {
  min_prefix_ = std::numeric_limits<int64_t>::max();
  at_min_ = 0;
  for (size_t c = 0; c < prefix_.size(); ++c) {
    if (!blocking_[c]) continue;
    if (prefix_[c] < min_prefix_) {
      min_prefix_ = prefix_[c];
      at_min_ = 0;
    }
    if (prefix_[c] == min_prefix_) ++at_min_;
  }
}

void ServerProtocol::SetPrefix(int64_t client, int64_t prefix) {
  ASYNCDP_CHECK(prefix >= prefix_[client]);  // prefixes only grow
  const bool was_at_min = blocking_[client] && prefix_[client] == min_prefix_;
  prefix_[client] = prefix;
  if (was_at_min && prefix != min_prefix_ && --at_min_ == 0) RescanMinimum();
}

void ServerProtocol::Release(int64_t client) {
  if (!blocking_[client]) return;
  blocking_[client] = false;
  --blocking_count_;
  if (prefix_[client] == min_prefix_ && --at_min_ == 0 && blocking_count_ > 0) RescanMinimum();
}

void ServerProtocol::MaybeBlockAgain(int64_t client) {
  if (!rejoining_[client] || blocking_[client] || prefix_[client] <= global_round_) return;
  rejoining_[client] = false;
  blocking_[client] = true;
  ++blocking_count_;
  RescanMinimum();  // rare (once per re-join): O(n)
}

void ServerProtocol::Readmit(int64_t client) {
  if (!excluded_[client]) return;
  excluded_[client] = false;
  ++readmissions_[client];
  rejoining_[client] = !paused_[client] && final_rounds_[client] < 0;
}

std::optional<BroadcastMessage> ServerProtocol::MaybeBroadcast() {
  // k = min over blocking clients of their delivered prefix: v̂_k then holds every blocking client's
  // rounds ≤ k−1 (§4.3).
  int64_t k_new = min_prefix_;
  if (blocking_count_ == 0) {
    // Nobody to wait for: a model with updates not yet broadcast becomes global round k = the furthest
    // delivered prefix (v̂_T at the end of a run). Never past it: k counts rounds every client could have
    // delivered, so G ≤ max_c T_c whatever the exclusions (docs/design.md, "End of a run"). A re-admitted
    // client behind that k sends its rounds without a broadcast (Υ holds for it) until it passes k and
    // blocks again (MaybeBlockAgain).
    if (updates_applied_ == updates_at_broadcast_) return std::nullopt;
    k_new = 0;
    for (int64_t p : prefix_) k_new = std::max(k_new, p);
  }
  if (k_new <= global_round_) return std::nullopt;
  global_round_ = k_new;  // if k jumps by more than one, only the newest matters (§4.3 spec note)
  updates_at_broadcast_ = updates_applied_;
  return BroadcastMessage{global_round_, Snapshot()};
}

std::optional<BroadcastMessage> ServerProtocol::OnUpdate(const UpdateMessage& message) {
  const int64_t c = message.client;
  ASYNCDP_CHECK(c >= 0 && c < static_cast<int64_t>(prefix_.size()));
  ASYNCDP_CHECK(message.update.size() == model_.size());
  // v̂ ← v̂ − w·η̄_i·U, in arrival order; w = 1 unless a step weighting is on (server_step.h), τ = the lag.
  Readmit(c);  // heard from again
  const int64_t lag = std::max<int64_t>(0, global_round_ - message.computed_at);
  const double weight = ServerStepWeight(options_, static_cast<int64_t>(prefix_.size()), lag);
  model_ -= static_cast<float>(weight * message.step_size) * message.update;  // 1.0·x = x exactly
  ++updates_applied_;
  max_lag_[c] = std::max(max_lag_[c], lag);
  lag_sum_[c] += lag;
  ++updates_of_[c];
  last_clip_[c] = message.clip;
  if (message.local_round == prefix_[c]) {
    int64_t prefix = prefix_[c] + 1;
    auto& early = early_[c];
    while (!early.empty() && *early.begin() == prefix) {
      early.erase(early.begin());
      ++prefix;
    }
    SetPrefix(c, prefix);
  } else {
    ASYNCDP_CHECK(message.local_round > prefix_[c]);  // a round is delivered once
    early_[c].insert(message.local_round);
  }
  if (final_rounds_[c] >= 0 && prefix_[c] >= final_rounds_[c]) Release(c);
  MaybeBlockAgain(c);
  return MaybeBroadcast();
}

std::optional<BroadcastMessage> ServerProtocol::OnClientStopped(int64_t client, int64_t total_rounds) {
  Readmit(client);
  final_rounds_[client] = total_rounds;
  rejoining_[client] = false;
  if (prefix_[client] >= total_rounds) Release(client);
  return MaybeBroadcast();
}

std::optional<BroadcastMessage> ServerProtocol::OnClientPaused(int64_t client, int64_t total_rounds) {
  paused_[client] = true;
  return OnClientStopped(client, total_rounds);
}

std::optional<BroadcastMessage> ServerProtocol::OnClientResumed(int64_t client) {
  Readmit(client);
  paused_[client] = false;
  final_rounds_[client] = -1;
  // Still blocking if its last rounds before the pause are in flight: it simply goes on blocking.
  rejoining_[client] = !blocking_[client];
  MaybeBlockAgain(client);
  return MaybeBroadcast();
}

std::optional<BroadcastMessage> ServerProtocol::Exclude(int64_t client) {
  if (!blocking_[client]) return std::nullopt;
  excluded_[client] = true;
  excluded_order_.push_back(client);
  Release(client);
  return MaybeBroadcast();
}

bool ServerProtocol::held_up() const {
  for (size_t c = 0; c < prefix_.size(); ++c) {
    if (blocking_[c] && prefix_[c] > global_round_) return true;  // waits for the next broadcast
    if (!blocking_[c] && final_rounds_[c] >= 0) return true;       // stopped or paused: waits for the end
  }
  return false;
}

ModelSnapshot ServerProtocol::Snapshot() const { return std::make_shared<const Eigen::VectorXf>(model_); }

}  // namespace asyncdp::sim
