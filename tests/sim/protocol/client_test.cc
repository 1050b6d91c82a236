// The client's event handlers (Algorithms 2–4) driven by hand: the model a round computes on, what a
// broadcast during the round replaces, and the local update.
#include "sim/protocol/client.h"

#include <gtest/gtest.h>

#include "core/noise.h"
#include "core/random.h"
#include "core/sampling.h"
#include "sim/experiment.h"
#include "tests/sim/sim_test_util.h"

namespace asyncdp::sim {
namespace {

// U of client 0's round `round` computed on `w`, exactly as ComputeRound does it.
Eigen::VectorXf ExpectedUpdate(const Experiment& e, const Eigen::VectorXf& w, int64_t round) {
  auto sampler = MakeSampler(e.privacy.sampling(), e.data.shards[0].rows(), e.config.seed, 0);
  auto workspace = e.model->NewWorkspace(e.plans[0].max_sample_size());
  std::vector<int64_t> batch;
  sampler->Sample(static_cast<uint32_t>(round), e.plans[0].sample_sizes[round], batch);
  Eigen::VectorXf sum(w.size());
  const data::Dataset shard =
      e.data.shards[0].Copy();  // the shard as a copy: the client reads it through a view
  e.model->ClippedGradientSum(std::span<const float>(w.data(), w.size()), shard, batch, e.config.dp.clip,
                              std::span<float>(sum.data(), sum.size()), *workspace);
  AddRoundNoise(StreamKey{e.config.seed, 0, static_cast<uint32_t>(round), StreamPurpose::kGradientNoise},
                e.config.dp.clip, e.privacy.sigma, std::span<float>(sum.data(), sum.size()));
  return sum;
}

class ClientProtocolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TrainConfig c = testing::SmallA9aConfig(2, 300);
    c.protocol.tau = 1;
    experiment_ = BuildExperiment(c);
    clients_ = MakeClients(experiment_);
  }
  Experiment experiment_;
  std::vector<std::unique_ptr<ClientProtocol>> clients_;
};

TEST_F(ClientProtocolTest, RoundComputesOnTheModelHeldAtItsStart) {
  ClientProtocol& client = *clients_[0];
  const Eigen::VectorXf w0 = client.local_model();
  ASSERT_TRUE(client.BeginRound());
  client.ComputeRound();
  const UpdateMessage m = client.CompleteRound();
  const Eigen::VectorXf u = ExpectedUpdate(experiment_, w0, 0);
  ASSERT_EQ(m.update.size(), u.size());
  for (int64_t j = 0; j < u.size(); ++j) EXPECT_EQ(m.update[j], u[j]);
  const Eigen::VectorXf expected = w0 - static_cast<float>(experiment_.plans[0].step_sizes[0]) * u;
  for (int64_t j = 0; j < u.size(); ++j) EXPECT_EQ(client.local_model()[j], expected[j]);
}

TEST_F(ClientProtocolTest, BroadcastDuringARoundReplacesTheModelTheUpdateAppliesTo) {
  ClientProtocol& client = *clients_[0];
  const Eigen::VectorXf w0 = client.local_model();
  ASSERT_TRUE(client.BeginRound());
  client.ComputeRound();
  // v̂_1 arrives while round 0 is in flight (ISRReceive): U was computed on ŵ_0, but ŵ ← v̂_1 − η̄_0·U.
  const Eigen::VectorXf v1 = Eigen::VectorXf::Constant(w0.size(), 0.25f);
  client.OnBroadcast(BroadcastMessage{1, std::make_shared<const Eigen::VectorXf>(v1)});
  const UpdateMessage m = client.CompleteRound();
  const Eigen::VectorXf u = ExpectedUpdate(experiment_, w0, 0);
  for (int64_t j = 0; j < u.size(); ++j) EXPECT_EQ(m.update[j], u[j]);
  const Eigen::VectorXf expected = v1 - static_cast<float>(experiment_.plans[0].step_sizes[0]) * u;
  for (int64_t j = 0; j < u.size(); ++j) EXPECT_EQ(client.local_model()[j], expected[j]);
  EXPECT_EQ(client.global_round(), 1);

  // An older or equal broadcast is ignored (Algorithm 3), also between rounds.
  const Eigen::VectorXf before = client.local_model();
  client.OnBroadcast(BroadcastMessage{1, std::make_shared<const Eigen::VectorXf>(Eigen::VectorXf::Zero(w0.size()))});
  EXPECT_EQ(client.local_model(), before);
}

TEST_F(ClientProtocolTest, RecycledBuffersCarryNoStateIntoTheNextUpdate) {
  ClientProtocol& client = *clients_[0];
  ASSERT_TRUE(client.BeginRound());
  client.ComputeRound();
  UpdateMessage first = client.CompleteRound();
  const Eigen::VectorXf w1 = client.local_model();
  first.update.setConstant(1e9f);  // the server is done with it; garbage must not leak
  client.RecycleBuffer(std::move(first.update));
  client.RecycleBuffer(Eigen::VectorXf(3));  // wrong size: dropped, not reused
  client.OnBroadcast(BroadcastMessage{1, std::make_shared<const Eigen::VectorXf>(w1)});
  ASSERT_TRUE(client.BeginRound());
  client.ComputeRound();
  const UpdateMessage second = client.CompleteRound();
  const Eigen::VectorXf u = ExpectedUpdate(experiment_, w1, 1);
  ASSERT_EQ(second.update.size(), u.size());
  for (int64_t j = 0; j < u.size(); ++j) EXPECT_EQ(second.update[j], u[j]);
}

TEST_F(ClientProtocolTest, DelayRuleGatesTheNextRound) {
  ClientProtocol& client = *clients_[0];
  for (int round = 0; round < 2; ++round) {  // τ = 1: rounds 0 and 1 need k ≥ −1 and k ≥ 0
    ASSERT_TRUE(client.CanStartRound());
    ASSERT_TRUE(client.BeginRound());
    EXPECT_FALSE(client.CanStartRound());  // one round in flight at a time
    client.ComputeRound();
    client.CompleteRound();
  }
  EXPECT_FALSE(client.CanStartRound());  // round 2 needs k ≥ 1
  client.OnBroadcast(BroadcastMessage{1, std::make_shared<const Eigen::VectorXf>(client.local_model())});
  EXPECT_TRUE(client.CanStartRound());
  EXPECT_EQ(client.staleness_histogram().size(), 2u);  // rounds 0 (i − k = 0) and 1 (i − k = 1)
}

}  // namespace
}  // namespace asyncdp::sim
