#include "sim/protocol/server.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <set>
#include <vector>

namespace asyncdp::sim {
namespace {

UpdateMessage ScalarUpdate(int64_t client, int64_t round, float value, double step = 1.0) {
  return UpdateMessage{client, round, step, Eigen::VectorXf::Constant(2, value)};
}

// What a client sends is exactly what the accountant covers, (i, U) with the public step size: the message
// type has no field for a realised batch size (a function of the data under Poisson sampling).
template <typename T>
concept CarriesABatchSize = requires(T t) { t.batch_size; } || requires(T t) { t.gradients; } ||
                            requires(T t) { t.examples; };
static_assert(!CarriesABatchSize<UpdateMessage>);
// The fields: client, local_round, step_size, update, computed_at and clip — the round's clip norm, dp.clip or
// the adaptive C_i, a function of released noisy counts (docs/theory.md §2, "Adaptive clipping").
static_assert(sizeof(UpdateMessage) == 4 * sizeof(int64_t) + sizeof(double) + sizeof(Eigen::VectorXf),
              "UpdateMessage gained a field: check that the accountant covers it (docs/design.md, threat model)");

TEST(ServerProtocol, EarlyRoundsAreExposedUntilThePrefixCatchesUp) {
  ServerProtocol server(1, Eigen::VectorXf::Zero(2));
  server.OnUpdate(ScalarUpdate(0, 2, 1.0f));
  server.OnUpdate(ScalarUpdate(0, 1, 1.0f));
  EXPECT_EQ(server.delivered_prefix(0), 0);
  EXPECT_EQ(server.early_rounds(0), (std::set<int64_t>{1, 2}));
  server.OnUpdate(ScalarUpdate(0, 0, 1.0f));
  EXPECT_EQ(server.delivered_prefix(0), 3);
  EXPECT_TRUE(server.early_rounds(0).empty());
}

TEST(ServerProtocol, GlobalRoundIsTheSmallestDeliveredPrefixOfTheBlockingClients) {
  // Random arrival orders (out of order within a client too), stops and exclusions, checked against the
  // definition (§4.3): k = min over blocking clients of the contiguous rounds delivered.
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t n = 1 + static_cast<int64_t>(rng() % 6);
    ServerProtocol server(n, Eigen::VectorXf::Zero(2));
    std::vector<std::vector<int64_t>> pending(n);  // rounds each client still has to deliver
    std::vector<int64_t> prefix(n, 0);
    std::vector<std::vector<bool>> got(n);
    std::vector<bool> blocking(n, true);
    std::vector<int64_t> total(n, -1);
    for (int64_t c = 0; c < n; ++c) {
      const int64_t rounds = 1 + static_cast<int64_t>(rng() % 8);
      for (int64_t r = 0; r < rounds; ++r) pending[c].push_back(r);
      std::shuffle(pending[c].begin(), pending[c].end(), rng);
      got[c].assign(rounds, false);
    }
    int64_t last_broadcast = 0;
    bool unbroadcast_updates = false;  // applied since the last broadcast
    while (true) {
      std::vector<int64_t> active;
      for (int64_t c = 0; c < n; ++c) {
        if (!pending[c].empty() || (blocking[c] && total[c] < 0)) active.push_back(c);
      }
      if (active.empty()) break;
      const int64_t c = active[rng() % active.size()];
      std::optional<BroadcastMessage> b;
      const auto action = rng() % 10;
      if (action == 0 && blocking[c]) {
        b = server.Exclude(c);
        blocking[c] = false;
        pending[c].clear();
      } else if (!pending[c].empty()) {
        const int64_t round = pending[c].back();
        pending[c].pop_back();
        b = server.OnUpdate(ScalarUpdate(c, round, 1));
        unbroadcast_updates = true;
        got[c][round] = true;
        while (prefix[c] < static_cast<int64_t>(got[c].size()) && got[c][prefix[c]]) ++prefix[c];
      } else {
        total[c] = static_cast<int64_t>(got[c].size());
        b = server.OnClientStopped(c, total[c]);
      }
      for (int64_t d = 0; d < n; ++d) {
        if (blocking[d] && total[d] >= 0 && prefix[d] >= total[d]) blocking[d] = false;
      }
      int64_t expected = std::numeric_limits<int64_t>::max();
      for (int64_t d = 0; d < n; ++d) {
        if (blocking[d]) expected = std::min(expected, prefix[d]);
      }
      const bool any_blocking = expected != std::numeric_limits<int64_t>::max();
      ASSERT_EQ(server.all_released(), !any_blocking);
      if (!any_blocking && unbroadcast_updates) {
        // Nobody to wait for: the model with new updates is broadcast at once as round k = the furthest
        // delivered prefix, if that is past the last broadcast; never beyond it (G ≤ T).
        expected = 0;
        for (int64_t d = 0; d < n; ++d) expected = std::max(expected, prefix[d]);
      }
      if ((any_blocking || unbroadcast_updates) && expected > last_broadcast) {
        ASSERT_TRUE(b.has_value()) << "trial " << trial;
        EXPECT_EQ(b->global_round, expected);
        last_broadcast = expected;
        unbroadcast_updates = false;
      } else {
        EXPECT_FALSE(b.has_value()) << "trial " << trial;
      }
      EXPECT_EQ(server.global_round(), last_broadcast);
      int64_t furthest = 0;
      for (int64_t d = 0; d < n; ++d) furthest = std::max(furthest, prefix[d]);
      EXPECT_LE(server.global_round(), furthest);  // G never exceeds the rounds any client delivered
    }
  }
}

TEST(ServerProtocol, AppliesEveryUpdateInArrivalOrderAsDescent) {
  ServerProtocol server(2, Eigen::VectorXf::Zero(2));
  server.OnUpdate(ScalarUpdate(0, 0, 1.0f, 0.5));
  server.OnUpdate(ScalarUpdate(1, 0, 2.0f, 0.25));
  // v̂ ← v̂ − η̄_i·U for each arrival (docs/theory.md §2).
  EXPECT_FLOAT_EQ(server.model()[0], -0.5f - 0.5f);
  EXPECT_EQ(server.updates_applied(), 2);
}

TEST(ServerProtocol, BroadcastsRoundKOnlyWhenEveryClientDeliveredRoundsBelowK) {
  ServerProtocol server(3, Eigen::VectorXf::Zero(2));
  EXPECT_FALSE(server.OnUpdate(ScalarUpdate(0, 0, 1)).has_value());
  EXPECT_FALSE(server.OnUpdate(ScalarUpdate(1, 0, 1)).has_value());
  EXPECT_FALSE(server.OnUpdate(ScalarUpdate(0, 1, 1)).has_value());  // client 0 ahead; client 2 still missing
  const auto b = server.OnUpdate(ScalarUpdate(2, 0, 1));
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->global_round, 1);
  // v̂_1 contains all round-0 updates and client 0's round 1 (the asynchrony the paper allows).
  EXPECT_FLOAT_EQ((*b->model)[0], -4.0f);
  EXPECT_EQ(server.global_round(), 1);
}

