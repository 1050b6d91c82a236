// The incomplete beta function and binomial tails against closed forms and against direct summation of
// binomial probabilities in long double (an oracle that shares nothing with the continued fraction).
#include "core/audit/binomial.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numbers>

#include "tests/core/audit/binomial_oracle.h"

namespace asyncdp::audit {
namespace {

using binomial_oracle::DirectTail;

TEST(BinomialTest, IncompleteBetaMatchesClosedForms) {
  for (const double x : {1e-12, 0.01, 0.3, 0.5, 0.77, 0.999}) {
    // I_x(1, b) = 1 - (1 - x)^b,  I_x(a, 1) = x^a,  I_x(a, a) at x = 1/2 is 1/2.
    for (const double b : {1.0, 2.5, 40.0, 3000.0}) {
      EXPECT_NEAR(RegularizedIncompleteBeta(1.0, b, x), -std::expm1(b * std::log1p(-x)), 1e-14)
          << x << " " << b;
      EXPECT_NEAR(RegularizedIncompleteBeta(b, 1.0, x), std::pow(x, b), 1e-14 + 1e-13 * std::pow(x, b));
    }
  }
  for (const double a : {0.5, 3.0, 250.0, 1e5})
    EXPECT_NEAR(RegularizedIncompleteBeta(a, a, 0.5), 0.5, 1e-13) << a;
  // I_x(1/2, 1/2) = (2 / pi) asin(sqrt x), the arcsine law.
  for (const double x : {0.05, 0.4, 0.93}) {
    EXPECT_NEAR(RegularizedIncompleteBeta(0.5, 0.5, x), 2.0 / std::numbers::pi * std::asin(std::sqrt(x)),
                1e-14);
  }
  EXPECT_EQ(RegularizedIncompleteBeta(2.0, 3.0, 0.0), 0.0);
  EXPECT_EQ(RegularizedIncompleteBeta(2.0, 3.0, 1.0), 1.0);
}

TEST(BinomialTest, TailsEqualDirectSummation) {
  struct Case {
    int64_t n;
    double p;
  };
  for (const Case c :
       {Case{1, 0.3}, Case{10, 0.5}, Case{37, 0.02}, Case{100, 0.88}, Case{2000, 0.004}, Case{5000, 0.5}}) {
    for (int64_t k = 0; k <= c.n; k += std::max<int64_t>(1, c.n / 23)) {
      const long double direct = DirectTail(c.n, c.p, k);
      const double tail = BinomialTailAtLeast(c.n, c.p, k);
      // Relative in the tail, absolute near 1.
      EXPECT_NEAR(tail, static_cast<double>(direct), 1e-12 * static_cast<double>(direct) + 1e-14)
          << "n " << c.n << " p " << c.p << " k " << k;
      const long double cdf = 1.0L - DirectTail(c.n, c.p, k + 1);
      EXPECT_NEAR(BinomialCdf(c.n, c.p, k), static_cast<double>(cdf), 1e-12) << "n " << c.n << " k " << k;
    }
  }
  // Far tails stay relative-accurate (no cancellation): P[Bin(1000, 0.01) >= 60].
  const long double far = DirectTail(1000, 0.01, 60);
  EXPECT_NEAR(BinomialTailAtLeast(1000, 0.01, 60) / static_cast<double>(far), 1.0, 1e-11);
  EXPECT_GT(far, 0.0L);
  EXPECT_LT(far, 1e-20L);
}

TEST(BinomialTest, PmfSumsToOneAndEdgesAreExact) {
  double total = 0.0;
  for (int64_t k = 0; k <= 300; ++k) total += BinomialPmf(300, 0.37, k);
  EXPECT_NEAR(total, 1.0, 1e-13);
  EXPECT_EQ(BinomialPmf(5, 0.0, 0), 1.0);
  EXPECT_EQ(BinomialPmf(5, 1.0, 5), 1.0);
  EXPECT_EQ(BinomialPmf(5, 1.0, 4), 0.0);
  EXPECT_EQ(BinomialTailAtLeast(5, 0.3, 0), 1.0);
  EXPECT_EQ(BinomialTailAtLeast(5, 0.3, 6), 0.0);
  EXPECT_EQ(BinomialCdf(5, 0.3, 5), 1.0);
  EXPECT_EQ(BinomialCdf(5, 0.3, -1), 0.0);
}

TEST(BinomialTest, InverseIncompleteBetaInverts) {
  // Closed forms: I_x(a, 1) = x^a and I_x(1, b) = 1 - (1 - x)^b.
  for (const double y : {1e-9, 0.025, 0.5, 0.975}) {
    for (const double a : {1.0, 7.0, 1500.0}) {
      EXPECT_NEAR(InverseRegularizedIncompleteBeta(a, 1.0, y), std::pow(y, 1.0 / a), 4e-16) << a << " " << y;
      EXPECT_NEAR(InverseRegularizedIncompleteBeta(1.0, a, y), -std::expm1(std::log1p(-y) / a),
                  1e-14 * -std::expm1(std::log1p(-y) / a))
          << a << " " << y;
    }
  }
  // Elsewhere: I_x at the result is y up to the rounding of x (relative 2^-52, times the slope).
  for (const double a : {2.0, 7.0, 1500.0}) {
    for (const double b : {2.0, 999.0}) {
      for (const double y : {1e-9, 0.025, 0.5, 0.975}) {
        const double x = InverseRegularizedIncompleteBeta(a, b, y);
        const double slope = BetaDensity(a, b, x) * x;
        EXPECT_NEAR(RegularizedIncompleteBeta(a, b, x), y, 1e-13 * y + 4e-16 * slope)
            << a << " " << b << " " << y;
      }
    }
  }
}

}  // namespace
}  // namespace asyncdp::audit
