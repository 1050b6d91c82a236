#include "core/accounting/pld/pld.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/accounting/gaussian_mechanism.h"
#include "core/accounting/rdp/rdp.h"
#include "core/error.h"
#include "tests/core/accounting/reference_csv.h"

namespace asyncdp::accounting {
namespace {

using testing::ReadReferenceRows;

TEST(PldTest, MatchesReferenceUpperBoundAndBracketsTheTruth) {
  for (const auto& row : ReadReferenceRows()) {
    const PldEpsilonResult r =
        PldEpsilon({{row.q, row.sigma, row.steps}}, SamplingModel::kPoisson, row.delta);
    SCOPED_TRACE(::testing::Message() << "q=" << row.q << " sigma=" << row.sigma << " steps=" << row.steps);
    EXPECT_NEAR(r.epsilon_upper, row.eps_pld_upper, 0.01 * row.eps_pld_upper);
    EXPECT_GE(r.epsilon_upper, row.eps_prv_lower);
    // Our own bracket: ordered, tight (both discretisations are second-order), and the lower bound never
    // exceeds the reference upper bound.
    EXPECT_LE(r.epsilon_lower, r.epsilon_upper);
    EXPECT_LE(r.epsilon_upper - r.epsilon_lower, 2e-3 * r.epsilon_upper + 1e-6);
    EXPECT_LE(r.epsilon_lower, row.eps_pld_upper * (1 + 1e-9));
    const double rdp =
        RdpEpsilon({{row.q, row.sigma, row.steps}}, SamplingModel::kPoisson, row.delta).epsilon;
    EXPECT_LE(r.epsilon_upper, rdp) << "PLD must be at least as tight as RDP";
  }
}

TEST(PldTest, UnsampledGaussianBracketsTheAnalyticGaussian) {
  // q = 1: T Gaussian releases with noise multiplier sigma compose exactly to one with sigma / sqrt(T).
  const double sigma = 3.0;
  const int64_t steps = 50;
  const double delta = 1e-6;
  const double exact = GaussianEpsilon(delta, sigma / std::sqrt(static_cast<double>(steps)));
  for (SamplingModel sampling : {SamplingModel::kPoisson, SamplingModel::kFixedSizeWithoutReplacement}) {
    // Replace-one moves the sum by 2C, i.e. the same as sigma / 2 under add/remove.
    const double expected = sampling == SamplingModel::kPoisson
                                ? exact
                                : GaussianEpsilon(delta, sigma / 2.0 / std::sqrt(static_cast<double>(steps)));
    const PldEpsilonResult r = PldEpsilon({{1.0, sigma, steps}}, sampling, delta);
    EXPECT_GE(r.epsilon_upper, expected * (1 - 1e-9));
    EXPECT_LE(r.epsilon_lower, expected * (1 + 1e-9));
    // Default grid (Delta = std / 10): the bracket is a few 1e-3 wide this far in the tail (eps ~ 13-33).
    EXPECT_LE(r.epsilon_upper - r.epsilon_lower, 3e-3 * expected);
  }
}

TEST(PldTest, DeltaAndEpsilonQueriesAreInverse) {
  const ComposedPld pld({{0.02, 1.2, 500}}, SamplingModel::kPoisson);
  for (double delta : {1e-3, 1e-5, 1e-8}) {
    const double eps = pld.EpsilonUpper(delta);
    EXPECT_NEAR(pld.DeltaUpper(eps), delta, 1e-6 * delta);
    EXPECT_LE(pld.DeltaLower(eps), pld.DeltaUpper(eps));
  }
}

TEST(PldTest, GroupedAndSplitSchedulesAgree) {
  const double delta = 1e-5;
  const double merged =
      PldEpsilon({{0.01, 1.0, 300}, {0.03, 2.0, 100}}, SamplingModel::kPoisson, delta).epsilon_upper;
  const double split =
      PldEpsilon({{0.03, 2.0, 60}, {0.01, 1.0, 300}, {0.03, 2.0, 40}}, SamplingModel::kPoisson, delta)
          .epsilon_upper;
  EXPECT_DOUBLE_EQ(merged, split);
}

TEST(PldTest, HeterogeneousScheduleLiesBetweenItsHomogeneousExtremes) {
  const double delta = 1e-5;
  auto eps = [&](const Schedule& s) { return PldEpsilon(s, SamplingModel::kPoisson, delta).epsilon_upper; };
  const double mixed = eps({{0.01, 1.0, 200}, {0.01, 2.0, 200}});
  EXPECT_GT(mixed, eps({{0.01, 2.0, 400}}));
  EXPECT_LT(mixed, eps({{0.01, 1.0, 400}}));
}

TEST(PldTest, EpsilonGrowsWithStepsAndRateAndShrinksWithSigma) {
  auto eps = [](double q, double sigma, int64_t steps) {
    return PldEpsilon({{q, sigma, steps}}, SamplingModel::kPoisson, 1e-5).epsilon_upper;
  };
  EXPECT_LT(eps(0.01, 1.0, 100), eps(0.01, 1.0, 1000));
  EXPECT_LT(eps(0.01, 1.0, 100), eps(0.02, 1.0, 100));
  EXPECT_GT(eps(0.01, 1.0, 100), eps(0.01, 1.5, 100));
}

TEST(PldTest, FixedSizeReplaceOneIsBelowItsRdpBoundAndAbovePoisson) {
  const Schedule s = {{0.01, 1.5, 2000}};
  const double fixed = PldEpsilon(s, SamplingModel::kFixedSizeWithoutReplacement, 1e-5).epsilon_upper;
  EXPECT_LE(fixed, RdpEpsilon(s, SamplingModel::kFixedSizeWithoutReplacement, 1e-5).epsilon);
  EXPECT_GT(fixed, PldEpsilon(s, SamplingModel::kPoisson, 1e-5).epsilon_upper);
}

TEST(PldTest, HandlesAHundredThousandRounds) {
  PldOptions options;
  options.compute_lower_bound = false;
  const PldEpsilonResult r = PldEpsilon({{0.001, 1.0, 100000}}, SamplingModel::kPoisson, 1e-5, options);
  EXPECT_GT(r.epsilon_upper, 0.0);
  EXPECT_LE(r.epsilon_upper, RdpEpsilon({{0.001, 1.0, 100000}}, SamplingModel::kPoisson, 1e-5).epsilon);
  EXPECT_LE(r.fft_size, options.max_grid_points);
}

TEST(PldTest, NoRoundsMeansNoPrivacyLoss) {
  const PldEpsilonResult r = PldEpsilon({}, SamplingModel::kPoisson, 1e-5);
  EXPECT_EQ(r.epsilon_upper, 0.0);
  EXPECT_EQ(r.epsilon_lower, 0.0);
}

TEST(PldTest, RejectsShuffleAndOversizedGrids) {
  EXPECT_THROW(PldEpsilon({{0.1, 1.0, 10}}, SamplingModel::kShuffle, 1e-5), ConfigError);
  PldOptions options;
  options.value_discretization = 1e-9;  // far too fine for 10^4 rounds
  options.max_log2_fft_size = 20;
  EXPECT_THROW(PldEpsilon({{0.1, 1.0, 10000}}, SamplingModel::kPoisson, 1e-5, options), ConfigError);
}

// pld_detail::DeltaOf sums block by block with one expm1 per block; the oracle here is the definition,
// point by point with long double: infinity_mass + sum over l_i > eps of p_i (1 - e^{eps - l_i}). A grid
// point l_i = (offset + i) Delta is itself known to about an ulp (GCC may fuse the product into the
// subtraction), which moves a term by up to p_i ulp(l_i): the tolerance is that, plus 1e-14 relative.
TEST(PldTest, DeltaOfMatchesThePointByPointSum) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (const int64_t size : {5, 300, 1000, 4099}) {
    for (const double delta_loss : {1e-4, 3.7e-3, 0.05}) {
      PldDistribution d;
      d.offset = -static_cast<int64_t>(size) / 3;
      d.infinity_mass = 1e-9;
      d.pmf.resize(static_cast<size_t>(size));
      double total = 0.0;
      for (double& p : d.pmf) total += p = unit(rng) * unit(rng);
      for (double& p : d.pmf) p /= total;
      const double top = static_cast<double>(d.offset + size - 1) * delta_loss;
      const double bottom = static_cast<double>(d.offset) * delta_loss;
      std::vector<double> epsilons = {bottom - 1.0,
                                      bottom,
                                      0.0,
                                      0.5 * delta_loss,
                                      7 * delta_loss,
                                      0.25 * top,
                                      0.5 * top,
                                      top - 0.5 * delta_loss,
                                      top,
                                      top + 1.0,
                                      std::numeric_limits<double>::infinity()};
      for (int k = 0; k < 20; ++k) epsilons.push_back(bottom + (top - bottom) * unit(rng));
      for (const double eps : epsilons) {
        long double expected = d.infinity_mass;
        long double placement = 0.0L;  // sum of p_i * 4 ulp(l_i) over the points counted
        for (size_t i = 0; i < d.pmf.size(); ++i) {
          // The grid point as DeltaOf places it (a double), the rest in long double.
          const double loss = static_cast<double>(d.offset + static_cast<int64_t>(i)) * delta_loss;
          if (loss > eps) {
            expected += d.pmf[i] * -std::expm1(static_cast<long double>(eps) - loss);
            placement += d.pmf[i] * 4.0L * std::numeric_limits<double>::epsilon() * std::fabs(loss);
          }
        }
        SCOPED_TRACE(::testing::Message()
                     << "size=" << size << " delta_loss=" << delta_loss << " eps=" << eps);
        const double got = pld_detail::DeltaOf(d, delta_loss, eps);
        EXPECT_NEAR(got, static_cast<double>(expected),
                    1e-14 * static_cast<double>(expected) + static_cast<double>(placement) + 1e-300);
      }
    }
  }
}

}  // namespace
}  // namespace asyncdp::accounting
