#include "sim/protocol/liveness.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "sim/protocol/server.h"

namespace asyncdp::sim {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

UpdateMessage ZeroUpdateOf(int64_t client, int64_t round) {
  return UpdateMessage{client, round, 1.0, Eigen::VectorXf::Zero(2)};
}

// Two clients, exclude_after = 1 s. Client 0 delivers round 0 at t = 0.2 and waits for v̂_1; client 1 is
// silent, so it holds up the broadcast and is the one to exclude (the values are worked out by hand from
// docs/design.md, "End of a run", not from the class).
class LivenessTest : public ::testing::Test {
 protected:
  LivenessTest() : server_(2, Eigen::VectorXf::Zero(2)), liveness_(2, 1.0) {
    server_.OnUpdate(ZeroUpdateOf(0, 0));
    liveness_.Heard(0, 0.2);
  }
  ServerProtocol server_;
  Liveness liveness_;
};

TEST_F(LivenessTest, OnlyTheSilentLaggardIsExcludedOnceItHasBeenSilentForExcludeAfter) {
  EXPECT_DOUBLE_EQ(liveness_.SilentFor(1, 0.7), 0.7);
  EXPECT_DOUBLE_EQ(liveness_.SilentFor(0, 0.7), 0.5);
  EXPECT_TRUE(liveness_.ToExclude(server_, 1.0).empty());  // silent for exactly 1 s: not more
  EXPECT_EQ(liveness_.ToExclude(server_, 1.01), std::vector<int64_t>({1}));
  EXPECT_DOUBLE_EQ(liveness_.NextExclusion(server_), 1.0);  // client 0 waits, it does not lag
}

TEST_F(LivenessTest, ANewModelGivesEveryClientAFreshExcludeAfter) {
  liveness_.ModelFormed(0.8);
  EXPECT_DOUBLE_EQ(liveness_.SilentFor(1, 1.5), 0.7);
  EXPECT_TRUE(liveness_.ToExclude(server_, 1.5).empty());
  EXPECT_DOUBLE_EQ(liveness_.NextExclusion(server_), 1.8);
}

TEST_F(LivenessTest, AnExcludedClientIsCutOffAfterExcludeAfterMoreSilenceUnlessHeardFrom) {
  EXPECT_EQ(liveness_.CutOffAt(server_, 1), kNever);  // not excluded: never cut off
  EXPECT_FALSE(liveness_.CutOff(server_, 1, 100.0));
  server_.Exclude(1);  // at t = 1.5: v̂_1 forms without it
  liveness_.ModelFormed(1.5);
  EXPECT_DOUBLE_EQ(liveness_.CutOffAt(server_, 1), 2.5);
  EXPECT_FALSE(liveness_.CutOff(server_, 1, 2.4));
  EXPECT_TRUE(liveness_.CutOff(server_, 1, 2.6));
  liveness_.Heard(1, 2.0);  // an update in flight lands: the wait starts again
  EXPECT_DOUBLE_EQ(liveness_.CutOffAt(server_, 1), 3.0);
  EXPECT_FALSE(liveness_.CutOff(server_, 1, 2.6));
  EXPECT_EQ(liveness_.CutOffAt(server_, 0), kNever);  // client 0 was never excluded
}

TEST_F(LivenessTest, SkippingPastADeadlineMakesItsExclusionOrCutOffHoldAndNeverGoesBack) {
  const double now = 0.3;
  const double skipped = now + Liveness::SkipPast(liveness_.NextExclusion(server_), now);
  EXPECT_NEAR(skipped, 1.0, 1e-8);
  EXPECT_EQ(liveness_.ToExclude(server_, skipped), std::vector<int64_t>({1}));
  EXPECT_EQ(Liveness::SkipPast(1.0, 5.0), 0.0);  // already past: no jump back
  server_.Exclude(1);
  liveness_.ModelFormed(skipped);
  const double end = skipped + Liveness::SkipPast(liveness_.CutOffAt(server_, 1), skipped);
  EXPECT_FALSE(liveness_.CutOff(server_, 1, skipped));
  EXPECT_TRUE(liveness_.CutOff(server_, 1, end));
}

TEST(Liveness, WithExclusionOffNobodyIsExcludedOrCutOff) {
  ServerProtocol server(2, Eigen::VectorXf::Zero(2));
  Liveness liveness(2, 0.0);
  server.OnUpdate(ZeroUpdateOf(0, 0));
  EXPECT_TRUE(liveness.ToExclude(server, 1e9).empty());
  EXPECT_EQ(liveness.NextExclusion(server), kNever);
  server.Exclude(1);
  EXPECT_EQ(liveness.CutOffAt(server, 1), kNever);
  EXPECT_FALSE(liveness.CutOff(server, 1, 1e9));
}

}  // namespace
}  // namespace asyncdp::sim
