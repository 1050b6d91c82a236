// The server's step weighting (sim/protocol/server_step.h): w = 1 by default (the paper's server, bit for
// bit), 1/n for per_client, times (1 + τ)^(−a) with τ the update's lag in global rounds.
#include "sim/protocol/server_step.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/protocol/server.h"

namespace asyncdp::sim {
namespace {

UpdateMessage Update(int64_t client, int64_t round, const Eigen::VectorXf& u, double step, int64_t computed_at) {
  return UpdateMessage{client, round, step, u, computed_at};
}

TEST(ServerStepWeight, FollowsTheDefinitions) {
  EXPECT_EQ(ServerStepWeight({}, 1000, 7), 1.0);  // full, no staleness weighting: exactly 1
  EXPECT_DOUBLE_EQ(ServerStepWeight({ServerStep::kPerClient, 0.0}, 1000, 7), 1e-3);
  // FedAsync's polynomial s(τ) = (1 + τ)^(−a): τ = 3, a = 0.5 → 1/2.
  EXPECT_DOUBLE_EQ(ServerStepWeight({ServerStep::kFull, 0.5}, 1000, 3), 0.5);
  EXPECT_DOUBLE_EQ(ServerStepWeight({ServerStep::kPerClient, 1.0}, 4, 1), 0.125);
  EXPECT_EQ(ServerStepWeight({ServerStep::kFull, 2.0}, 4, 0), 1.0);  // a fresh update is not down-weighted
}

TEST(ServerProtocol, DefaultStepIsBitForBitTheUnweightedUpdate) {
  // v̂ ← v̂ − η̄·U computed by hand in float, against the server with default options: identical bits.
  Eigen::VectorXf initial(3);
  initial << 0.3f, -1.7f, 2.25f;
  Eigen::VectorXf u(3);
  u << 0.123456f, -9.87654f, 1e-3f;
  const double step = 0.0731;
  ServerProtocol server(2, initial);
  server.OnUpdate(Update(0, 0, u, step, 0));
  server.OnUpdate(Update(1, 0, u, step, 0));
  Eigen::VectorXf expected = initial;
  expected -= static_cast<float>(step) * u;
  expected -= static_cast<float>(step) * u;
  for (int j = 0; j < 3; ++j) EXPECT_EQ(server.model()[j], expected[j]) << j;
}

TEST(ServerProtocol, PerClientStepAveragesOverTheClients) {
  const int64_t n = 4;
  ServerProtocol server(n, Eigen::VectorXf::Zero(2), ServerOptions{ServerStep::kPerClient, 0.0});
  // Every client sends the same U = (1, 2) at step 1: one global round moves v̂ by exactly −U (the average).
  for (int64_t c = 0; c < n; ++c) server.OnUpdate(Update(c, 0, Eigen::Vector2f(1.0f, 2.0f), 1.0, 0));
  EXPECT_EQ(server.global_round(), 1);
  EXPECT_FLOAT_EQ(server.model()[0], -1.0f);
  EXPECT_FLOAT_EQ(server.model()[1], -2.0f);
}

TEST(ServerProtocol, StalenessWeightUsesTheLagInGlobalRounds) {
  // One client, a = 1: round 0 computed on v̂_0 arrives fresh (w = 1); round 1 computed on v̂_0 arrives at
  // global round 1 (τ = 1, w = 1/2); round 2 computed on v̂_0 arrives at global round 2 (τ = 2, w = 1/3).
  ServerProtocol server(1, Eigen::VectorXf::Zero(1), ServerOptions{ServerStep::kFull, 1.0});
  const Eigen::VectorXf u = Eigen::VectorXf::Ones(1);
  server.OnUpdate(Update(0, 0, u, 1.0, 0));
  EXPECT_FLOAT_EQ(server.model()[0], -1.0f);
  server.OnUpdate(Update(0, 1, u, 1.0, 0));
  EXPECT_FLOAT_EQ(server.model()[0], -1.5f);
  server.OnUpdate(Update(0, 2, u, 1.0, 0));
  EXPECT_FLOAT_EQ(server.model()[0], -1.5f - 1.0f / 3.0f);
  EXPECT_EQ(server.max_update_lag(0), 2);
}

}  // namespace
}  // namespace asyncdp::sim
