#include "core/accounting/shuffle/clones.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <utility>

#include "core/accounting/gaussian_mechanism.h"

namespace asyncdp::accounting {
namespace {

// The [FMT21] Thm. 3.2 pair built by brute force: the joint law of the two counts (first, second) over
// every (clones c, first-value clones a, own contribution b), with binomial weights from the definition.
double BruteForcePairDelta(int n, double eps0, double eps) {
  const double p = std::exp(-eps0);
  const double w = std::exp(eps0) / (std::exp(eps0) + 1.0);
  std::map<std::pair<int, int>, double> pmf_p;
  std::map<std::pair<int, int>, double> pmf_q;
  for (int c = 0; c <= n - 1; ++c) {
    const double weight_c = std::tgamma(n) / (std::tgamma(c + 1) * std::tgamma(n - c)) * std::pow(p, c) *
                            std::pow(1.0 - p, n - 1 - c);
    for (int a = 0; a <= c; ++a) {
      const double weight_a = std::tgamma(c + 1) / (std::tgamma(a + 1) * std::tgamma(c - a + 1)) * std::pow(0.5, c);
      for (int b = 0; b <= 1; ++b) {
        const std::pair<int, int> counts{a + b, c - a + 1 - b};
        pmf_p[counts] += weight_c * weight_a * (b == 1 ? w : 1.0 - w);
        pmf_q[counts] += weight_c * weight_a * (b == 1 ? 1.0 - w : w);
      }
    }
  }
  double delta = 0.0;
  for (const auto& [counts, mass] : pmf_p) delta += std::max(0.0, mass - std::exp(eps) * pmf_q[counts]);
  return delta;
}

TEST(ShuffleClonesTest, NumericalDeltaEqualsTheBruteForcePair) {
  for (int n : {1, 2, 7, 25}) {
    for (double eps0 : {0.5, 2.0}) {
      for (double eps : {0.0, 0.1, 0.4}) {
        EXPECT_NEAR(ShuffleNumericalDelta(n, eps0, eps), BruteForcePairDelta(n, eps0, eps), 1e-12)
            << n << " " << eps0 << " " << eps;
      }
    }
  }
}

TEST(ShuffleClonesTest, OneRecordIsRandomizedResponse) {
  // n = 1: no clones; the pair is eps0-randomized response, so delta(eps) = w - e^eps (1 - w).
  const double w = std::exp(1.0) / (std::exp(1.0) + 1.0);
  EXPECT_NEAR(ShuffleNumericalDelta(1, 1.0, 0.3), w - std::exp(0.3) * (1.0 - w), 1e-14);
  EXPECT_EQ(ShuffleNumericalDelta(1, 1.0, 1.0), 0.0);
}

TEST(ShuffleClonesTest, NumericalBoundIsBelowTheClosedFormAndAmplifies) {
  for (int64_t n : {10000, 20000}) {
    for (double eps0 : {0.5, 1.0, 2.0}) {
      const double closed = ShuffleClosedFormEpsilon(n, eps0, 1e-6);
      const double numerical = ShuffleNumericalEpsilon(n, eps0, 1e-6);
      ASSERT_TRUE(std::isfinite(closed));
      EXPECT_LE(numerical, closed) << n << " " << eps0;
      EXPECT_LT(numerical, eps0 / 4.0) << n << " " << eps0;
      EXPECT_LE(ShuffleNumericalDelta(n, eps0, numerical), 1e-6);
    }
  }
  // More records, more amplification.
  EXPECT_LT(ShuffleNumericalEpsilon(20000, 1.0, 1e-6), ShuffleNumericalEpsilon(10000, 1.0, 1e-6));
}

TEST(ShuffleClonesTest, ClosedFormMatchesItsFormulaAndRange) {
  // eps0 = 1, n = 10^4, delta = 1e-6 by hand: a = 8 sqrt(e ln(4e6) / 1e4), c = 8 e / 1e4.
  const double a = 8.0 * std::sqrt(std::exp(1.0) * std::log(4e6) / 1e4);
  const double c = 8.0 * std::exp(1.0) / 1e4;
  const double expected = std::log(1.0 + (1.0 - std::exp(-1.0)) / (1.0 + std::exp(-1.0) / (1.0 + a + c)) * (a + c));
  EXPECT_NEAR(ShuffleClosedFormEpsilon(10000, 1.0, 1e-6), expected, 1e-14);
  // Outside eps0 <= ln(n / (16 ln(2/delta))) the theorem says nothing.
  EXPECT_TRUE(std::isinf(ShuffleClosedFormEpsilon(1000, 3.0, 1e-6)));
}

TEST(ShuffleClonesTest, GaussianPassNeverReportsMoreThanNoAmplification) {
  for (double sigma : {1.0, 8.0}) {
    const ShuffleGaussianEpsilon r = ShuffledGaussianEpsilon(20000, sigma, 2.0, 1e-6);
    EXPECT_NEAR(r.no_amplification, GaussianEpsilon(1e-6, sigma / 2.0), 1e-12);
    EXPECT_LE(r.numerical, r.no_amplification);
    if (r.numerical < r.no_amplification) {
      // The delta split was verified: shuffle part + (e^eps + 1)(1 + e^eps0 / 2) n delta0 <= delta.
      EXPECT_LE((std::exp(r.numerical) + 1.0) * (1.0 + std::exp(r.local_epsilon) / 2.0) * 2e4 * r.local_delta,
                1e-6);
      EXPECT_NEAR(GaussianEpsilon(r.local_delta, sigma / 2.0), r.local_epsilon, 1e-12);
    }
  }
  // sigma = 8 at n = 2 10^4: shuffling must amplify.
  EXPECT_LT(ShuffledGaussianEpsilon(20000, 8.0, 2.0, 1e-6).numerical,
            0.5 * GaussianEpsilon(1e-6, 4.0));
}

TEST(ShuffledGaussianTest, TinySigmaFallsBackToNoAmplificationInsteadOfFailing) {
  // sigma = 0.1 at sensitivity 2: eps is so large that the delta0 split underflows to 0.
  const ShuffleGaussianEpsilon r = ShuffledGaussianEpsilon(1000, 0.1, 2.0, 5e-5);
  EXPECT_TRUE(std::isfinite(r.no_amplification));
  EXPECT_LE(r.numerical, r.no_amplification);
}

}  // namespace
}  // namespace asyncdp::accounting
