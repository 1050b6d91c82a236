#include "core/accounting/proactive/proactive_calculator.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"

namespace asyncdp::accounting {
namespace {

struct TableCase {
  double n, k_epochs, delta, sigma;
  double eps, gamma, t_min, s_max_real;
  int64_t s_max;
  double t_min_asym;
  int64_t s_max_asym;
  double fdp, fdp_asym_paper;
  double exact_gamma;
};

// Tables 9-11 (spec §9 and reference/README.md).
const TableCase kTables[] = {
    {10000, 5, 1e-4, 19.29962, 0.0497217, 3.814945, 1918.147, 26.0668, 26, 251.3991, 198, 0.010527, 0.053302,
     3.125243},
    {60000, 6, 1.0 / 60000, 12.10881, 0.1521484, 5.281112, 1249.570, 288.0992, 288, 118.3056, 3042, 0.038866,
     0.209662, 3.667876},
    {50000, 7, 2e-5, 6.572, 0.5253444, 9.225327, 860.466, 406.7563, 406, 46.6361, 7504, 0.113289, 0.823939,
     4.624620},
};

TEST(ProactiveCalculatorTest, PaperModeReproducesTables9To11) {
  for (const TableCase& t : kTables) {
    CalculatorInputs in;
    in.n_records = t.n;
    in.iterations = t.k_epochs * t.n;
    in.delta = t.delta;
    in.sigma = t.sigma;
    const CalculatorResult r = RunSimplifiedCalculator(in);
    SCOPED_TRACE(t.n);
    EXPECT_NEAR(r.epsilon, t.eps, 1e-5 * t.eps);
    EXPECT_NEAR(r.gamma, t.gamma, 1e-5 * t.gamma);
    EXPECT_NEAR(r.t_min, t.t_min, 1e-5 * t.t_min);
    EXPECT_NEAR(r.s_max_real, t.s_max_real, 1e-5 * t.s_max_real);
    EXPECT_EQ(r.s_max, t.s_max);
    EXPECT_NEAR(r.t_min_asym, t.t_min_asym, 1e-5 * t.t_min_asym);
    EXPECT_EQ(r.s_max_asym, t.s_max_asym);
    EXPECT_NEAR(r.eps_fdp_s_max, t.fdp, 2e-6);
    EXPECT_NEAR(r.eps_fdp_s_max_asym_paper, t.fdp_asym_paper, 2e-6);
    EXPECT_LT(r.eps_fdp_s_max_asym, r.eps_fdp_s_max_asym_paper);
    EXPECT_TRUE(r.check.Find("(7)")->holds);
    EXPECT_TRUE(r.check.Find("(8)")->holds);  // at s = floor(s_max)
  }
}

TEST(ProactiveCalculatorTest, ExactModeGivesTheSmallerGamma) {
  for (const TableCase& t : kTables) {
    CalculatorInputs in{t.n, t.k_epochs * t.n, t.delta, t.sigma};
    in.mode = GammaMode::kExact;
    const CalculatorResult r = RunSimplifiedCalculator(in);
    EXPECT_NEAR(r.gamma, t.exact_gamma, 1e-5 * t.exact_gamma);
    EXPECT_GT(r.s_max, t.s_max);
  }
}

TEST(ProactiveCalculatorTest, EpsilonInputDerivesSigmaFromSix) {
  CalculatorInputs in;
  in.n_records = 10000;
  in.iterations = 50000;
  in.delta = 1e-4;
  in.epsilon = 0.04945;
  const CalculatorResult r = RunSimplifiedCalculator(in);
  EXPECT_NEAR(r.sigma, 19.352293, 1e-5 * 19.352293);
  in.sigma = 19.0;
  EXPECT_THROW(RunSimplifiedCalculator(in), ConfigError);  // both given
}

TEST(ProactiveCalculatorTest, MultiPhaseSinglePhaseMatchesTheSpecRuns) {
  // Spec §8.5: largest admissible s per row with the paper-literal rule (Tables 6, 7, 8, delta = 1/N).
  struct Row {
    double n, k, eps_target;
    int64_t s;
  };
  const Row rows[] = {{10000, 50000, 0.04945, 29},   {10000, 50000, 0.1, 51},    {10000, 50000, 2.0, 396},
                      {60000, 360000, 0.15007, 369}, {60000, 360000, 1.0, 1402}, {50000, 350000, 0.5, 685},
                      {50000, 350000, 3.0, 2087}};
  for (const Row& row : rows) {
    MultiPhaseInputs in;
    in.n_records = row.n;
    in.delta = 1.0 / row.n;
    in.epsilon_target = row.eps_target;
    in.phases = {{row.k}};
    const MultiPhaseResult r = RunMultiPhaseCalculator(in);
    ASSERT_TRUE(r.can_participate);
    EXPECT_EQ(r.phases[0].sample_size, row.s) << row.n << " " << row.eps_target;
    EXPECT_LE(r.phases[0].epsilon, row.eps_target);
    EXPECT_FALSE(r.phases[0].stop_reason.empty());
  }
}

TEST(ProactiveCalculatorTest, MultiPhaseRecomputesThetaAcrossPhases) {
  // 20 epochs at the derived sigma_0, then 2 more epochs at sigma_1 = 4 (E.1's gamma is large, so a
  // second phase fits only with a generous target).
  MultiPhaseInputs in;
  in.n_records = 10000;
  in.delta = 1e-4;
  in.epsilon_target = 5.0;
  in.phases = {{200000}, {20000, 4.0}};
  const MultiPhaseResult r = RunMultiPhaseCalculator(in);
  ASSERT_TRUE(r.can_participate);
  ASSERT_EQ(r.phases.size(), 2u);
  const PhaseResult& second = r.phases[1];
  EXPECT_EQ(second.sigma, 4.0);
  // theta = max(s_0, s_1) / s_bar over both phases, s_bar = K / T.
  const double s0 = static_cast<double>(r.phases[0].sample_size);
  const double s1 = static_cast<double>(second.sample_size);
  const double s_bar = 220000.0 / (200000.0 / s0 + 20000.0 / s1);
  EXPECT_NEAR(second.mean_sample_size, s_bar, 1e-9 * s_bar);
  EXPECT_NEAR(second.theta, std::max(s0, s1) / s_bar, 1e-12);
  EXPECT_GT(second.theta, 1.0);
  EXPECT_LE(second.epsilon, 5.0);
  EXPECT_EQ(second.stop_reason, "eps > eps_target");
}

TEST(ProactiveCalculatorTest, ReportsCannotParticipate) {
  MultiPhaseInputs in;
  in.n_records = 10000;
  in.delta = 1e-4;
  in.epsilon_target = 1e-4;  // below even s = 1's eps
  in.phases = {{50000}, {10000, 3.0}};
  const MultiPhaseResult r = RunMultiPhaseCalculator(in);
  EXPECT_FALSE(r.can_participate);
  ASSERT_EQ(r.phases.size(), 1u);  // later phases are not planned
  EXPECT_FALSE(r.phases[0].admissible);
  EXPECT_EQ(r.phases[0].stop_reason, "eps > eps_target");
}

TEST(ProactiveCalculatorTest, RejectsPhasesWithoutSigma) {
  MultiPhaseInputs in{10000, 1e-4, 1.0, {{50000}, {50000}}};
  EXPECT_THROW(RunMultiPhaseCalculator(in), ConfigError);
}

}  // namespace
}  // namespace asyncdp::accounting
