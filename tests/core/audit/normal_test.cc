#include "core/audit/normal.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace asyncdp::audit {
namespace {

TEST(NormalTest, QuantileMatchesPublishedValuesAndInvertsTheCdf) {
  // Standard table values (e.g. Abramowitz & Stegun Table 26.5 to the digits given there).
  EXPECT_NEAR(NormalQuantile(0.975), 1.959963984540054, 1e-14);
  EXPECT_NEAR(NormalQuantile(0.95), 1.6448536269514722, 1e-14);
  EXPECT_NEAR(NormalQuantile(0.5), 0.0, 1e-15);
  EXPECT_NEAR(NormalQuantile(1e-10), -6.361340902404056, 1e-12);
  // A relative error r in x is one of ~x^2 r in Phi(x) in the tail: allow 1e-15 relative in x.
  for (const double p : {1e-300, 1e-50, 1e-8, 0.0123, 0.3, 0.7, 0.999}) {
    const double x = NormalQuantile(p);
    EXPECT_NEAR(NormalCdf(x) / p, 1.0, 1e-13 * std::max(1.0, x * x)) << p;
  }
  EXPECT_EQ(NormalQuantile(0.0), -INFINITY);
  EXPECT_EQ(NormalQuantile(1.0), INFINITY);
}

TEST(NormalTest, LogCdfIsFiniteAndAccurateInTheFarTail) {
  for (const double x : {-5.0, -20.0, -36.9})
    EXPECT_NEAR(LogNormalCdf(x), std::log(NormalCdf(x)), 1e-12) << x;
  // Continuous across the switch to the series at -37 and finite far beyond.
  EXPECT_NEAR(LogNormalCdf(-37.0 - 1e-9), LogNormalCdf(-37.0 + 1e-9), 1e-6);
  const double x = -60.0;
  const double leading = -0.5 * x * x - std::log(-x) - 0.5 * std::log(2 * 3.14159265358979323846);
  EXPECT_NEAR(LogNormalCdf(x), leading + std::log1p(-1.0 / (x * x)), 1e-6);
  EXPECT_NEAR(LogNormalCdf(3.0), std::log(0.9986501019683699), 1e-15);
}

}  // namespace
}  // namespace asyncdp::audit
