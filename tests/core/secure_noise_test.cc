// Secure noise: the exact samplers against their laws, and the lattice's accounting constants.
#include "core/secure_noise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

namespace asyncdp {
namespace {

TEST(SecureNoiseTest, BernoulliExpHasProbabilityExpMinusRatio) {
  OsEntropy entropy;
  for (auto [n, d] : std::vector<std::pair<int, int>>{{1, 2}, {1, 1}, {5, 2}, {0, 3}}) {
    const double p = std::exp(-static_cast<double>(n) / d);
    const int trials = 40000;
    int hits = 0;
    for (int i = 0; i < trials; ++i) hits += SampleBernoulliExp(n, d, entropy) ? 1 : 0;
    const double sd = std::sqrt(p * (1 - p) / trials);
    EXPECT_NEAR(static_cast<double>(hits) / trials, p, 5 * sd + 1e-12) << n << "/" << d;
  }
}

TEST(SecureNoiseTest, DiscreteGaussianMatchesItsProbabilityMassFunction) {
  // variance 4: chi-square over x in [-7, 7] (+ the two tails) with 200,000 draws.
  OsEntropy entropy;
  const int64_t variance = 4;
  const int draws = 200000;
  std::map<int64_t, int> counts;
  for (int i = 0; i < draws; ++i) ++counts[std::clamp<int64_t>(SampleDiscreteGaussian(variance, entropy), -8, 8)];
  double z = 0.0;
  for (int x = -60; x <= 60; ++x) z += std::exp(-0.5 * x * x / variance);
  double chi2 = 0.0;
  for (int64_t x = -8; x <= 8; ++x) {
    double p = 0.0;
    if (std::abs(x) < 8) {
      p = std::exp(-0.5 * static_cast<double>(x * x) / variance) / z;
    } else {
      for (int y = 8; y <= 60; ++y) p += std::exp(-0.5 * y * y / variance) / z;
    }
    const double expected = p * draws;
    chi2 += (counts[x] - expected) * (counts[x] - expected) / expected;
  }
  EXPECT_LT(chi2, 45.0);  // 16 degrees of freedom: P(chi2 > 45) ~ 1e-4
}

TEST(SecureNoiseTest, LargeVarianceHasTheRightScale) {
  OsEntropy entropy;
  const int64_t variance = int64_t{1} << 40;
  double sum = 0, squares = 0;
  const int draws = 4000;
  for (int i = 0; i < draws; ++i) {
    const double y = static_cast<double>(SampleDiscreteGaussian(variance, entropy));
    sum += y;
    squares += y * y;
  }
  const double sd = std::sqrt(static_cast<double>(variance));
  EXPECT_NEAR(sum / draws, 0.0, 5 * sd / std::sqrt(draws));
  EXPECT_NEAR(squares / draws / static_cast<double>(variance), 1.0, 0.1);
}

TEST(SecureNoiseTest, LatticeKeepsTheEffectiveMultiplierWithinATenthOfAPercent) {
  for (int64_t d : {1, 124, 61706}) {
    for (double sigma : {0.5, 1.0, 19.29962, 200.0}) {
      const SecureNoiseLattice l = ChooseSecureNoiseLattice(sigma, 0.1, d);
      EXPECT_EQ(l.granularity, std::exp2(std::round(std::log2(l.granularity))));  // a power of two
      EXPECT_LE(l.effective_sigma, sigma);
      // Unless s would exceed 2^26 lattice units: then gamma was doubled, and only for that reason.
      const bool coarsened = l.granularity * std::sqrt(static_cast<double>(d)) > 0.1 / 1024;
      if (coarsened) {
        EXPECT_GT(sigma * 0.1 / (l.granularity / 2), std::ldexp(1.0, 26));
      }
      EXPECT_LE(l.granularity * std::sqrt(static_cast<double>(d)), (coarsened ? 4 : 1) * 0.1 / 1024);
      EXPECT_GE(l.effective_sigma, sigma * (1 - (coarsened ? 4 : 1) * 1.1e-3)) << d << " " << sigma;
    }
  }
  // Beyond 2^26 lattice units the lattice coarsens instead of overflowing.
  const SecureNoiseLattice huge = ChooseSecureNoiseLattice(1e6, 0.1, 124);
  EXPECT_LE(static_cast<double>(huge.variance), std::ldexp(1.0, 52));
  EXPECT_LE(huge.effective_sigma, 1e6);
}

TEST(SecureNoiseTest, OutputsLieOnTheLatticeAndAreNotReproducible) {
  OsEntropy entropy;
  const SecureNoiseLattice l = ChooseSecureNoiseLattice(1.0, 0.1, 16);
  std::vector<float> a(16, 0.3f), b(16, 0.3f);
  AddSecureRoundNoise(l, entropy, a);
  AddSecureRoundNoise(l, entropy, b);
  for (float v : a) {
    const double k = static_cast<double>(v) / l.granularity;
    EXPECT_NEAR(k, std::round(k), 1e-3 * std::abs(k) + 1e-9);  // float output of a lattice point
  }
  EXPECT_NE(a, b);
  EXPECT_NE(OsRandomSeed(), OsRandomSeed());
}

}  // namespace
}  // namespace asyncdp
