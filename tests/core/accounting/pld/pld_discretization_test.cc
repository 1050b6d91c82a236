#include "core/accounting/pld/pld_discretization.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/accounting/gaussian_mechanism.h"

namespace asyncdp::accounting {
namespace {

double Total(const DiscretePld& d) {
  double sum = d.infinity_mass;
  for (double p : d.pmf) sum += p;
  return sum;
}

// Q-mass implied by the P-masses and their losses: sum p_i e^{-loss_i}.
double ImpliedQ(const DiscretePld& d, double delta_loss) {
  double sum = 0.0;
  for (size_t i = 0; i < d.pmf.size(); ++i)
    sum += d.pmf[i] * std::exp(-(d.offset + static_cast<double>(i)) * delta_loss);
  return sum;
}

// delta(eps) of a single discrete PLD.
double DeltaOf(const DiscretePld& d, double delta_loss, double eps) {
  double delta = d.infinity_mass;
  for (size_t i = 0; i < d.pmf.size(); ++i) {
    const double loss = (d.offset + static_cast<double>(i)) * delta_loss;
    if (loss > eps) delta += d.pmf[i] * -std::expm1(eps - loss);
  }
  return delta;
}

TEST(PldDiscretizationTest, ConnectTheDotsPreservesPAndQMass) {
  const PrivacyLossPair pair(PairKind::kPoissonRemove, 0.02, 0.9);
  const double spacing = 1e-3;
  const DiscretePld d = DiscretizeConnectTheDots(pair, spacing, 1e-18);
  EXPECT_NEAR(Total(d), 1.0, 1e-12);
  EXPECT_NEAR(ImpliedQ(d, spacing), 1.0, 1e-9);  // Q lost only beyond the top of the grid
}

TEST(PldDiscretizationTest, PoolsHaveExactGridRatios) {
  // A pool at grid loss g has likelihood ratio e^g up to 1e-6 Delta, so its implied Q-mass P e^{-g} equals
  // its true Q-mass; only the low-loss remainder (the lowest pool) is rounded down by < Delta, which can
  // only raise the implied total. The true Q-masses sum to at most 1.
  const double spacing = 2e-3;
  for (PairKind kind : {PairKind::kPoissonRemove, PairKind::kPoissonAdd}) {
    const DiscretePld d = DiscretizeByPooling(PrivacyLossPair(kind, 0.05, 1.1), spacing, 1e-18);
    EXPECT_NEAR(Total(d), 1.0, 1e-12);
    EXPECT_GE(ImpliedQ(d, spacing), 1.0 - 1e-12);
    EXPECT_LE(ImpliedQ(d, spacing),
              1.0 + d.pmf.front() * std::expm1(spacing) * std::exp(-d.offset * spacing) + 1e-12);
  }
}

TEST(PldDiscretizationTest, SingleGaussianRoundIsBracketedAtEveryEpsilon) {
  // q = 1, remove direction: the Gaussian mechanism with noise multiplier 2, exact delta(eps) known.
  const PrivacyLossPair pair(PairKind::kPoissonRemove, 1.0, 2.0);
  const double spacing = 5e-3;
  const DiscretePld upper = DiscretizeConnectTheDots(pair, spacing, 1e-18);
  const DiscretePld lower = DiscretizeByPooling(pair, spacing, 1e-18);
  for (double eps : {0.0, 0.1, 0.37, 1.0, 2.2}) {
    const double exact = GaussianDelta(eps, 2.0);
    EXPECT_GE(DeltaOf(upper, spacing, eps), exact * (1 - 1e-12)) << eps;
    EXPECT_LE(DeltaOf(lower, spacing, eps), exact * (1 + 1e-12)) << eps;
    // Second-order error: (Delta d ln(delta)/d eps)^2 ~ 2e-4 relative at eps = 2.2 for this coarse grid.
    EXPECT_NEAR(DeltaOf(upper, spacing, eps), exact, 1e-3 * exact + 1e-15);
    EXPECT_NEAR(DeltaOf(lower, spacing, eps), exact, 1e-3 * exact + 1e-15);
  }
}

}  // namespace
}  // namespace asyncdp::accounting
