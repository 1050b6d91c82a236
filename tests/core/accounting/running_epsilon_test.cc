// RunningEpsilon (core/accounting/running_epsilon.h): incremental with the PLD accountant, Account's value
// for the whole and for every other accountant, and Account's refusal where it refuses.
#include "core/accounting/running_epsilon.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace asyncdp::accounting {
namespace {

double AccountedEpsilon(const DpEvent& event, AccountantKind kind, double delta) {
  AccountQuery query;
  query.delta = delta;
  query.pld_lower_bound = false;
  const Accounted a = Account(event, kind, query);
  EXPECT_TRUE(a.available) << a.reason;
  return a.result.epsilon;
}

TEST(RunningEpsilon, PldPartsAreComposedOnTheWholeGridAndTheWholeIsAccountsOwn) {
  const Schedule whole = {{26.0 / 6512, 0.8, 1253}};
  const DpEventPtr event = ScheduleEvent(whole, SamplingModel::kPoisson);
  const RunningEpsilon running(*event, AccountantKind::kPld, 1e-4, {});
  EXPECT_TRUE(running.incremental());
  EXPECT_EQ(running.Of(*event), AccountedEpsilon(*event, AccountantKind::kPld, 1e-4));
  double previous = 0.0;
  for (int64_t rounds : {10, 100, 600, 1253}) {
    const DpEventPtr part = ScheduleEvent({{26.0 / 6512, 0.8, rounds}}, SamplingModel::kPoisson);
    const double eps = running.Of(*part);
    EXPECT_GT(eps, previous);
    EXPECT_NEAR(eps, AccountedEpsilon(*part, AccountantKind::kPld, 1e-4), 1e-4 * eps) << rounds;
    previous = eps;
  }
  // A round the whole plan lacks: composed by Account, not refused.
  const DpEventPtr other = ScheduleEvent({{0.01, 0.8, 5}}, SamplingModel::kPoisson);
  EXPECT_EQ(running.Of(*other), AccountedEpsilon(*other, AccountantKind::kPld, 1e-4));
}

TEST(RunningEpsilon, OtherAccountantsAndShuffledRoundsGoThroughAccount) {
  const Schedule whole = {{0.01, 1.0, 200}};
  for (AccountantKind kind : {AccountantKind::kRdp, AccountantKind::kGdp}) {
    const RunningEpsilon running(*ScheduleEvent(whole, SamplingModel::kPoisson), kind, 1e-5, {});
    EXPECT_FALSE(running.incremental());
    const DpEventPtr part = ScheduleEvent({{0.01, 1.0, 50}}, SamplingModel::kPoisson);
    EXPECT_EQ(running.Of(*part), AccountedEpsilon(*part, kind, 1e-5));
  }
  const RunningEpsilon shuffled(*ScheduleEvent(whole, SamplingModel::kShuffle), AccountantKind::kPld, 1e-5, {});
  EXPECT_FALSE(shuffled.incremental());
  const DpEventPtr part = ScheduleEvent({{0.01, 1.0, 150}}, SamplingModel::kShuffle);
  EXPECT_EQ(shuffled.Of(*part), AccountedEpsilon(*part, AccountantKind::kPld, 1e-5));
  // Secure (discrete Gaussian) noise: the PLD accountant refuses, and so does the running epsilon.
  const DpEventPtr secure = ScheduleEvent(whole, SamplingModel::kPoisson, NoiseModel::kDiscreteGaussian);
  const RunningEpsilon refused(*secure, AccountantKind::kPld, 1e-5, {});
  EXPECT_THROW(refused.Of(*secure), ConfigError);
}

}  // namespace
}  // namespace asyncdp::accounting
