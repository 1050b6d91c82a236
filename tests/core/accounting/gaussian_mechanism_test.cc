#include "core/accounting/gaussian_mechanism.h"

#include <gtest/gtest.h>

namespace asyncdp::accounting {
namespace {

TEST(GaussianMechanismTest, ClassicBoundsMatchTheBackgroundSpec) {
  // reference values: eps = 1, delta = 1e-5, sensitivity 1.
  EXPECT_NEAR(ClassicGaussianSigma(1, 1e-5, ClassicGaussianBound::k6_81), 5.505633, 1e-6);
  EXPECT_NEAR(ClassicGaussianSigma(1, 1e-5, ClassicGaussianBound::k6_82), 5.310146, 1e-6);
  EXPECT_NEAR(ClassicGaussianSigma(1, 1e-5, ClassicGaussianBound::k6_83), 4.901617, 1e-6);
  EXPECT_NEAR(ClassicGaussianSigma(1, 1e-5, ClassicGaussianBound::k6_84), 4.710411, 1e-6);
  EXPECT_NEAR(ClassicGaussianSigma(1, 1e-5, ClassicGaussianBound::k6_91), 4.900555, 1e-6);
  EXPECT_NEAR(ClassicGaussianSigma(1, 1e-5, ClassicGaussianBound::kDworkRothA1), 4.844805, 1e-6);
  EXPECT_NEAR(ChernoffGaussianDelta(1, 5), 6.1136e-6, 1e-10);
}

TEST(GaussianMechanismTest, AnalyticGaussianIsTightAndBelowEveryClassicBound) {
  const double s = AnalyticGaussianSigma(1.0, 1e-5);
  EXPECT_NEAR(GaussianDelta(1.0, s), 1e-5, 1e-12);
  for (auto bound :
       {ClassicGaussianBound::k6_81, ClassicGaussianBound::k6_82, ClassicGaussianBound::k6_83,
        ClassicGaussianBound::k6_84, ClassicGaussianBound::k6_91, ClassicGaussianBound::kDworkRothA1}) {
    const double classic = ClassicGaussianSigma(1.0, 1e-5, bound);
    EXPECT_LT(s, classic);
    EXPECT_LE(GaussianDelta(1.0, classic), 1e-5);  // each classic bound is sufficient
  }
  EXPECT_NEAR(GaussianDelta(GaussianEpsilon(1e-7, 3.0), 3.0), 1e-7, 1e-15);
}

}  // namespace
}  // namespace asyncdp::accounting
