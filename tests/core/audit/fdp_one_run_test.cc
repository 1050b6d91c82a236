// The f-DP one-run audit (Mahloujifar, Melis & Chaudhuri 2024) against mechanisms whose distribution of
// correct guesses is known exactly: eps-randomised response and the per-canary Gaussian mechanism with a
// guess on every canary make W ~ Bin(k, q), which an f-DP mechanism achieves, so the f-DP tail bound must
// never fall below that binomial tail (binomial_oracle.h, direct summation, shares no code with the
// library). For randomised response the bound must also be close to it: the worst case of eps-DP.
#include "core/audit/fdp_one_run.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/audit/one_run.h"
#include "core/random.h"
#include "tests/core/audit/binomial_oracle.h"

namespace asyncdp::audit {
namespace {

// The trade-off functions from their definitions, written apart from the inverses under test:
// f_{eps,delta}(a) = max(0, 1 - delta - e^eps a, e^-eps (1 - delta - a)) and G_mu(a) = P[N(mu,1) <= z] with
// P[N(0,1) > z] = a, the quantile found by bisection on erfc.
double ApproximateDpTradeoff(double eps, double delta, double a) {
  return std::max({0.0, 1.0 - delta - std::exp(eps) * a, std::exp(-eps) * (1.0 - delta - a)});
}
double GaussianTradeoff(double mu, double a) {
  double lo = -40.0, hi = 40.0;  // z with 0.5 erfc(z / sqrt 2) = a
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(mid / std::sqrt(2.0)) > a ? lo : hi) = mid;
  }
  return 0.5 * std::erfc(-(lo - mu) / std::sqrt(2.0));
}

TEST(FdpOneRunTest, InversesInvertTheTradeoffFunctions) {
  for (const double y : {1e-9, 1e-4, 0.01, 0.2, 0.5, 0.8, 0.999}) {
    for (const double mu : {0.0, 0.5, 1.0, 3.0}) {
      const double x = GdpFbarInverse(mu, y);
      EXPECT_NEAR(1.0 - GaussianTradeoff(mu, x), y, 1e-9 * std::max(y, 1e-3)) << mu << " " << y;
    }
    for (const double eps : {0.0, 0.5, 2.0}) {
      for (const double delta : {0.0, 1e-3}) {
        const double x = ApproximateDpFbarInverse(eps, delta, y);
        if (y <= delta) {
          EXPECT_EQ(x, 0.0);
        } else {
          EXPECT_NEAR(1.0 - ApproximateDpTradeoff(eps, delta, x), y, 1e-12)
              << eps << " " << delta << " " << y;
        }
      }
    }
  }
  EXPECT_TRUE(std::isinf(GdpFbarInverse(1.0, 1.0 + 1e-12)));
  EXPECT_TRUE(std::isinf(ApproximateDpFbarInverse(1.0, 0.0, 1.5)));
}

TEST(FdpOneRunTest, NeverBelowTheTailOfRandomisedResponse) {
  // eps-randomised response on every canary, guesses on k of them (m = k and m = 3k): W ~ Bin(k, e^eps /
  // (1 + e^eps)) exactly, an eps-DP mechanism, so P[W >= v] <= the f_{eps,0} tail bound. Randomised response
  // is the worst case of eps-DP, so the bound must also be near it (measured: at most 1.36x here).
  struct Case {
    double eps;
    int64_t k, v;
  };
  for (const Case c : {Case{0.5, 10, 8}, Case{0.5, 100, 80}, Case{1.0, 50, 40}, Case{1.0, 100, 95},
                       Case{1.0, 200, 180}, Case{2.0, 100, 95}, Case{2.0, 200, 180}, Case{3.0, 400, 390}}) {
    const long double q = 1.0L / (1.0L + std::exp(-static_cast<long double>(c.eps)));
    const auto exact = static_cast<double>(binomial_oracle::DirectTail(c.k, q, c.v));
    const TradeoffInverse inverse = [&](double y) { return ApproximateDpFbarInverse(c.eps, 0.0, y); };
    const double bound = FdpTailBound(inverse, c.k, c.k, c.v);
    SCOPED_TRACE(std::to_string(c.eps) + " " + std::to_string(c.k) + " " + std::to_string(c.v));
    EXPECT_GE(bound, exact * (1.0 - 1e-8));
    EXPECT_LE(bound, 1.4 * exact);
    EXPECT_GE(FdpTailBound(inverse, 3 * c.k, c.k, c.v), bound);  // more canaries: a weaker claim
  }
}

TEST(FdpOneRunTest, NeverBelowTheTailOfTheGaussianMechanism) {
  // Canary i released as N(mu S_i, 1), S_i its coin (mu-GDP per canary), guessed IN iff the release exceeds
  // mu / 2, on every canary: W ~ Bin(m, Phi(mu / 2)).
  for (const double mu : {0.5, 1.0, 2.0}) {
    for (const auto& [k, v] :
         std::vector<std::pair<int64_t, int64_t>>{{10, 8}, {50, 40}, {100, 95}, {200, 180}}) {
      const long double q = 0.5L * std::erfc(-static_cast<long double>(mu) / 2 / std::sqrt(2.0L));
      const auto exact = static_cast<double>(binomial_oracle::DirectTail(k, q, v));
      const double bound = FdpTailBound([mu](double y) { return GdpFbarInverse(mu, y); }, k, k, v);
      EXPECT_GE(bound, exact * (1.0 - 1e-8)) << mu << " " << k << " " << v;
    }
  }
}