TEST(ServerProtocol, OutOfOrderDeliveryCountsOnlyContiguousPrefix) {
  ServerProtocol server(1, Eigen::VectorXf::Zero(2));
  EXPECT_FALSE(server.OnUpdate(ScalarUpdate(0, 1, 1)).has_value());  // round 1 before round 0
  EXPECT_EQ(server.delivered_prefix(0), 0);
  const auto b = server.OnUpdate(ScalarUpdate(0, 0, 1));
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->global_round, 2);  // jumps: only the newest k is broadcast
  EXPECT_EQ(server.delivered_prefix(0), 2);
}

TEST(ServerProtocol, StoppedClientStopsBlockingOnceItsLastRoundIsIn) {
  ServerProtocol server(2, Eigen::VectorXf::Zero(2));
  server.OnUpdate(ScalarUpdate(0, 0, 1));
  // Client 1 announces it will send one round; the notice overtakes that round's message.
  EXPECT_FALSE(server.OnClientStopped(1, 1).has_value());
  EXPECT_TRUE(server.blocking(1));
  const auto b = server.OnUpdate(ScalarUpdate(1, 0, 1));
  ASSERT_TRUE(b.has_value());
  EXPECT_FALSE(server.blocking(1));
  // Client 0 alone now drives the global round.
  const auto b2 = server.OnUpdate(ScalarUpdate(0, 1, 1));
  ASSERT_TRUE(b2.has_value());
  EXPECT_EQ(b2->global_round, 2);
}

