// Clopper–Pearson bounds against published values, closed forms, the defining tail equations evaluated by
// direct summation, and their coverage in simulation.
#include "core/audit/clopper_pearson.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "core/random.h"
#include "tests/core/audit/binomial_oracle.h"

namespace asyncdp::audit {
namespace {

using binomial_oracle::DirectTail;

TEST(ClopperPearsonTest, ReproducesPublishedIntervals) {
  // R's binom.test (exact Clopper–Pearson): the documentation example, 682 of 925 (Mendel's peas),
  // 95% CI [0.7076683, 0.7654066]; 5 of 10: [0.1870860, 0.8129140]; 1 of 10: [0.002528579, 0.4450161].
  const ProportionInterval peas = ClopperPearsonInterval(682, 925, 0.05);
  EXPECT_NEAR(peas.lower, 0.7076683, 5e-8);
  EXPECT_NEAR(peas.upper, 0.7654066, 5e-8);
  const ProportionInterval half = ClopperPearsonInterval(5, 10, 0.05);
  EXPECT_NEAR(half.lower, 0.1870860, 5e-8);
  EXPECT_NEAR(half.upper, 0.8129140, 5e-8);
  const ProportionInterval one = ClopperPearsonInterval(1, 10, 0.05);
  EXPECT_NEAR(one.lower, 0.002528579, 5e-10);
  EXPECT_NEAR(one.upper, 0.4450161, 5e-8);
}

TEST(ClopperPearsonTest, ZeroAndAllSuccessesHaveClosedForms) {
  // k = 0: P[Bin(n, p) <= 0] = (1 - p)^n = alpha; k = n: p^n = alpha.
  for (const int64_t n : {1, 10, 2000}) {
    for (const double alpha : {0.025, 1e-6}) {
      EXPECT_NEAR(ClopperPearsonUpper(0, n, alpha), -std::expm1(std::log(alpha) / n), 1e-14) << n;
      EXPECT_NEAR(ClopperPearsonLower(n, n, alpha), std::exp(std::log(alpha) / n), 1e-14) << n;
      EXPECT_EQ(ClopperPearsonLower(0, n, alpha), 0.0);
      EXPECT_EQ(ClopperPearsonUpper(n, n, alpha), 1.0);
    }
  }
}

TEST(ClopperPearsonTest, BoundsSolveTheirTailEquationsBySummation) {
  struct Case {
    int64_t k, n;
    double alpha;
  };
  for (const Case c : {Case{3, 40, 0.025}, Case{17, 1000, 0.025}, Case{990, 1000, 0.025},
                       Case{250, 2000, 1e-4}, Case{1, 2000, 0.025}}) {
    const double upper = ClopperPearsonUpper(c.k, c.n, c.alpha);
    const double lower = ClopperPearsonLower(c.k, c.n, c.alpha);
    // P[Bin(n, upper) <= k] = alpha and P[Bin(n, lower) >= k] = alpha.
    EXPECT_NEAR(static_cast<double>(1.0L - DirectTail(c.n, upper, c.k + 1)), c.alpha, 1e-10 * c.alpha + 1e-15)
        << c.k << "/" << c.n;
    EXPECT_NEAR(static_cast<double>(DirectTail(c.n, lower, c.k)), c.alpha, 1e-10 * c.alpha + 1e-15)
        << c.k << "/" << c.n;
    EXPECT_LT(lower, static_cast<double>(c.k) / c.n);
    EXPECT_GT(upper, static_cast<double>(c.k) / c.n);
  }
}

TEST(ClopperPearsonTest, CoverageIsAtLeastTheConfidenceLevel) {
  // 4,000 binomial samples per p: the one-sided upper bound at alpha = 0.05 misses p at most 5% of the
  // time (conservative: fewer), the two-sided 90% interval at most 10%. Allowance: 3 standard errors.
  RandomStream stream(StreamKey{11, 0, 0, StreamPurpose::kTest});
  for (const double p : {0.003, 0.1, 0.5}) {
    const int64_t n = 200;
    const int reps = 4000;
    int upper_misses = 0;
    int interval_misses = 0;
    for (int rep = 0; rep < reps; ++rep) {
      int64_t k = 0;
      for (int64_t j = 0; j < n; ++j) k += stream.NextUniform() < p;
      upper_misses += ClopperPearsonUpper(k, n, 0.05) < p;
      const ProportionInterval ci = ClopperPearsonInterval(k, n, 0.10);
      interval_misses += ci.lower > p || ci.upper < p;
    }
    const double se = std::sqrt(0.05 * 0.95 / reps);
    EXPECT_LE(upper_misses / static_cast<double>(reps), 0.05 + 3 * se) << p;
    EXPECT_LE(interval_misses / static_cast<double>(reps), 0.10 + 3 * std::sqrt(0.1 * 0.9 / reps)) << p;
  }
}

}  // namespace
}  // namespace asyncdp::audit
