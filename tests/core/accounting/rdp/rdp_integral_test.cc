#include "core/accounting/rdp/rdp_integral.h"

#include <gtest/gtest.h>

#include <cmath>

namespace asyncdp::accounting {
namespace {

TEST(RdpIntegralTest, QuadratureMatchesTheMtz19Series) {
  // The series sums ln A with absolute precision ~1e-16 in A, so compare A - 1 with that absolute slack.
  // (The series needs thousands of terms for orders near 1, so the grid is kept small.)
  for (double q : {0.001, 0.05, 0.9}) {
    for (double sigma : {0.5, 2.0, 20.0}) {
      for (double alpha : {1.01, 2.5, 10.9}) {
        const double quad = LogSubsampledGaussianMoment(q, sigma, alpha);
        const double series = LogSubsampledGaussianMomentSeries(q, sigma, alpha);
        EXPECT_NEAR(std::expm1(quad), std::expm1(series), 1e-9 * std::expm1(series) + 1e-15)
            << "q=" << q << " sigma=" << sigma << " alpha=" << alpha;
      }
    }
  }
}

TEST(RdpIntegralTest, SmallRateMomentHasTheSecondOrderExpansion) {
  // For q -> 0: A - 1 = C(alpha, 2) q^2 (e^{1/sigma^2} - 1) + O(q^3): tiny values keep full precision.
  const double q = 1e-6;
  const double sigma = 2.0;
  const double alpha = 1.5;
  const double expected = alpha * (alpha - 1) / 2 * q * q * std::expm1(1 / (sigma * sigma));
  EXPECT_NEAR(LogSubsampledGaussianMoment(q, sigma, alpha), expected, 1e-5 * expected);
}

TEST(RdpIntegralTest, TableEvaluatesManyOrdersConsistently) {
  const SubsampledGaussianMoments table(0.02, 0.8, 20.0);
  for (double alpha : {1.1, 3.3, 19.9}) {
    EXPECT_DOUBLE_EQ(table.LogMoment(alpha), LogSubsampledGaussianMoment(0.02, 0.8, alpha));
  }
}

}  // namespace
}  // namespace asyncdp::accounting