TEST(FdpOneRunTest, LeastMassGrowsWithTauAndTheBoundsAreTheLargestRejected) {
  const TradeoffInverse inverse = [](double y) { return GdpFbarInverse(1.0, y); };
  double previous = 0.0;
  for (const double tau : {0.0, 1e-6, 1e-3, 0.05, 0.3, 1.0}) {
    const double mass = FdpLeastMass(inverse, 2000, 400, 370, tau, 1e300);
    EXPECT_GE(mass, previous);
    previous = mass;
  }
  // No correct guess needs nothing below it: P[W >= 0] = tau is met by tau.
  EXPECT_DOUBLE_EQ(FdpLeastMass(inverse, 100, 10, 0, 0.4), 0.4);

  const double mu = FdpGdpMuLowerBound(2000, 400, 370, 0.05);
  ASSERT_GT(mu, 0.0);
  EXPECT_GT(FdpLeastMass([mu](double y) { return GdpFbarInverse(mu, y); }, 2000, 400, 370, 0.05), 1.0);
  EXPECT_LE(FdpLeastMass([mu](double y) { return GdpFbarInverse(mu + 1e-8, y); }, 2000, 400, 370, 0.05), 1.0);
  // Chance-level guessing rejects nothing.
  EXPECT_EQ(FdpGdpMuLowerBound(2000, 400, 200, 0.05), 0.0);
  EXPECT_EQ(FdpApproximateDpEpsilonLowerBound(2000, 400, 200, 1e-5, 0.05), 0.0);
}

TEST(FdpOneRunTest, ApproximateDpBoundAtPureDpIsNoStrongerThanSteinkes) {
  // Steinke et al.'s binomial test is exact for eps-DP, so at delta = 0 the f-DP route (a relaxation of the
  // same question) can only reject less, and it should not reject much less.
  struct Case {
    int64_t m, k, v;
  };
  for (const Case c :
       {Case{1000, 100, 75}, Case{1000, 200, 170}, Case{20000, 400, 380}, Case{5000, 1000, 990}}) {
    const double steinke = OneRunEpsilonLowerBound(c.m, c.k, c.v, 0.0, 0.05);
    const double fdp = FdpApproximateDpEpsilonLowerBound(c.m, c.k, c.v, 0.0, 0.05);
    EXPECT_LE(fdp, steinke + 1e-7) << c.m << " " << c.k << " " << c.v;
    EXPECT_GE(fdp, 0.85 * steinke) << c.m << " " << c.k << " " << c.v;
  }
}

TEST(FdpOneRunTest, SoundOnRandomisedResponseCanaries) {
  // 400 runs of eps-randomised response (eps = 1) on 1,000 canaries, 300 + 300 guesses: the assumption-free
  // bound exceeds the true eps in at most 5% of runs (allowance: the 99.9% quantile of Bin(400, 0.05), 33).
  const double eps = 1.0;
  OneRunAuditOptions options;
  options.delta = 0.0;
  const std::vector<GuessCounts> choice = {{300, 300}};
  int above = 0;
  double mean = 0.0;
  for (int seed = 0; seed < 400; ++seed) {
    const auto included = DrawCanaryInclusion(500 + seed, 0, 1000);
    RandomStream stream(StreamKey{static_cast<uint64_t>(seed), 9, 0, StreamPurpose::kTest});
    std::vector<double> scores(included.size());
    for (size_t i = 0; i < included.size(); ++i) {
      const bool flip = stream.NextUniform() < 1.0 / (1.0 + std::exp(eps));
      scores[i] = ((included[i] != 0) != flip ? 1.0 : -1.0) + 1e-3 * stream.NextUniform();  // ties at random
    }
    const FdpOneRunResult r = FdpOneRunAuditBestOf(scores, included, choice, options);
    above += r.approximate.epsilon > eps;
    mean += r.approximate.epsilon / 400;
  }
  RecordProperty("fdp_randomised_response_above_truth_of_400", above);
  RecordProperty("fdp_randomised_response_mean_bound", std::to_string(mean));
  EXPECT_LE(above, 33);
  EXPECT_GT(mean, 0.5);  // it detects the mechanism
}

TEST(FdpOneRunTest, BestOfPaysBonferroniAndPicksEachFamilysWinner) {
  std::vector<double> scores;
  std::vector<uint8_t> included;
  for (int i = 0; i < 2000; ++i) {
    included.push_back(static_cast<uint8_t>(i % 2));
    scores.push_back((i % 2 ? 3.0 : 0.0) + std::sin(0.37 * i));  // separable in the extremes
  }
  OneRunAuditOptions options;
  options.delta = 1e-5;
  const std::vector<GuessCounts> choices = {{50, 0}, {100, 100}, {400, 400}};
  const FdpOneRunResult best = FdpOneRunAuditBestOf(scores, included, choices, options);
  EXPECT_NEAR(best.beta, 0.05 / 3, 1e-15);
  const auto order = RankCanariesByScore(scores);
  double mu = 0.0;
  for (const GuessCounts& c : choices) {
    const int64_t v = CountCorrectGuesses(order, included, c.k_plus, c.k_minus);
    mu = std::max(mu, FdpGdpMuLowerBound(2000, c.k_plus + c.k_minus, v, 0.05 / 3));
  }
  EXPECT_DOUBLE_EQ(best.gaussian.value, mu);
  EXPECT_GT(best.gaussian.epsilon, 0.0);
  EXPECT_DOUBLE_EQ(best.approximate.value, best.approximate.epsilon);
  EXPECT_GT(best.approximate.epsilon, 0.0);
}

}  // namespace
}  // namespace asyncdp::audit
