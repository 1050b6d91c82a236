// The accuracy-target decisions of a client (Figure 15, step 4; docs/theory.md §9), driven by hand: pause at a
// phase end at or above target, re-join exactly when a received model falls below it, stop when no phase
// is left. The accuracy check is a stand-in (the model's first coordinate), so every crossing is exact.
#include "sim/proactive/target_tracker.h"

#include <gtest/gtest.h>

#include <memory>

#include "sim/experiment.h"
#include "sim/protocol/client.h"
#include "tests/sim/sim_test_util.h"

namespace asyncdp::sim {
namespace {

TEST(TargetTracker, ContinuesBelowTargetPausesAtOrAboveItAndStopsAfterTheLastPhase) {
  TargetTracker tracker(0.8, {3, 5, 9});
  EXPECT_EQ(tracker.BeforeRound(0, 0, [] { return 0.1; }), PhaseDecision::kContinue);
  EXPECT_TRUE(tracker.events().empty());  // not a phase end: no check
  EXPECT_EQ(tracker.BeforeRound(3, 2, [] { return 0.79; }), PhaseDecision::kContinue);  // below: phase 1
  EXPECT_EQ(tracker.phase(), 1);
  EXPECT_EQ(tracker.BeforeRound(5, 4, [] { return 0.8; }), PhaseDecision::kPause);  // at target: pause
  EXPECT_EQ(tracker.phase(), 2);  // resumes with phase 2
  EXPECT_FALSE(tracker.OnModelWhilePaused(5, 5, 0.8));  // exactly at target: stays paused
  EXPECT_TRUE(tracker.OnModelWhilePaused(5, 6, 0.7999));
  EXPECT_EQ(tracker.BeforeRound(9, 8, [] { return 0.5; }), PhaseDecision::kStopMissed);
  EXPECT_EQ(tracker.phase(), 3);
  ASSERT_EQ(tracker.events().size(), 6u);
  EXPECT_EQ(tracker.events()[3].kind, TargetEventKind::kResume);
  EXPECT_EQ(tracker.events()[3].global_round, 6);
}

TEST(TargetTracker, TheLastPhaseAtTargetStopsForGood) {
  TargetTracker tracker(0.5, {2});
  EXPECT_EQ(tracker.BeforeRound(2, 1, [] { return 0.9; }), PhaseDecision::kStopReached);
}

// A client on real data whose accuracy check reads w[0]: broadcasts set w[0] to chosen accuracies.
class PausingClient : public ::testing::Test {
 protected:
  void SetUp() override {
    TrainConfig c = testing::SmallA9aConfig(1, 300);
    c.protocol.tau = 5;
    experiment_ = BuildExperiment(c);
    ClientOptions options;
    options.clip = c.dp.clip;
    options.accuracy_target = 0.6;
    options.phase_ends = {2, 4, experiment_.plans[0].rounds()};
    client_ = std::make_unique<ClientProtocol>(
        options, experiment_.data.shards[0], *experiment_.model, experiment_.plans[0],
        *experiment_.protocol.delay_rule,
        MakeSampler(experiment_.privacy.sampling(), experiment_.data.shards[0].rows(), 1, 0),
        experiment_.initial_model, [](const Eigen::VectorXf& w) { return static_cast<double>(w[0]); });
  }
  BroadcastMessage Model(int64_t k, float accuracy) const {
    Eigen::VectorXf w = experiment_.initial_model;
    w[0] = accuracy;
    return {k, std::make_shared<const Eigen::VectorXf>(w)};
  }
  void Round() {
    ASSERT_TRUE(client_->BeginRound());
    client_->ComputeRound();
    client_->CompleteRound();
  }
  Experiment experiment_;
  std::unique_ptr<ClientProtocol> client_;
};

TEST_F(PausingClient, StopsComputingAtTargetKeepsReceivingAndRejoinsExactlyBelowIt) {
  client_->OnBroadcast(Model(1, 0.3f));
  Round();
  Round();
  client_->OnBroadcast(Model(2, 0.65f));  // at the end of phase 0 the last received model is above target
  ASSERT_TRUE(client_->CanStartRound());
  EXPECT_FALSE(client_->BeginRound());
  EXPECT_TRUE(client_->paused());
  EXPECT_FALSE(client_->stopped());
  EXPECT_FALSE(client_->CanStartRound());
  // Keeps receiving: each newer model is checked; at or above 0.6 it stays paused.
  for (float accuracy : {0.7f, 0.6f, 0.61f}) {
    client_->OnBroadcast(Model(client_->global_round() + 1, accuracy));
    EXPECT_TRUE(client_->paused()) << accuracy;
    EXPECT_EQ(client_->local_model()[0], accuracy);  // ŵ follows the received models
  }
  client_->OnBroadcast(Model(client_->global_round() + 1, 0.59f));  // the first model below target
  EXPECT_FALSE(client_->paused());
  EXPECT_TRUE(client_->CanStartRound());
  EXPECT_EQ(client_->target_tracker()->phase(), 1);  // re-joins with the next phase
  EXPECT_EQ(client_->target_tracker()->paused_checks(), 4);
  Round();  // round 2, the first of phase 1
  EXPECT_EQ(client_->local_round(), 3);
}

}  // namespace
}  // namespace asyncdp::sim