TEST(ServerProtocol, ExcludingASilentClientReleasesTheGlobalRound) {
  ServerProtocol server(2, Eigen::VectorXf::Zero(2));
  EXPECT_FALSE(server.OnUpdate(ScalarUpdate(0, 0, 1)).has_value());
  const auto b = server.Exclude(1);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->global_round, 1);
  EXPECT_TRUE(server.excluded(1));
  EXPECT_EQ(server.excluded_clients(), std::vector<int64_t>{1});
  EXPECT_FALSE(server.all_released());
  server.OnClientStopped(0, 1);
  EXPECT_TRUE(server.all_released());
}

TEST(ServerProtocol, LastUpdateAfterTheStopNoticeStillFormsTheFinalGlobalRound) {
  // One client, two rounds; its stop notice overtakes round 1 (issue: v̂_T was never formed).
  ServerProtocol server(1, Eigen::VectorXf::Zero(2));
  ASSERT_TRUE(server.OnUpdate(ScalarUpdate(0, 0, 1)).has_value());
  EXPECT_FALSE(server.OnClientStopped(0, 2).has_value());
  const auto b = server.OnUpdate(ScalarUpdate(0, 1, 1));
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->global_round, 2);  // v̂_T with T = 2
  EXPECT_TRUE(server.all_released());
}

TEST(ServerProtocol, AnExcludedClientHeardFromAgainIsReadmittedAndBlocksOnceCaughtUp) {
  ServerProtocol server(2, Eigen::VectorXf::Zero(2));
  server.Exclude(1);
  for (int64_t r = 0; r < 3; ++r) server.OnUpdate(ScalarUpdate(0, r, 1));
  EXPECT_EQ(server.global_round(), 3);
  // Client 1's round 0 arrives, computed on v̂_0 while the global round went on to 3.
  UpdateMessage late = ScalarUpdate(1, 0, 1);
  late.computed_at = 0;
  server.OnUpdate(late);
  EXPECT_FALSE(server.excluded(1));
  EXPECT_EQ(server.readmissions(1), 1);
  EXPECT_EQ(server.max_update_lag(1), 3);  // applied at 3, computed at 0
  EXPECT_FALSE(server.blocking(1));         // still behind: its catch-up holds nobody up
  for (int64_t r = 1; r < 4; ++r) server.OnUpdate(ScalarUpdate(1, r, 1));
  EXPECT_TRUE(server.blocking(1));  // prefix 4 > global round 3: a member again
  EXPECT_EQ(server.global_round(), 3);
  const auto b = server.OnUpdate(ScalarUpdate(0, 3, 1));
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->global_round, 4);
}

TEST(ServerProtocol, APausedClientDoesNotBlockAndBlocksAgainAfterResumingAndCatchingUp) {
  ServerProtocol server(2, Eigen::VectorXf::Zero(2));
  server.OnUpdate(ScalarUpdate(1, 0, 1));
  EXPECT_FALSE(server.OnClientPaused(1, 1).has_value());
  EXPECT_FALSE(server.blocking(1));
  EXPECT_TRUE(server.paused(1));
  for (int64_t r = 0; r < 5; ++r) ASSERT_TRUE(server.OnUpdate(ScalarUpdate(0, r, 1)).has_value());
  EXPECT_EQ(server.global_round(), 5);  // client 1 paused: nobody waits for it
  server.OnClientResumed(1);
  EXPECT_FALSE(server.paused(1));
  EXPECT_FALSE(server.blocking(1));
  for (int64_t r = 1; r < 6; ++r) server.OnUpdate(ScalarUpdate(1, r, 1));
  EXPECT_TRUE(server.blocking(1));
  EXPECT_FALSE(server.all_released());
}

TEST(ServerProtocol, BroadcastSnapshotIsACopyNotAView) {
  ServerProtocol server(1, Eigen::VectorXf::Zero(2));
  const auto b = server.OnUpdate(ScalarUpdate(0, 0, 1));
  ASSERT_TRUE(b.has_value());
  server.OnUpdate(ScalarUpdate(0, 1, 1));
  EXPECT_FLOAT_EQ((*b->model)[0], -1.0f);  // unaffected by later updates
  EXPECT_FLOAT_EQ(server.model()[0], -2.0f);
}

}  // namespace
}  // namespace asyncdp::sim
