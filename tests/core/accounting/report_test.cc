#include "core/accounting/report.h"

#include <gtest/gtest.h>

#include "core/accounting/gdp/gdp.h"
#include "core/error.h"

namespace asyncdp::accounting {
namespace {

TEST(ReportTest, EveryNumberCarriesItsAssumptions) {
  ReportOptions options;
  options.delta = 1e-5;
  const PrivacyReport r = ComputePrivacyReport({{0.01, 1.0, 1000}}, options);
  ASSERT_TRUE(r.rdp && r.pld && r.gdp);
  EXPECT_EQ(r.rounds, 1000);
  EXPECT_EQ(r.neighbours, NeighbourRelation::kAddRemove);
  EXPECT_EQ(r.rdp->assumptions.bound, BoundKind::kUpperBound);
  EXPECT_EQ(r.pld->assumptions.bound, BoundKind::kUpperBound);
  EXPECT_EQ(r.pld->lower_assumptions.bound, BoundKind::kLowerBound);
  EXPECT_EQ(r.gdp->assumptions.bound, BoundKind::kApproximation);
  EXPECT_EQ(r.gdp->assumptions.ToString().rfind(
                "gdp approximation: sampling=poisson neighbours=add_remove delta=1e-05", 0),
            0u)
      << r.gdp->assumptions.ToString();
  EXPECT_LE(r.pld->epsilon_lower, r.pld->epsilon);
  EXPECT_LE(r.pld->epsilon, r.rdp->epsilon);
  EXPECT_GT(r.rdp->order, 1.0);
  EXPECT_NEAR(r.gdp->mu, GdpMuPoisson(0.01, 1.0, 1000), 1e-15);
}

TEST(ReportTest, FixedSizeSamplingIsReportedUnderReplaceOneWithTheDominatingPair) {
  ReportOptions options;
  options.sampling = SamplingModel::kFixedSizeWithoutReplacement;
  const PrivacyReport r = ComputePrivacyReport({{0.01, 1.0, 100}}, options);
  EXPECT_EQ(r.neighbours, NeighbourRelation::kReplaceOne);
  EXPECT_EQ(r.rdp->assumptions.neighbours, NeighbourRelation::kReplaceOne);
  EXPECT_NE(r.pld->assumptions.method.find("(1-q)N(0)+qN(2C)"), std::string::npos) << r.pld->assumptions.method;
  // The dominating pair is the Poisson pair at sigma / 2.
  options.sampling = SamplingModel::kPoisson;
  EXPECT_DOUBLE_EQ(r.pld->epsilon, ComputePrivacyReport({{0.01, 0.5, 100}}, options).pld->epsilon);
}

TEST(ReportTest, ShuffleChargesOneGaussianPerStartedEpoch) {
  // 2.5 epochs of q = 0.1 batches: 3 started epochs, smallest sigma 2 => 3 Gaussians, sensitivity 2C.
  const ReducedSchedule reduced = ReduceShuffledSchedule({{0.1, 3.0, 10}, {0.1, 2.0, 15}}, SamplingModel::kShuffle);
  ASSERT_EQ(reduced.schedule.size(), 1u);
  EXPECT_EQ(reduced.schedule[0], (RoundGroup{1.0, 2.0, 3}));
  EXPECT_EQ(reduced.sampling, SamplingModel::kFixedSizeWithoutReplacement);
  ReportOptions options;
  options.sampling = SamplingModel::kShuffle;
  const PrivacyReport shuffled = ComputePrivacyReport({{0.1, 3.0, 10}, {0.1, 2.0, 15}}, options);
  options.sampling = SamplingModel::kFixedSizeWithoutReplacement;
  const PrivacyReport direct = ComputePrivacyReport({{1.0, 2.0, 3}}, options);
  EXPECT_DOUBLE_EQ(shuffled.rdp->epsilon, direct.rdp->epsilon);
  EXPECT_DOUBLE_EQ(shuffled.pld->epsilon, direct.pld->epsilon);
  EXPECT_EQ(shuffled.sampling, SamplingModel::kShuffle);
  EXPECT_NE(shuffled.rdp->assumptions.method.find("shuffle"), std::string::npos);
}

TEST(ReportTest, SecureNoiseIsAccountedByRdpOnly) {
  ReportOptions options;
  options.noise = NoiseModel::kDiscreteGaussian;
  const PrivacyReport r = ComputePrivacyReport({{0.01, 1.0, 100}}, options);
  ASSERT_TRUE(r.rdp.has_value());
  EXPECT_FALSE(r.pld.has_value());
  EXPECT_FALSE(r.gdp.has_value());
  EXPECT_EQ(r.unavailable.size(), 2u);
  EXPECT_NE(r.rdp->assumptions.method.find("discrete Gaussian"), std::string::npos);
  options.noise = NoiseModel::kGaussian;
  EXPECT_GE(r.rdp->epsilon, ComputePrivacyReport({{0.01, 1.0, 100}}, options).rdp->epsilon);
}

TEST(ReportTest, RejectsBadDelta) {
  ReportOptions options;
  options.delta = 0.0;
  EXPECT_THROW(ComputePrivacyReport({{0.01, 1.0, 10}}, options), ConfigError);
}

TEST(AssumptionsTest, ParsesAccountantNames) {
  EXPECT_EQ(ParseAccountantKind("pld", "x"), AccountantKind::kPld);
  EXPECT_THROW(ParseAccountantKind("moments", "x"), ConfigError);
}

}  // namespace
}  // namespace asyncdp::accounting
