// The privacy service (core/accounting/account.h): the one calibrator, the budget search and AccountAll,
// checked against accountants composed directly (tests/core/accounting/account_schedule.h).
#include "core/accounting/account.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "tests/core/accounting/account_schedule.h"

namespace asyncdp::accounting {
namespace {

double EpsilonAt(AccountantKind kind, const Schedule& schedule, double delta, SamplingModel sampling) {
  AccountantOptions options;
  options.sampling = sampling;
  return AccountSchedule(kind, schedule, delta, options).epsilon;
}

EventFamily Family(const std::vector<Schedule>& relative, SamplingModel sampling = SamplingModel::kPoisson,
                   NoiseModel noise = NoiseModel::kGaussian) {
  std::vector<DpEventPtr> unit;
  for (const Schedule& s : relative) unit.push_back(ScheduleEvent(s, sampling, noise));
  return ScaledFamily(std::move(unit));
}

TEST(CalibrateTest, InvertsEpsilonOfSigmaForEachAccountantAndSampler) {
  for (SamplingModel sampling : {SamplingModel::kPoisson, SamplingModel::kFixedSizeWithoutReplacement}) {
    for (AccountantKind kind : kMechanismAccountants) {
      const CalibrationResult r = Calibrate(Family({{{0.01, 1.0, 1000}}}, sampling), 1.0, 1e-5, kind);
      ASSERT_TRUE(r.found);
      EXPECT_LE(r.epsilon, 1.0);
      EXPECT_DOUBLE_EQ(r.epsilon, EpsilonAt(kind, {{0.01, r.sigma, 1000}}, 1e-5, sampling));
      // The one policy: smallest to 1e-4, so a sigma 1.5e-4 lower no longer meets the target.
      EXPECT_GT(EpsilonAt(kind, {{0.01, r.sigma * (1 - 1.5e-4), 1000}}, 1e-5, sampling), 1.0);
    }
  }
}

// Each evaluation is a composition (a PLD at ~10-200 ms), so the search's step count is its cost. Plain false
// position kept one end of the bracket fixed and crept towards the answer linearly: this random-allocation
// window (m = 100, E = 10, epsilon = 2) took 12 compositions; the Anderson-Bjorck weighting closes the
// bracket in 6, to the same 1e-4 answer. These Poisson searches took 9 (RDP) and 6 (PLD) before, 6 and 5
// after.
TEST(CalibrateTest, ClosesTheBracketInAFewEvaluations) {
  struct Case {
    AccountantKind kind;
    EventFamily family;
    double epsilon;
    size_t most;
  };
  const std::vector<Case> cases = {
      {AccountantKind::kRdp, Family({{{0.01, 1.0, 1000}}}), 1.0, 7},
      {AccountantKind::kPld, Family({{{0.01, 1.0, 1000}}}), 1.0, 5},
      {AccountantKind::kRandomAllocation,
       ScaledFamily({RandomAllocation({100, 1, 1.0}, 1000, Gaussian(1.0))}), 2.0, 5},
      // m = 1000, E = 100 starts from its Poisson twin's GDP estimate and takes 5 compositions, none at the
      // small sigma whose window PLD is the costliest (at delta = 1e-6 and eps = 3 the estimate is 0.779
      // against the answer 0.787, and halving from sigma = 1 took 8).
      {AccountantKind::kRandomAllocation,
       ScaledFamily({RandomAllocation({1000, 1, 1.0}, 100 * 1000, Gaussian(1.0))}), 3.0, 5}};
  for (const Case& c : cases) {
    // The memo holds one entry per composition by the accountant (the PLD search's GDP start keeps its own).
    EpsilonMemo memo;
    const CalibrationResult r = Calibrate(c.family, c.epsilon, 1e-5, c.kind, {}, &memo);
    ASSERT_TRUE(r.found);
    EXPECT_LE(memo.size(), c.most) << ToString(c.kind);
    // Still the smallest sigma to 1e-4.
    EpsilonMemo check;
    EXPECT_GT(check.Epsilon(*c.family(r.sigma * (1 - 1.5e-4))[0], c.kind, 1e-5, {}), c.epsilon)
        << ToString(c.kind);
  }
}

TEST(CalibrateTest, TighterAccountantsNeedLessNoise) {
  EXPECT_LT(Calibrate(Family({{{0.02, 1.0, 500}}}), 2.0, 1e-5, AccountantKind::kPld).sigma,
            Calibrate(Family({{{0.02, 1.0, 500}}}), 2.0, 1e-5, AccountantKind::kRdp).sigma);
}

TEST(CalibrateTest, TheLargestClientDecidesAndProfilesScale) {
  // Two clients: 100 rounds at q = 0.01 and 1000 rounds at q = 0.001. The calibrated sigma makes the
  // larger of the two meet the target exactly.
  const CalibrationResult r = Calibrate(Family({{{0.01, 1.0, 100}}, {{0.001, 1.0, 1000}}}), 0.5, 1e-5,
                                        AccountantKind::kPld);
  ASSERT_TRUE(r.found);
  const double a = EpsilonAt(AccountantKind::kPld, {{0.01, r.sigma, 100}}, 1e-5, SamplingModel::kPoisson);
  const double b = EpsilonAt(AccountantKind::kPld, {{0.001, r.sigma, 1000}}, 1e-5, SamplingModel::kPoisson);
  EXPECT_DOUBLE_EQ(r.epsilon, std::max(a, b));
  // A decreasing-noise profile {2 sigma for 50 rounds, sigma for 50} calibrates the scale of both.
  const CalibrationResult p = Calibrate(Family({{{0.01, 2.0, 50}, {0.01, 1.0, 50}}}), 0.5, 1e-5,
                                        AccountantKind::kPld);
  EXPECT_NEAR(EpsilonAt(AccountantKind::kPld, {{0.01, 2 * p.sigma, 50}, {0.01, p.sigma, 50}}, 1e-5,
                        SamplingModel::kPoisson),
              0.5, 1e-3);
}

// Clients whose plans differ only in N_c (an iid split: 26/6512 and 26/6513): the search composes only the
// dominating one (larger q), then checks every member at the answer. The answer certifies every member and
// is the smallest sigma within the tolerance for the dominating one.
TEST(CalibrateTest, DominatedClientsAreCheckedOnceAtTheAnswer) {
  const std::vector<Schedule> clients = {{{26.0 / 6513, 1.0, 1253}}, {{26.0 / 6512, 1.0, 1253}},
                                         {{26.0 / 7000, 1.0, 1253}}};
  const double target = 1.0, delta = 1.0 / 6513;
  EpsilonMemo memo;
  const CalibrationResult r = Calibrate(Family(clients), target, delta, AccountantKind::kPld, {}, &memo);
  ASSERT_TRUE(r.found);
  double worst = 0.0;
  for (const Schedule& s : clients) {
    const double eps = EpsilonAt(AccountantKind::kPld, {{s[0].q, r.sigma, s[0].count}}, delta, SamplingModel::kPoisson);
    EXPECT_LE(eps, target);
    worst = std::max(worst, eps);
  }
  EXPECT_EQ(r.epsilon, worst);
  const double below = r.sigma / (1 + 1.5 * CalibrationPolicy::kRelativeTolerance);
  EXPECT_GT(EpsilonAt(AccountantKind::kPld, {{26.0 / 6512, below, 1253}}, delta, SamplingModel::kPoisson), target);
  // The memo holds the probes of the dominating client plus the final check of the other two, and a budget
  // search at the answer composes nothing new for the whole plan.
  const size_t composed = memo.size();
  const auto prefix = [&](int64_t t) { return ScheduleEvent({{26.0 / 6512, r.sigma, t}}, SamplingModel::kPoisson); };
  EXPECT_EQ(RoundsWithinBudget(prefix, 1253, target, delta, AccountantKind::kPld, {}, &memo), 1253);
  EXPECT_EQ(memo.size(), composed);
}

TEST(EpsilonMemo, RemembersExactlyWhatTheAccountantSaid) {
  EpsilonMemo memo;
  const DpEventPtr event = ScheduleEvent({{0.01, 1.0, 100}}, SamplingModel::kPoisson);
  const double first = memo.Epsilon(*event, AccountantKind::kPld, 1e-5, {});
  EXPECT_EQ(first, EpsilonAt(AccountantKind::kPld, {{0.01, 1.0, 100}}, 1e-5, SamplingModel::kPoisson));
  EXPECT_EQ(memo.Epsilon(*event, AccountantKind::kPld, 1e-5, {}), first);
  EXPECT_EQ(memo.size(), 1u);
  // Another delta, accountant, precision or q is another entry.
  memo.Epsilon(*event, AccountantKind::kPld, 1e-6, {});
  memo.Epsilon(*event, AccountantKind::kRdp, 1e-5, {});
  AccountingPrecision coarse;
  coarse.pld.relative_discretization = 0.2;
  memo.Epsilon(*event, AccountantKind::kPld, 1e-5, coarse);
  memo.Epsilon(*ScheduleEvent({{0.0100001, 1.0, 100}}, SamplingModel::kPoisson), AccountantKind::kPld, 1e-5, {});
  EXPECT_EQ(memo.size(), 5u);
  EXPECT_THROW(memo.Epsilon(*ScheduleEvent({{0.01, 1.0, 100}}, SamplingModel::kPoisson, NoiseModel::kDiscreteGaussian),
                            AccountantKind::kPld, 1e-5, {}),
               ConfigError);
}

// The reduction an event owns: a replace-one Gaussian (sensitivity 2) calibrates to twice the sigma of the
// add/remove one, for any accountant (the check-in reduction, sim/checkin/checkin_privacy.cc).
TEST(CalibrateTest, SensitivityTwoNeedsTwiceTheNoise) {
  for (AccountantKind kind : {AccountantKind::kRdp, AccountantKind::kPld}) {
    const auto family = [](double sensitivity) {
      return [sensitivity](double sigma) {
        return std::vector<DpEventPtr>{SelfComposed(PoissonSampled(0.05, Gaussian(sigma, sensitivity)), 200)};
      };
    };
    const CalibrationResult one = Calibrate(family(1.0), 1.0, 1e-5, kind);
    const CalibrationResult two = Calibrate(family(2.0), 1.0, 1e-5, kind);
    EXPECT_NEAR(two.sigma / one.sigma, 2.0, 2.0 * 2e-4);
  }
}

TEST(CalibrateTest, ReportsNotFoundAndRejectsBadInputs) {
  // Even sigma = 1e4 cannot make 10^5 rounds at q = 0.5 cost 1e-5.
  EXPECT_FALSE(Calibrate(Family({{{0.5, 1.0, 100000}}}), 1e-5, 1e-5, AccountantKind::kRdp).found);
  EXPECT_THROW(Calibrate(Family({{{0.01, 1.0, 100}}}), -1.0, 1e-5, AccountantKind::kRdp), ConfigError);
  EXPECT_THROW(Calibrate(Family({{{0.01, 1.0, 100}}}), 1.0, 2.0, AccountantKind::kRdp), ConfigError);
  // Secure noise is accounted by RDP only: the event says so.
  EXPECT_THROW(Calibrate(Family({{{0.01, 1.0, 100}}}, SamplingModel::kPoisson, NoiseModel::kDiscreteGaussian), 1.0,
                         1e-5, AccountantKind::kPld),
               ConfigError);
}

TEST(RoundsWithinBudgetTest, HaltsExactlyBeforeTheBudgetIsExceeded) {
  const auto prefix_of = [](const Schedule& plan) {
    return [plan](int64_t t) { return ScheduleEvent(SchedulePrefix(plan, t), SamplingModel::kPoisson); };
  };
  for (AccountantKind kind : {AccountantKind::kRdp, AccountantKind::kPld}) {
    const Schedule plan = {{0.02, 2.0, 300}, {0.04, 2.0, 5000}};  // in order: 300 rounds, then larger batches
    const int64_t rounds = RoundsWithinBudget(prefix_of(plan), 5300, 1.0, 1e-5, kind);
    ASSERT_GT(rounds, 300);
    ASSERT_LT(rounds, 5300);
    EXPECT_LE(EpsilonAt(kind, SchedulePrefix(plan, rounds), 1e-5, SamplingModel::kPoisson), 1.0);
    EXPECT_GT(EpsilonAt(kind, SchedulePrefix(plan, rounds + 1), 1e-5, SamplingModel::kPoisson), 1.0);
  }
  EXPECT_EQ(RoundsWithinBudget(prefix_of({{0.01, 5.0, 10}}), 10, 1.0, 1e-5, AccountantKind::kPld), 10);
  EXPECT_EQ(RoundsWithinBudget(prefix_of({{0.5, 0.5, 10}}), 10, 1e-3, 1e-5, AccountantKind::kPld), 0);
  const Schedule long_plan = {{0.02, 2.0, 100000}};
  EXPECT_GT(RoundsWithinBudget(prefix_of(long_plan), 100000, 1.0, 1e-5, AccountantKind::kPld),
            RoundsWithinBudget(prefix_of(long_plan), 100000, 1.0, 1e-5, AccountantKind::kRdp));
}

TEST(SchedulePrefixTest, TakesLeadingRoundsInOrder) {
  const Schedule plan = {{0.1, 1.0, 3}, {0.2, 1.0, 2}, {0.1, 1.0, 4}};
  EXPECT_EQ(SchedulePrefix(plan, 4), (Schedule{{0.1, 1.0, 3}, {0.2, 1.0, 1}}));
  EXPECT_EQ(SchedulePrefix(plan, 0), Schedule{});
  EXPECT_EQ(SchedulePrefix(plan, 100), plan);
}

// AccountAll gives every accountant's number, equal to the accountant composed directly, and the reason
// where one does not apply.
TEST(AccountAllTest, EqualsTheAccountantsAndSaysWhyOneDoesNotApply) {
  const Schedule s = {{0.01, 1.2, 300}, {0.02, 1.5, 100}};
  AccountQuery query;
  query.delta = 1e-5;
  query.at_epsilon = 1.0;
  const std::vector<Accounted> all = AccountAll(*ScheduleEvent(s, SamplingModel::kPoisson), kMechanismAccountants, query);
  ASSERT_EQ(all.size(), 3u);
  for (const Accounted& a : all) {
    ASSERT_TRUE(a.available) << a.reason;
    EXPECT_DOUBLE_EQ(a.result.epsilon, EpsilonAt(a.kind, s, 1e-5, SamplingModel::kPoisson));
    EXPECT_DOUBLE_EQ(a.delta_at_epsilon, a.composed->Delta(1.0));
    EXPECT_EQ(a.assumptions.accountant, a.kind);
  }
  EXPECT_EQ(all[2].bound, BoundKind::kApproximation);  // GDP
  const AccountantKind pld[] = {AccountantKind::kPld};
  const std::vector<Accounted> secure =
      AccountAll(*ScheduleEvent(s, SamplingModel::kPoisson, NoiseModel::kDiscreteGaussian), pld, query);
  EXPECT_FALSE(secure[0].available);
  EXPECT_FALSE(secure[0].reason.empty());
  EXPECT_EQ(ApplicableLimitation(*ScheduleEvent(s, SamplingModel::kPoisson, NoiseModel::kDiscreteGaussian),
                                 AccountantKind::kRdp),
            "");
}

}  // namespace
}  // namespace asyncdp::accounting
