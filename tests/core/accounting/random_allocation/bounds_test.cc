// The single bounds: AM-GM add bound, decomposition factor.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "core/accounting/gaussian_mechanism.h"
#include "core/accounting/random_allocation/add_bound.h"
#include "core/accounting/random_allocation/decomposition.h"

namespace asyncdp::accounting {
namespace {

TEST(AllocationAddBoundTest, MultipliesTheShiftByTheNumberOfInstances) {
  // Spec R.3.5's Monte Carlo counterexample (m = 2, sigma = 0.7, J = 4, eps = 2.5): the true add profile is
  // about 0.356 (standard error 5e-4), above the single-shift value 0.342; the J-shift bound is 0.612.
  const double bound = AllocationAddDelta(2, 4, 0.7, 2.5);
  EXPECT_NEAR(bound, 0.612, 1e-3);
  EXPECT_GT(bound, 0.356 + 4 * 5e-4);
  const double single_shift = GaussianDelta(2.5 - 0.5 / (2 * 0.49), 0.7 * std::sqrt(2.0 / 4.0));
  EXPECT_NEAR(single_shift, 0.342, 1e-3);
  // And it is the inverse of the epsilon form.
  const double eps = AllocationAddEpsilon(1000, 7, 1.0, 1e-6);
  EXPECT_NEAR(AllocationAddDelta(1000, 7, 1.0, eps), 1e-6, 1e-9);
}

TEST(AllocationAddBoundTest, AbstentionIdentityReducesToTheFullParticipationBound) {
  for (double eps : {0.1, 0.7, 2.0}) {
    EXPECT_DOUBLE_EQ(CheckInAddDelta(50, 1.0, 1.0, eps), AllocationAddDelta(50, 1, 1.0, eps));
    EXPECT_LE(CheckInAddDelta(50, 1.0, 0.3, eps), CheckInAddDelta(50, 1.0, 1.0, eps));
  }
  // beta = 1 - e^eps (1 - p0) <= 0: the add direction has no mass left.
  EXPECT_EQ(CheckInAddDelta(50, 1.0, 0.3, std::log(1.0 / 0.7) + 1e-9), 0.0);
  EXPECT_LE(CheckInAddEpsilon(50, 1.0, 0.3, 1e-6), std::log(1.0 / 0.7));
}

TEST(DecompositionTest, GammaMatchesTheSpecValuesAndTheLimit) {
  // Spec R.6.3 at lambda = 1/t; [FS] §4.3: gamma -> e / (e - 1).
  EXPECT_NEAR(DecompositionGamma(10, 0.1), 1.53534, 1e-5);
  EXPECT_NEAR(DecompositionGamma(100, 0.01), 1.57737, 1e-5);
  EXPECT_NEAR(DecompositionGamma(1000, 0.001), 1.58152, 1e-5);
  EXPECT_NEAR(DecompositionGamma(1000000, 1e-6), std::numbers::e / (std::numbers::e - 1.0), 1e-6);
  EXPECT_DOUBLE_EQ(DecompositionGamma(5, 1.0), 1.0);
}

TEST(DecompositionTest, EpsilonAndDeltaFormsAgree) {
  const DecompositionBound bound(500, 1.0, 1.0);
  for (double delta : {1e-4, 1e-7}) {
    const double remove = bound.RemoveEpsilon(delta);
    EXPECT_LE(bound.RemoveDelta(remove * (1 + 1e-9)), delta * (1 + 1e-6));
    EXPECT_GT(bound.RemoveDelta(remove * 0.98), delta);
    const double add = bound.AddEpsilon(delta);
    EXPECT_LE(bound.AddDelta(add), delta);
  }
}

TEST(DecompositionTest, RejectsAnInvalidRate) {
  DecompositionOptions options;
  options.rate_scale = 0.0;
  EXPECT_ANY_THROW(DecompositionBound(10, 1.0, 1.0, options));
  options.rate_scale = 11.0;
  EXPECT_ANY_THROW(DecompositionBound(10, 1.0, 1.0, options));
}

}  // namespace
}  // namespace asyncdp::accounting
