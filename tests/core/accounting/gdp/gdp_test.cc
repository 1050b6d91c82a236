#include "core/accounting/gdp/gdp.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"

namespace asyncdp::accounting {
namespace {

TEST(GdpTest, UniformFormulaReproducesThePapersEpsFdpColumn) {
  // spec §8.7 / reference README: q = s/N, T = K/s at the unrounded s_max, delta = 1/N.
  struct Case {
    double n, k, s, sigma, eps;
  };
  for (const Case& c :
       {Case{10000, 5, 26.0668, 19.29962, 0.010527}, Case{60000, 6, 288.0992, 12.10881, 0.038866},
        Case{50000, 7, 406.7563, 6.572, 0.113289}}) {
    const double mu = GdpMuUniform(c.s / c.n, c.sigma, c.k * c.n / c.s);
    EXPECT_NEAR(GdpEpsilon(mu, 1.0 / c.n), c.eps, 2e-6) << c.n;
  }
}

TEST(GdpTest, PoissonMuIsTheBuEtAlFormula) {
  EXPECT_DOUBLE_EQ(GdpMuPoisson(0.01, 1.0, 10000), 0.01 * std::sqrt(10000 * (std::exp(1.0) - 1)));
  // For large sigma both CLT formulas approach q sqrt(T) / sigma (their ratio is 1 + O(1/sigma)).
  const double gap_50 = std::abs(GdpMuPoisson(0.01, 50.0, 100) / GdpMuUniform(0.01, 50.0, 100) - 1);
  const double gap_2000 = std::abs(GdpMuPoisson(0.01, 2000.0, 100) / GdpMuUniform(0.01, 2000.0, 100) - 1);
  EXPECT_LT(gap_2000, gap_50 / 10);
  EXPECT_NEAR(GdpMuPoisson(0.01, 2000.0, 100) * 2000.0, 0.1, 1e-4);
}

TEST(GdpTest, DeltaOfMuIsEquation64AndEpsilonInvertsIt) {
  const double mu = 0.7;
  const double eps = 1.3;
  const double expected = 0.5 * std::erfc((eps / mu - mu / 2) / std::sqrt(2.0)) -
                          std::exp(eps) * 0.5 * std::erfc((eps / mu + mu / 2) / std::sqrt(2.0));
  EXPECT_NEAR(GdpDelta(mu, eps), expected, 1e-15);
  EXPECT_NEAR(GdpDelta(mu, GdpEpsilon(mu, 1e-6)), 1e-6, 1e-15);
  EXPECT_EQ(GdpEpsilon(0.0, 1e-6), 0.0);
}

TEST(GdpTest, HeterogeneousMuComposesInQuadrature) {
  const double a = GdpMuPoisson(0.01, 1.0, 100);
  const double b = GdpMuPoisson(0.02, 2.0, 50);
  EXPECT_NEAR(GdpMu({{0.01, 1.0, 100}, {0.02, 2.0, 50}}, SamplingModel::kPoisson), std::hypot(a, b), 1e-15);
  // Fixed-size (replace-one) is dominated by the Poisson pairs with sensitivity 2C: the Poisson formula
  // at sigma / 2.
  EXPECT_DOUBLE_EQ(GdpMu({{0.01, 1.0, 100}}, SamplingModel::kFixedSizeWithoutReplacement),
                   GdpMuPoisson(0.01, 0.5, 100));
  EXPECT_THROW(GdpMu({{0.01, 1.0, 100}}, SamplingModel::kShuffle), ConfigError);
}

}  // namespace
}  // namespace asyncdp::accounting
