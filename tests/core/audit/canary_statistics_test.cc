#include "core/audit/canary_statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/core/audit/hockey_stick.h"

namespace asyncdp::audit {
namespace {

using testing::GaussianDensity;

TEST(CanaryStatisticsTest, StepLikelihoodRatioIsTheMixtureDensityRatio) {
  for (const double sigma : {0.5, 1.0, 3.0}) {
    for (const double q : {0.0, 0.01, 0.3, 1.0}) {
      for (const double x : {-4.0, 0.0, 0.5, 2.0, 9.0}) {
        // Densities of x / sigma in units of sigma: in = (1 - q) N(0, s^2) + q N(1, s^2), out = N(0, s^2).
        const double in =
            (1 - q) * GaussianDensity(x / sigma, 0.0) + q * GaussianDensity(x / sigma, 1.0 / sigma);
        const double out = GaussianDensity(x / sigma, 0.0);
        EXPECT_NEAR(CanaryStepLogLikelihoodRatio(x, q, sigma), std::log(in / out), 1e-12) << sigma << q << x;
      }
    }
  }
  // Far tails: finite and asymptotically (x - 1/2) / sigma^2 + ln q.
  EXPECT_NEAR(CanaryStepLogLikelihoodRatio(1e4, 0.01, 1.0), 1e4 - 0.5 + std::log(0.01), 1e-9);
  EXPECT_NEAR(CanaryStepLogLikelihoodRatio(-1e4, 0.01, 1.0), std::log(0.99), 1e-12);
}

TEST(CanaryStatisticsTest, SumsOverSteps) {
  const std::vector<double> x = {0.3, -1.2, 2.5};
  EXPECT_DOUBLE_EQ(CanarySumStatistic(x), 1.6);
  EXPECT_NEAR(CanaryLogLikelihoodRatio(x, 0.1, 2.0),
              CanaryStepLogLikelihoodRatio(0.3, 0.1, 2.0) + CanaryStepLogLikelihoodRatio(-1.2, 0.1, 2.0) +
                  CanaryStepLogLikelihoodRatio(2.5, 0.1, 2.0),
              1e-15);
  // Full batch: the log likelihood ratio is affine in the sum, so both rank runs identically.
  EXPECT_NEAR(CanaryLogLikelihoodRatio(x, 1.0, 2.0), (1.6 - 1.5) / 4.0, 1e-15);
}

}  // namespace
}  // namespace asyncdp::audit
