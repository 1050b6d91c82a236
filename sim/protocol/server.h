// The server of the asynchronous framework (the server of Algorithm 3, Appendix A; docs/theory.md §3) as event handlers, no threads inside.
// It applies each (c, i, U) on arrival, v̂ ← v̂ − η̄_i·U (descent, §2.4), and broadcasts v̂_k with the
// largest k such that every *blocking* client has delivered all of its rounds 0..k−1. A client stops
// blocking once it has delivered every round it will ever send (it completed its plan or exhausted its
// budget), while it is paused at its accuracy target (§6.4 step 4), or when the runtime excludes it
// (silent for protocol.exclude_after).
//
// Coming back (docs/design.md, "Exclusion, pause and re-join"): an excluded client that is heard from again
// is re-admitted, and a paused client may resume. Such a client is usually many global rounds behind in its
// local numbering; making it block at once would hold every broadcast until it has replayed the gap. So it
// blocks again only once it has caught up (its delivered prefix exceeds the global round); until then its
// rounds are applied as they arrive. Its staleness on return stays within Υ: it computes on the newest v̂_k
// it holds. The "applied-at minus computed-at global round" of every update (update_lag) shows how late
// each update lands.
//
// With no client blocking, an update that extends the furthest delivered prefix forms global round k = that
// prefix at once (there is nobody to wait for), so the last rounds of a run always end in a broadcast v̂_T,
// whatever the order of a client's stop notice and its last update; k never passes the furthest prefix,
// so G ≤ T whatever the exclusions.
//
// Step weighting (sim/protocol/server_step.h): with ServerOptions other than the default, the applied step
// is w·η̄_i·U, w = 1/n (per_client) and/or the staleness factor (1 + τ)^(−a), τ = the update's lag.
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
#include "sim/protocol/server_step.h"

namespace asyncdp::sim {

class ServerProtocol {
 public:
  ServerProtocol(int64_t num_clients, const Eigen::VectorXf& initial_model, ServerOptions options = {});

  // Applies an update; returns the broadcast it triggers, if the global round advanced.
  std::optional<BroadcastMessage> OnUpdate(const UpdateMessage& message);
  // The client will send no rounds ≥ total_rounds; once those are in it no longer blocks broadcasts.
  // An excluded client that sends a stop notice is re-admitted (heard from again) before it is released.
  std::optional<BroadcastMessage> OnClientStopped(int64_t client, int64_t total_rounds);
  // The client paused after round total_rounds − 1 (at its accuracy target): like a stop, but it may resume.
  std::optional<BroadcastMessage> OnClientPaused(int64_t client, int64_t total_rounds);
  // The paused client computes again (a received model fell below its target): it blocks again once caught up.
  std::optional<BroadcastMessage> OnClientResumed(int64_t client);
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
  bool paused(int64_t client) const { return paused_[client]; }
  // Times the client was re-admitted after an exclusion (heard from again).
  int64_t readmissions(int64_t client) const { return readmissions_[client]; }
  // Applied-at minus computed-at global round of the client's updates: the largest and the sum (mean =
  // sum / updates of that client). 0 for a client that always computes on the newest model.
  int64_t max_update_lag(int64_t client) const { return max_lag_[client]; }
  int64_t update_lag_sum(int64_t client) const { return lag_sum_[client]; }
  int64_t updates_of(int64_t client) const { return updates_of_[client]; }
  // C of the client's last applied update (0 before any): the adaptive clip trajectory, public.
  double last_clip(int64_t client) const { return last_clip_[client]; }
  bool blocking(int64_t client) const { return blocking_[client]; }
  // The client holds up the next broadcast: it blocks and has delivered no round beyond the current
  // global round. A client waiting for a broadcast is silent because of the laggards, not because it
  // failed, so exclude_after applies to laggards only.
  bool lagging(int64_t client) const { return blocking_[client] && prefix_[client] <= global_round_; }
  // Somebody waits on the laggards: a blocking client that has delivered every round of the next broadcast,
  // or a client that stopped or paused (the end of the run, or its next accuracy check, waits for them).
  // Only then can a silent laggard be at fault (protocol.exclude_after). When every client is a laggard,
  // nobody waits and the silence is the machine's (all computing, or the process descheduled). O(n).
  bool held_up() const;
  // Every exclusion in order (a client re-admitted and excluded again appears twice).
  const std::vector<int64_t>& excluded_clients() const { return excluded_order_; }
  // True when no client blocks any more (all stopped or excluded): the run is over.
  bool all_released() const { return blocking_count_ == 0; }
  // A shared copy of v̂ (copy-on-broadcast).
  ModelSnapshot Snapshot() const;

 private:
  void SetPrefix(int64_t client, int64_t prefix);
  void Release(int64_t client);
  // Blocking again (re-admitted or resumed), once the client has caught up with the global round.
  void MaybeBlockAgain(int64_t client);
  void Readmit(int64_t client);
  // Recomputes min_prefix_ / at_min_ by a scan over the blocking clients.
  void RescanMinimum();
  std::optional<BroadcastMessage> MaybeBroadcast();

  ServerOptions options_;
  Eigen::VectorXf model_;  // v̂
  int64_t global_round_ = 0;
  int64_t updates_applied_ = 0;
  std::vector<int64_t> prefix_;               // contiguous rounds delivered per client
  std::vector<std::set<int64_t>> early_;      // rounds received ahead of the prefix (out-of-order arrival)
  std::vector<int64_t> final_rounds_;         // rounds the client will ever send; -1 = unknown
  std::vector<bool> blocking_;
  std::vector<bool> excluded_;
  std::vector<int64_t> excluded_order_;
  std::vector<bool> paused_;
  std::vector<bool> rejoining_;  // re-admitted or resumed, not blocking until caught up
  std::vector<int64_t> readmissions_;
  std::vector<int64_t> max_lag_, lag_sum_, updates_of_;
  std::vector<double> last_clip_;  // C of each client's last applied update
  int64_t updates_at_broadcast_ = 0;  // updates_applied_ when v̂_k was last formed
  // min over blocking clients of prefix_ (the candidate k) and how many blocking clients sit at it. The
  // minimum only grows, so it is rescanned when its last client moves on: at most once per global round,
  // O(1) amortised per update with no allocation.
  int64_t blocking_count_ = 0;
  int64_t min_prefix_ = 0;
  int64_t at_min_ = 0;
};

}  // namespace asyncdp::sim
