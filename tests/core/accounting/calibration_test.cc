#include "core/accounting/calibration.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/accounting/make_accountant.h"
#include "core/error.h"

namespace asyncdp::accounting {
namespace {

double EpsilonAt(AccountantKind kind, const Schedule& schedule, double delta, SamplingModel sampling) {
  AccountantOptions options;
  options.sampling = sampling;
  return AccountSchedule(kind, schedule, delta, options).epsilon;
}

TEST(CalibrationTest, InvertsEpsilonOfSigmaForEachAccountantAndSampler) {
  for (SamplingModel sampling : {SamplingModel::kPoisson, SamplingModel::kFixedSizeWithoutReplacement}) {
    for (AccountantKind kind : kMechanismAccountants) {
      AccountantOptions options;
      options.sampling = sampling;
      const std::vector<Schedule> client = {{{0.01, 1.0, 1000}}};
      const CalibrationResult r = CalibrateSigma(kind, options, client, 1.0, 1e-5);
      ASSERT_TRUE(r.found);
      EXPECT_LE(r.epsilon, 1.0);
      EXPECT_DOUBLE_EQ(r.epsilon, EpsilonAt(kind, {{0.01, r.sigma, 1000}}, 1e-5, sampling));
      // Smallest to 1e-4: a sigma 1.5e-4 lower no longer meets the target.
      EXPECT_GT(EpsilonAt(kind, {{0.01, r.sigma * (1 - 1.5e-4), 1000}}, 1e-5, sampling), 1.0);
    }
  }
}

TEST(CalibrationTest, TighterAccountantsNeedLessNoise) {
  const std::vector<Schedule> client = {{{0.02, 1.0, 500}}};
  EXPECT_LT(CalibrateSigma(AccountantKind::kPld, {}, client, 2.0, 1e-5).sigma,
            CalibrateSigma(AccountantKind::kRdp, {}, client, 2.0, 1e-5).sigma);
}

TEST(CalibrationTest, TheLargestClientDecidesAndProfilesScale) {
  // Two clients: 100 rounds at q = 0.01 and 1000 rounds at q = 0.001. The calibrated sigma makes the
  // larger of the two meet the target exactly.
  const std::vector<Schedule> clients = {{{0.01, 1.0, 100}}, {{0.001, 1.0, 1000}}};
  const CalibrationResult r = CalibrateSigma(AccountantKind::kPld, {}, clients, 0.5, 1e-5);
  ASSERT_TRUE(r.found);
  const double a = EpsilonAt(AccountantKind::kPld, {{0.01, r.sigma, 100}}, 1e-5, SamplingModel::kPoisson);
  const double b = EpsilonAt(AccountantKind::kPld, {{0.001, r.sigma, 1000}}, 1e-5, SamplingModel::kPoisson);
  EXPECT_DOUBLE_EQ(r.epsilon, std::max(a, b));
  // A decreasing-noise profile {2 sigma for 50 rounds, sigma for 50} calibrates the scale of both.
  const std::vector<Schedule> profile = {{{0.01, 2.0, 50}, {0.01, 1.0, 50}}};
  const CalibrationResult p = CalibrateSigma(AccountantKind::kPld, {}, profile, 0.5, 1e-5);
  EXPECT_NEAR(EpsilonAt(AccountantKind::kPld, {{0.01, 2 * p.sigma, 50}, {0.01, p.sigma, 50}}, 1e-5,
                        SamplingModel::kPoisson),
              0.5, 1e-3);
}

TEST(CalibrationTest, ReportsNotFoundAndRejectsBadInputs) {
  CalibrationOptions calibration;
  calibration.sigma_max = 2.0;
  const std::vector<Schedule> heavy = {{{0.5, 1.0, 100000}}};
  EXPECT_FALSE(CalibrateSigma(AccountantKind::kRdp, {}, heavy, 0.01, 1e-5, calibration).found);
  const std::vector<Schedule> client = {{{0.01, 1.0, 100}}};
  EXPECT_THROW(CalibrateSigma(AccountantKind::kRdp, {}, client, -1.0, 1e-5), ConfigError);
  EXPECT_THROW(CalibrateSigma(AccountantKind::kRdp, {}, client, 1.0, 2.0), ConfigError);
  AccountantOptions secure;
  secure.noise = NoiseModel::kDiscreteGaussian;
  EXPECT_THROW(CalibrateSigma(AccountantKind::kPld, secure, client, 1.0, 1e-5), ConfigError);
}

TEST(RoundsWithinBudgetTest, HaltsExactlyBeforeTheBudgetIsExceeded) {
  for (AccountantKind kind : {AccountantKind::kRdp, AccountantKind::kPld}) {
    const Schedule plan = {{0.02, 2.0, 300}, {0.04, 2.0, 5000}};  // in order: 300 rounds, then larger batches
    const int64_t rounds = RoundsWithinBudget(kind, {}, plan, 1.0, 1e-5);
    ASSERT_GT(rounds, 300);
    ASSERT_LT(rounds, 5300);
    EXPECT_LE(EpsilonAt(kind, SchedulePrefix(plan, rounds), 1e-5, SamplingModel::kPoisson), 1.0);
    EXPECT_GT(EpsilonAt(kind, SchedulePrefix(plan, rounds + 1), 1e-5, SamplingModel::kPoisson), 1.0);
  }
  EXPECT_EQ(RoundsWithinBudget(AccountantKind::kPld, {}, {{0.01, 5.0, 10}}, 1.0, 1e-5), 10);
  EXPECT_EQ(RoundsWithinBudget(AccountantKind::kPld, {}, {{0.5, 0.5, 10}}, 1e-3, 1e-5), 0);
}

TEST(RoundsWithinBudgetTest, PldAllowsMoreRoundsThanRdp) {
  const Schedule plan = {{0.02, 2.0, 100000}};
  EXPECT_GT(RoundsWithinBudget(AccountantKind::kPld, {}, plan, 1.0, 1e-5),
            RoundsWithinBudget(AccountantKind::kRdp, {}, plan, 1.0, 1e-5));
}

TEST(SchedulePrefixTest, TakesLeadingRoundsInOrder) {
  const Schedule plan = {{0.1, 1.0, 3}, {0.2, 1.0, 2}, {0.1, 1.0, 4}};
  EXPECT_EQ(SchedulePrefix(plan, 4), (Schedule{{0.1, 1.0, 3}, {0.2, 1.0, 1}}));
  EXPECT_EQ(SchedulePrefix(plan, 0), Schedule{});
  EXPECT_EQ(SchedulePrefix(plan, 100), plan);
}

}  // namespace
}  // namespace asyncdp::accounting
