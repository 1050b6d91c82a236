// The mu-GDP conversions against the hockey-stick integral of the pair N(mu, 1) vs N(0, 1), and the
// refuted-mu formula against the exact error rates of threshold tests on that pair.
#include "core/audit/gaussian_dp.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/core/audit/hockey_stick.h"

namespace asyncdp::audit {
namespace {

using testing::GaussianDensity;
using testing::GaussianPairEpsilon;
using testing::HockeyStick;

TEST(GaussianDpTest, DeltaEqualsTheHockeyStickIntegralOfTheGaussianPair) {
  for (const double mu : {0.3, 1.0, 2.5}) {
    for (const double eps : {0.0, 0.5, 2.0, 6.0}) {
      const double integral =
          HockeyStick([mu](double x) { return GaussianDensity(x, mu); },
                      [](double x) { return GaussianDensity(x, 0.0); }, eps, -14.0, 14.0 + mu);
      // Simpson's error at the integrand's kink is O(h^2) ~ 1e-9 here: a wrong formula is off by far more.
      EXPECT_NEAR(GdpDelta(mu, eps), integral, 1e-7 * integral + 1e-13) << mu << " " << eps;
    }
  }
}

TEST(GaussianDpTest, EpsilonEqualsTheTrueEpsilonOfTheGaussianPair) {
  for (const double mu : {0.502, 0.925, 1.666}) {
    for (const double delta : {1e-5, 1e-3}) {
      const double truth = GaussianPairEpsilon(mu, delta);
      EXPECT_NEAR(GdpEpsilon(mu, delta), truth, 2e-6) << mu << " " << delta;
      EXPECT_LE(GdpEpsilon(mu, delta), truth + 1e-6);  // a lower end of its bracket
    }
  }
  EXPECT_EQ(GdpEpsilon(0.0, 1e-5), 0.0);
  EXPECT_EQ(GdpEpsilon(1e-3, 0.5), 0.0);    // delta(0) = TV distance < 0.5: eps = 0 suffices
  EXPECT_GT(GdpEpsilon(6.0, 1e-10), 20.0);  // large mu: no overflow
}

TEST(GaussianDpTest, RefutedMuRecoversMuFromExactErrorRates) {
  // The test "x >= t" between N(0, 1) (out) and N(mu, 1) (in): FPR = Phi(-t), FNR = Phi(t - mu).
  auto phi = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  for (const double mu : {0.2, 1.0, 3.0}) {
    for (const double t : {-1.0, 0.4, 2.0}) {
      EXPECT_NEAR(GdpMuRefuted(phi(-t), phi(t - mu)), mu, 1e-12) << mu << " " << t;
    }
  }
  // Larger error rates refute less; rates worse than chance refute nothing.
  EXPECT_LT(GdpMuRefuted(0.2, 0.2), GdpMuRefuted(0.1, 0.2));
  EXPECT_EQ(GdpMuRefuted(0.6, 0.6), 0.0);
  EXPECT_EQ(GdpMuRefuted(0.0, 0.3), INFINITY);
}

}  // namespace
}  // namespace asyncdp::audit
