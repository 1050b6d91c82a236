#include "sim/checkin/checkin_plan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"

namespace asyncdp::sim::checkin {
namespace {

CheckInOptions Fixed(int64_t n, int64_t m, double p0, uint64_t seed) {
  CheckInOptions o;
  o.variant = Variant::kFixedWindow;
  o.clients = n;
  o.steps = m;
  o.participation = p0;
  o.seed = seed;
  return o;
}

TEST(CheckInPlanTest, EveryClientChecksInAtMostOncePerWindow) {
  for (const CheckInOptions& o : {Fixed(5000, 50, 0.7, 3), Fixed(100000, 1000, 1.0, 4)}) {
    for (int64_t window = 0; window < 2; ++window) {
      const WindowCheckIns w = DrawWindowCheckIns(o, window);
      std::vector<int> seen(static_cast<size_t>(o.clients), 0);
      for (int32_t j : w.members) ++seen[static_cast<size_t>(j)];
      int64_t in = 0;
      for (int64_t j = 0; j < o.clients; ++j) {
        ASSERT_LE(seen[static_cast<size_t>(j)], 1) << "client " << j;
        // The client is at the step its own stream chose, and only there.
        const int64_t step = CheckInStep(o, j, window);
        EXPECT_EQ(seen[static_cast<size_t>(j)], step >= 0 ? 1 : 0);
        in += seen[static_cast<size_t>(j)];
      }
      EXPECT_EQ(in, w.participating);
      EXPECT_EQ(static_cast<int64_t>(w.members.size()), w.participating);
    }
  }
}

TEST(CheckInPlanTest, EmptyStepsMatchTheirExpectationWithinFourStandardDeviations) {
  // Fixed window: E[empty] = m (1 - p0/m)^n. Averaged over 40 seeds the mean has sd / sqrt(40).
  struct Case {
    int64_t n, m;
    double p0;
  };
  for (const Case& c : {Case{1000, 1000, 1.0}, Case{2000, 1000, 0.5}, Case{300, 100, 0.2}}) {
    const double expected = ExpectedEmptySteps(c.n, c.m, c.p0);
    const double sd = std::sqrt(EmptyStepsVariance(c.n, c.m, c.p0));
    const int seeds = 40;
    double total = 0.0;
    for (int seed = 1; seed <= seeds; ++seed) {
      const WindowCheckIns w = DrawWindowCheckIns(Fixed(c.n, c.m, c.p0, static_cast<uint64_t>(seed)), 0);
      int64_t empty = 0;
      for (int64_t i = 0; i < c.m; ++i) empty += w.At(i).empty() ? 1 : 0;
      EXPECT_LE(std::abs(static_cast<double>(empty) - expected), 4.0 * sd + 1.0) << "seed " << seed;
      total += static_cast<double>(empty);
    }
    EXPECT_LE(std::abs(total / seeds - expected), 4.0 * sd / std::sqrt(static_cast<double>(seeds)))
        << "n=" << c.n << " m=" << c.m << " p0=" << c.p0;
  }
}

TEST(CheckInPlanTest, ExpectedEmptyStepsAgreesWithExactSmallCases) {
  // n = 1, p0 = 1: exactly m - 1 steps are empty (variance 0); n = 2, m = 2: P(both in one step) = 1/2.
  EXPECT_NEAR(ExpectedEmptySteps(1, 7, 1.0), 6.0, 1e-12);
  EXPECT_NEAR(EmptyStepsVariance(1, 7, 1.0), 0.0, 1e-12);
  EXPECT_NEAR(ExpectedEmptySteps(2, 2, 1.0), 0.5, 1e-12);
  EXPECT_NEAR(EmptyStepsVariance(2, 2, 1.0), 0.25, 1e-12);
}

TEST(CheckInPlanTest, WithFullParticipationEachClientIsAllocatedToOneUniformStep) {
  // p0 = 1, one record per client: random allocation (balls in bins). Every client is in exactly one
  // step; the counts of a step over seeds are Binomial(n, 1/m), and a client's step is uniform.
  const int64_t n = 200, m = 10;
  std::vector<double> client_zero(static_cast<size_t>(m), 0.0);
  std::vector<double> step_totals(static_cast<size_t>(m), 0.0);
  const int seeds = 500;
  for (int seed = 1; seed <= seeds; ++seed) {
    const CheckInOptions o = Fixed(n, m, 1.0, static_cast<uint64_t>(seed));
    const WindowCheckIns w = DrawWindowCheckIns(o, 0);
    ASSERT_EQ(w.participating, n);
    for (int64_t i = 0; i < m; ++i) step_totals[static_cast<size_t>(i)] += static_cast<double>(w.At(i).size());
    ++client_zero[static_cast<size_t>(CheckInStep(o, 0, 0))];
  }
  // Chi-square with m - 1 = 9 degrees of freedom: 99.99% quantile 33.7.
  double chi_steps = 0.0, chi_client = 0.0;
  const double per_step = static_cast<double>(n) * seeds / m;
  const double per_client = static_cast<double>(seeds) / m;
  for (int64_t i = 0; i < m; ++i) {
    chi_steps += std::pow(step_totals[static_cast<size_t>(i)] - per_step, 2) / per_step;
    chi_client += std::pow(client_zero[static_cast<size_t>(i)] - per_client, 2) / per_client;
  }
  EXPECT_LT(chi_steps, 33.7);
  EXPECT_LT(chi_client, 33.7);
}

TEST(CheckInPlanTest, SlidingWindowChecksInInsideTheClientsOwnWindow) {
  CheckInOptions o;
  o.variant = Variant::kSlidingWindow;
  o.clients = 3000;
  o.window_length = 40;
  o.warmup = 39;
  o.steps = 2000;
  o.participation = 0.8;
  o.seed = 9;
  for (int64_t j = 0; j < o.clients; ++j) {
    const int64_t step = CheckInStep(o, j, 0);
    if (step >= 0) {
      EXPECT_GE(step, j);
      EXPECT_LT(step, j + o.window_length);
    }
  }
  const WindowCheckIns w = DrawWindowCheckIns(o, 0);
  // Update steps 39 .. 2038: clients 0..38 may fall before, clients near 2038.. after the range.
  EXPECT_GT(w.out_of_range, 0);
  EXPECT_EQ(static_cast<int64_t>(w.members.size()) + w.out_of_range, w.participating);
  for (int64_t i = 0; i < o.steps; ++i) {
    for (int32_t j : w.At(i)) {
      EXPECT_GE(i + o.warmup, j);
      EXPECT_LT(i + o.warmup, j + o.window_length);
    }
  }
}

TEST(CheckInPlanTest, AHundredThousandClientsAreCompact) {
  const CheckInOptions o = Fixed(100000, 5000, 0.9, 11);
  const WindowCheckIns w = DrawWindowCheckIns(o, 0);
  EXPECT_EQ(w.steps(), 5000);
  EXPECT_NEAR(static_cast<double>(w.participating), 90000.0, 4.0 * std::sqrt(100000 * 0.9 * 0.1));
  EXPECT_LE(w.members.capacity(), static_cast<size_t>(100000));
}

}  // namespace
}  // namespace asyncdp::sim::checkin
