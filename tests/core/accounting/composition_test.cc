#include "core/accounting/composition.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"

namespace asyncdp::accounting {
namespace {

TEST(CompositionTest, BasicVersusAdvancedTableFromTheBackgroundSpec) {
  // advanced composition, Dwork, Rothblum and Vadhan 2010; docs/theory.md §7: eps_round 0.1, delta_round 1e-5, delta'' 1e-6.
  struct Row {
    int64_t k;
    double advanced_eps;
  };
  for (const Row& row : {Row{1, 0.5362}, Row{10, 1.7674}, Row{50, 4.2428}, Row{100, 6.3082},
                         Row{500, 17.0125}, Row{1000, 27.1397}}) {
    const EpsDelta basic = BasicComposition(0.1, 1e-5, row.k);
    EXPECT_NEAR(basic.epsilon, 0.1 * row.k, 1e-12);
    EXPECT_NEAR(basic.delta, 1e-5 * row.k, 1e-12 * basic.delta);
    const EpsDelta advanced = AdvancedComposition(0.1, 1e-5, row.k, 1e-6);
    EXPECT_NEAR(advanced.epsilon, row.advanced_eps, 5e-5) << row.k;
    EXPECT_NEAR(advanced.delta, 1e-5 * row.k + 1e-6, 1e-12 * advanced.delta);
  }
  // "Advanced beats basic from k = 35 on at these parameters".
  EXPECT_GT(AdvancedComposition(0.1, 1e-5, 34, 1e-6).epsilon, 3.4);
  EXPECT_LT(AdvancedComposition(0.1, 1e-5, 35, 1e-6).epsilon, 3.5);
}

TEST(CompositionTest, VariantsAndKlBoundMatchSection9) {
  EXPECT_NEAR(KlBound(0.1), 0.0105171, 1e-7);
  EXPECT_NEAR(KlBound(0.5), 0.3243606, 1e-7);
  EXPECT_DOUBLE_EQ(KlBound(1.0), 1.0);
  EXPECT_NEAR(AdvancedComposition(0.1, 0, 100, 1e-6, AdvancedVariant::kIndependent).epsilon, 6.308231, 1e-6);
  EXPECT_NEAR(AdvancedComposition(0.1, 0, 100, 1e-6, AdvancedVariant::kAdaptive).epsilon, 6.861064, 1e-6);
  EXPECT_NEAR(AdvancedComposition(0.1, 0, 100, 1e-6, AdvancedVariant::kLectureNotes).epsilon, 5.756522, 1e-6);
  EXPECT_NEAR(SubsampledEpsDelta(1.0, 1e-5, 0.01).epsilon, 0.0170369, 1e-7);
  EXPECT_DOUBLE_EQ(SubsampledEpsDelta(1.0, 1e-5, 0.01).delta, 1e-7);
}

TEST(CompositionTest, OptimalCompositionIsTightestAndMatchesKovAtLatticePoints) {
  const double eps0 = 0.1;
  const int64_t k = 100;
  const double delta = 1e-5 * k + 1e-6;
  const double optimal = OptimalCompositionEpsilon(eps0, 1e-5, k, delta);
  EXPECT_LT(optimal, AdvancedComposition(eps0, 1e-5, k, 1e-6).epsilon);
  EXPECT_LT(optimal, BasicComposition(eps0, 1e-5, k).epsilon);
  // KOV Theorem 3.3 at eps = (k - 2i) eps0 for pure DP, i = 1: delta = (e^{k eps0} - e^{(k-2) eps0}) /
  // (1+e^eps0)^k.
  const double lattice = (std::exp(k * eps0) - std::exp((k - 2) * eps0)) / std::pow(1 + std::exp(eps0), k);
  EXPECT_NEAR(OptimalCompositionDelta(eps0, 0.0, k, (k - 2) * eps0), lattice, 1e-12 * lattice);
  // One mechanism: exactly (eps0, delta0).
  EXPECT_NEAR(OptimalCompositionEpsilon(0.7, 1e-6, 1, 1e-6), 0.7, 1e-9);
}

TEST(CompositionTest, UniformAllocationSpendsTheBudgetExactly) {
  const int64_t rounds = 200;
  const EpsDelta basic = AllocateUniformly(2.0, 1e-5, rounds, CompositionRule::kBasic, 0.0);
  EXPECT_DOUBLE_EQ(basic.epsilon, 0.01);
  const EpsDelta advanced = AllocateUniformly(2.0, 1e-5, rounds, CompositionRule::kAdvanced, 1e-6);
  EXPECT_NEAR(AdvancedComposition(advanced.epsilon, advanced.delta, rounds, 1e-6).epsilon, 2.0, 1e-9);
  EXPECT_NEAR(advanced.delta, 9e-6 / rounds, 1e-20);
  const EpsDelta optimal = AllocateUniformly(2.0, 1e-5, rounds, CompositionRule::kOptimal, 1e-6);
  EXPECT_GE(optimal.epsilon, advanced.epsilon);  // the optimal rule allows the largest per-round budget
  EXPECT_LE(OptimalCompositionEpsilon(optimal.epsilon, optimal.delta, rounds, 1e-5), 2.0);
  EXPECT_THROW(AllocateUniformly(2.0, 1e-5, rounds, CompositionRule::kAdvanced, 1e-4), ConfigError);
}

}  // namespace
}  // namespace asyncdp::accounting
