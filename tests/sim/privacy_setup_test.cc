// Where sigma is decided (sim/privacy_setup.h, ResolvePrivacy): from the configuration and the public plans,
// without training. Each case against accountants composed directly (tests/core/accounting/account_schedule.h).
#include "sim/privacy_setup.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "sim/round_plan.h"
#include "tests/core/accounting/account_schedule.h"
#include "tests/sim/sim_test_util.h"

namespace asyncdp::sim {
namespace {

using accounting::AccountantKind;

TrainConfig Config(double sigma, double epsilon) {
  TrainConfig c;
  c.schedule.sample_size = 20;
  testing::UseRounds(c, 100);
  c.dp.sigma = sigma;
  c.dp.epsilon = epsilon;
  c.dp.delta = 1e-5;
  c.dp.clip = 0.5;
  return c;
}

std::vector<RoundPlan> Plans(const TrainConfig& c, std::vector<int64_t> records) {
  std::vector<RoundPlan> plans;
  for (const int64_t n : records) plans.push_back(MakeRoundPlan(c.schedule, n));
  return plans;
}

double Pld(const accounting::Schedule& s) { return accounting::AccountSchedule(AccountantKind::kPld, s, 1e-5).epsilon; }

TEST(ResolvePrivacy, AGivenSigmaIsUsedAndFilledIntoEveryRound) {
  const TrainConfig c = Config(1.3, 0.0);
  PlanTable plans = Plans(c, {1000, 2000});
  const PrivacySetup p = ResolvePrivacy(c, plans, SamplingModel::kPoisson, 1e-5, 10);
  EXPECT_DOUBLE_EQ(p.sigma, 1.3);
  EXPECT_FALSE(p.calibrated);
  for (const RoundPlan& plan : plans) {
    for (const double m : plan.noise_multipliers) EXPECT_DOUBLE_EQ(m, 1.3);
  }
  EXPECT_TRUE(std::isinf(p.epsilon_budget));
}

// A non-private run adds no noise: its setup says σ = 0 whatever dp.sigma was written (the quick report's
// non-private twins once showed the DP file's σ = 19.3 beside "no noise").
TEST(ResolvePrivacy, ANonPrivateRunHasNoNoiseMultiplier) {
  TrainConfig c = Config(19.3, 0.0);
  c.dp.enabled = false;
  PlanTable plans = Plans(c, {1000});
  const PrivacySetup p = ResolvePrivacy(c, plans, SamplingModel::kPoisson, 0.0, 10);
  EXPECT_FALSE(p.enabled);
  EXPECT_EQ(p.sigma, 0.0);
  for (const double m : plans[0].noise_multipliers) EXPECT_EQ(m, 0.0);
}

TEST(ResolvePrivacy, CalibrationMakesTheLargestClientMeetTheTargetAndHaltsNobodyEarly) {
  const TrainConfig c = Config(0.0, 2.0);
  PlanTable plans = Plans(c, {1000, 400});  // the smaller shard has the larger rate
  const PrivacySetup p = ResolvePrivacy(c, plans, SamplingModel::kPoisson, 1e-5, 10);
  ASSERT_TRUE(p.calibrated);
  const double small = Pld({{20.0 / 400, p.sigma, 100}});
  EXPECT_LE(small, 2.0);
  EXPECT_GT(small, 2.0 * 0.999);
  EXPECT_LT(Pld({{20.0 / 1000, p.sigma, 100}}), small);
  EXPECT_GT(Pld({{20.0 / 400, p.sigma * (1 - 2e-4), 100}}), 2.0);  // the smallest sigma, to the policy's 1e-4
  // The budget is the target: every planned round fits.
  EXPECT_EQ(p.budget_rounds, (std::vector<int64_t>{100, 100}));
}

TEST(ResolvePrivacy, AFixedSigmaWithABudgetHaltsAtTheLastCertifiedRound) {
  TrainConfig c = Config(2.0, 1.0);  // q = 0.1: 10 rounds cost 0.8, 100 rounds 2.3
  PlanTable plans = Plans(c, {200});
  const PrivacySetup p = ResolvePrivacy(c, plans, SamplingModel::kPoisson, 1e-5, 10);
  const int64_t t = p.budget_rounds[0];
  ASSERT_GT(t, 0);
  ASSERT_LT(t, 100);
  EXPECT_LE(Pld({{0.1, 2.0, t}}), 1.0);
  EXPECT_GT(Pld({{0.1, 2.0, t + 1}}), 1.0);
}

TEST(ResolvePrivacy, UserLevelCalibratesEveryRoundAtRateOne) {
  TrainConfig c = Config(0.0, 4.0);
  c.dp.unit = PrivacyUnit::kClient;
  c.dp.client_clip = 2.0;
  PlanTable plans = Plans(c, {1000});
  const PrivacySetup p = ResolvePrivacy(c, plans, SamplingModel::kPoisson, 1e-5, 10);
  ASSERT_TRUE(p.user_level);
  const double eps = Pld({{1.0, p.sigma, 100}});
  EXPECT_LE(eps, 4.0);
  EXPECT_GT(eps, 4.0 * 0.999);
  // Its record-level view: multiplier sigma C_u / C at the Poisson rate.
  const PrivacySetup record = p.RecordLevel();
  EXPECT_DOUBLE_EQ(record.AccountedSigma(p.sigma), p.sigma * 2.0 / 0.5);
  EXPECT_EQ(record.ClientSchedule(plans[0], 100), (accounting::Schedule{{0.02, p.sigma * 4.0, 100}}));
}

TEST(ResolvePrivacy, AdaptiveClippingCalibratesTheCombinedMultiplier) {
  TrainConfig c = Config(0.0, 2.0);
  c.dp.clip_mode = ClipMode::kAdaptive;
  c.dp.clip_count_sigma = 5.0;
  PlanTable plans = Plans(c, {400});
  const PrivacySetup p = ResolvePrivacy(c, plans, SamplingModel::kPoisson, 1e-5, 10);
  const double combined = CombinedSigma(p.sigma, 5.0);
  EXPECT_LT(combined, p.sigma);
  const double eps = Pld({{0.05, combined, 100}});
  EXPECT_LE(eps, 2.0);
  EXPECT_GT(eps, 2.0 * 0.999);
}

TEST(ResolvePrivacy, RefusesWhatTheEventCannotBeAccountedBy) {
  TrainConfig c = Config(1.0, 0.0);
  c.dp.secure_noise = true;  // discrete Gaussian: RDP only
  PlanTable plans = Plans(c, {400});
  EXPECT_THROW(ResolvePrivacy(c, plans, SamplingModel::kPoisson, 1e-5, 10), ConfigError);
  c.dp.accountant = RunAccountant::kRdp;
  EXPECT_NO_THROW(ResolvePrivacy(c, plans, SamplingModel::kPoisson, 1e-5, 10));
}

}  // namespace
}  // namespace asyncdp::sim
