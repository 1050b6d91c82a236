// The whole privacy curve (core/accounting/privacy_curve.h): ε(δ) and δ(ε) are one accountant's inverse
// functions, and the trade-off curve is a lower bound on the exact one — checked against the Neyman–Pearson
// trade-off of the Gaussian and of one Poisson-subsampled Gaussian round, written out here with std::erfc
// (no code shared with core/accounting).
#include "core/accounting/privacy_curve.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/accounting/account.h"
#include "core/accounting/dp_event.h"
#include "core/error.h"

namespace asyncdp::accounting {
namespace {

double Phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
double PhiInv(double p) {  // bisection: independent of any library quantile
  double lo = -40.0, hi = 40.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (Phi(mid) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

std::shared_ptr<const Accountant> Composed(double q, double sigma, int64_t rounds, AccountantKind kind) {
  const DpEventPtr event = SelfComposed(PoissonSampled(q, Gaussian(sigma)), rounds);
  AccountQuery query;
  query.pld_lower_bound = false;
  Accounted a = Account(*event, kind, query);
  EXPECT_TRUE(a.available) << a.reason;
  return a.composed;
}

// A pure (ε, 0) statement: f(α) = max(0, 1 − e^ε α, e^{−ε}(1 − α)) (Kairouz, Oh & Viswanath).
TEST(PrivacyCurve, TradeoffOfOnePureStatementIsItsKnownCurve) {
  const double eps = 1.0;
  const std::vector<CurvePoint> profile = {{eps, 0.0}};
  const std::vector<double> alphas = {0.0, 0.1, 0.2689, 0.5, 1.0};
  const auto curve = TradeoffFromProfile(profile, alphas);
  for (size_t i = 0; i < alphas.size(); ++i) {
    const double a = alphas[i];
    EXPECT_NEAR(curve[i].y, std::max({0.0, 1.0 - std::exp(eps) * a, std::exp(-eps) * (1.0 - a)}), 1e-12) << a;
  }
  EXPECT_THROW(TradeoffFromProfile(profile, std::vector<double>{1.5}), ConfigError);
}

// The Gaussian mechanism (q = 1, one round) is μ-GDP with μ = 1/σ: β(α) = Φ(Φ^{-1}(1 − α) − μ) exactly.
TEST(PrivacyCurve, GaussianTradeoffIsALowerBoundWithinAHairOfTheExactCurve) {
  for (const double sigma : {0.5, 1.0, 2.0}) {
    const auto composed = Composed(1.0, sigma, 1, AccountantKind::kPld);
    const PrivacyCurve curve = CurveOf(*composed, DefaultCurveDeltas(), {}, DefaultTradeoffAlphas());
    double worst_gap = 0.0;
    for (const CurvePoint& p : curve.tradeoff) {
      const double exact = p.x == 0.0 ? 1.0 : Phi(PhiInv(1.0 - p.x) - 1.0 / sigma);
      EXPECT_LE(p.y, exact + 1e-9) << "sigma " << sigma << " alpha " << p.x;  // never above: a bound
      worst_gap = std::max(worst_gap, exact - p.y);
    }
    EXPECT_LT(worst_gap, 2e-3) << "sigma " << sigma;  // measured 2.3e-4 … 9.6e-4
    std::printf("gaussian sigma %.1f: largest gap to the exact trade-off %.2e over %zu alphas\n", sigma, worst_gap,
                curve.tradeoff.size());
  }
}

// One Poisson-subsampled round, add/remove: with x ~ B = N(0, σ²) (without the record) and A = (1 − q) N(0, σ²)
// + q N(1, σ²) (with it), the likelihood ratio grows with x, so the best tests threshold x. Both orders:
// "is the record in" (reject B for large x) and "is it out" (reject A for small x).
TEST(PrivacyCurve, SubsampledTradeoffIsBelowBothNeymanPearsonCurves) {
  const double q = 0.2, sigma = 1.0;
  const auto composed = Composed(q, sigma, 1, AccountantKind::kPld);
  const PrivacyCurve curve = CurveOf(*composed, DefaultCurveDeltas(), {}, DefaultTradeoffAlphas());
  double worst_gap = 0.0;
  for (const CurvePoint& p : curve.tradeoff) {
    if (p.x == 0.0) continue;
    // Order 1: H0 = B; α = P_B(x > t) gives t; β = P_A(x ≤ t).
    const double t1 = sigma * PhiInv(1.0 - p.x);
    const double beta1 = (1.0 - q) * Phi(t1 / sigma) + q * Phi((t1 - 1.0) / sigma);
    // Order 2: H0 = A; α = P_A(x < t) solved by bisection; β = P_B(x ≥ t).
    double lo = -40.0, hi = 40.0;
    for (int i = 0; i < 200; ++i) {
      const double mid = 0.5 * (lo + hi);
      ((1.0 - q) * Phi(mid / sigma) + q * Phi((mid - 1.0) / sigma) < p.x ? lo : hi) = mid;
    }
    const double beta2 = 1.0 - Phi(0.5 * (lo + hi) / sigma);
    EXPECT_LE(p.y, std::min(beta1, beta2) + 1e-9) << "alpha " << p.x;
    worst_gap = std::max(worst_gap, std::min(beta1, beta2) - p.y);
  }
  EXPECT_LT(worst_gap, 0.01);  // measured 5.4e-3
  std::printf("subsampled q %.1f sigma %.1f: largest gap to the tighter exact order %.2e\n", q, sigma, worst_gap);
}

// ε(δ) then δ(ε) comes back to δ, and δ(ε) then ε(δ) back to ε, on the accountant tests' grid.
TEST(PrivacyCurve, EpsilonOfDeltaAndDeltaOfEpsilonRoundTrip) {
  for (const AccountantKind kind : {AccountantKind::kPld, AccountantKind::kRdp, AccountantKind::kGdp}) {
    for (const double q : {0.01, 0.1}) {
      for (const double sigma : {0.8, 1.0, 2.0}) {
        for (const int64_t rounds : {int64_t{1}, int64_t{100}, int64_t{1000}}) {
          const auto composed = Composed(q, sigma, rounds, kind);
          for (const double delta : {1e-5, 1e-6}) {
            const double eps = composed->Epsilon(delta).epsilon;
            if (!(eps > 0.0)) continue;  // δ reached at ε = 0: nothing to invert
            const double back = composed->Delta(eps);
            EXPECT_NEAR(back / delta, 1.0, 1e-6)
                << ToString(kind) << " q " << q << " sigma " << sigma << " T " << rounds << " delta " << delta;
            EXPECT_NEAR(composed->Epsilon(back).epsilon / eps, 1.0, 1e-6) << ToString(kind);
          }
        }
      }
    }
  }
}

TEST(PrivacyCurve, DefaultGridsAndRefusals) {
  const auto composed = Composed(0.01, 1.0, 1000, AccountantKind::kPld);
  const PrivacyCurve curve = CurveOf(*composed, DefaultCurveDeltas(), {}, DefaultTradeoffAlphas());
  ASSERT_EQ(curve.epsilon_of_delta.size(), 10u);
  ASSERT_EQ(curve.delta_of_epsilon.size(), 21u);
  EXPECT_EQ(curve.delta_of_epsilon.front().x, 0.0);
  EXPECT_NEAR(curve.delta_of_epsilon.back().x, curve.epsilon_of_delta.back().y, 1e-12);
  for (size_t i = 1; i < curve.epsilon_of_delta.size(); ++i) {
    EXPECT_GT(curve.epsilon_of_delta[i].y, curve.epsilon_of_delta[i - 1].y);  // smaller δ, larger ε
  }
  for (size_t i = 1; i < curve.tradeoff.size(); ++i) EXPECT_LE(curve.tradeoff[i].y, curve.tradeoff[i - 1].y);
  EXPECT_THROW(CurveOf(*composed, std::vector<double>{0.0}, {}, {}), ConfigError);
  EXPECT_THROW(CurveOf(*composed, std::vector<double>{1e-5}, std::vector<double>{-1.0}, {}), ConfigError);
}

}  // namespace
}  // namespace asyncdp::accounting
