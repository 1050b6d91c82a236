#include "core/accounting/pld/composed_pld_cache.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/accounting/make_accountant.h"

namespace asyncdp::accounting {
namespace {

const Schedule kRounds = {{0.01, 1.1, 300}};

TEST(ComposedPldCacheTest, AnEqualRequestGetsTheSameCompositionAndADifferentOneItsOwn) {
  // Expectation: a repeated request is served by the composition made for the first; a different
  // schedule, sampler or option is composed anew, and every answer equals a fresh composition's.
  ComposedPldCache cache;
  PldOptions options;
  options.compute_lower_bound = false;
  const auto first = cache.Get(kRounds, SamplingModel::kPoisson, options);
  EXPECT_EQ(cache.Get(kRounds, SamplingModel::kPoisson, options), first);
  const Schedule more = {{0.01, 1.1, 301}};
  const auto longer = cache.Get(more, SamplingModel::kPoisson, options);
  EXPECT_NE(longer, first);
  EXPECT_GT(longer->EpsilonUpper(1e-6), first->EpsilonUpper(1e-6));
  const auto fixed = cache.Get(kRounds, SamplingModel::kFixedSizeWithoutReplacement, options);
  EXPECT_NE(fixed, first);
  PldOptions finer = options;
  finer.relative_discretization = 0.05;
  EXPECT_NE(cache.Get(kRounds, SamplingModel::kPoisson, finer), first);
  EXPECT_EQ(first->EpsilonUpper(1e-6),
            ComposedPld(kRounds, SamplingModel::kPoisson, options).EpsilonUpper(1e-6));
  EXPECT_EQ(fixed->EpsilonUpper(1e-6),
            ComposedPld(kRounds, SamplingModel::kFixedSizeWithoutReplacement, options).EpsilonUpper(1e-6));
}

TEST(ComposedPldCacheTest, ACompositionWithTheLowerBoundServesAnUpperOnlyRequestButNotTheReverse) {
  ComposedPldCache cache;
  PldOptions upper_only;
  upper_only.compute_lower_bound = false;
  const auto upper = cache.Get(kRounds, SamplingModel::kPoisson, upper_only);
  PldOptions both = upper_only;
  both.compute_lower_bound = true;
  const auto with_lower = cache.Get(kRounds, SamplingModel::kPoisson, both);
  EXPECT_NE(with_lower, upper);  // the upper-only composition has no lower bound to give
  EXPECT_TRUE(with_lower->has_lower_bound());
  EXPECT_EQ(with_lower->EpsilonUpper(1e-6), upper->EpsilonUpper(1e-6));  // the upper bound composed alike
  EXPECT_EQ(cache.Get(kRounds, SamplingModel::kPoisson, upper_only)->EpsilonUpper(1e-6),
            upper->EpsilonUpper(1e-6));
}

TEST(ComposedPldCacheTest, KeepsTheFourMostRecentCompositions) {
  ComposedPldCache cache;
  const auto oldest = cache.Get({{0.01, 1.0, 10}}, SamplingModel::kPoisson, {});
  for (int64_t count = 11; count <= 14; ++count) cache.Get({{0.01, 1.0, count}}, SamplingModel::kPoisson, {});
  EXPECT_NE(cache.Get({{0.01, 1.0, 10}}, SamplingModel::kPoisson, {}), oldest);  // evicted, composed again
  const auto recent = cache.Get({{0.01, 1.0, 14}}, SamplingModel::kPoisson, {});
  EXPECT_EQ(cache.Get({{0.01, 1.0, 14}}, SamplingModel::kPoisson, {}), recent);
}

TEST(ComposedPldCacheTest, ThePldAccountantReportsTheLowerBoundOnlyWhenAskedEvenFromACachedComposition) {
  // Expectation: an upper-only accountant served by a cached composition that holds the lower bound does
  // not report it (its callers ask for the lower bound where they state it).
  AccountantOptions options;
  options.pld.compute_lower_bound = true;
  auto both = MakeAccountant(AccountantKind::kPld, options);
  both->AddSchedule(kRounds);
  const EpsilonResult full = both->Epsilon(1e-6);
  ASSERT_FALSE(std::isnan(full.epsilon_lower));
  options.pld.compute_lower_bound = false;
  auto upper = MakeAccountant(AccountantKind::kPld, options);
  upper->AddSchedule(kRounds);
  const EpsilonResult r = upper->Epsilon(1e-6);
  EXPECT_EQ(r.epsilon, full.epsilon);
  EXPECT_TRUE(std::isnan(r.epsilon_lower));
}

}  // namespace
}  // namespace asyncdp::accounting
