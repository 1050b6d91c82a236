// PldPrefixComposer (core/accounting/pld/pld_prefix.h): the whole schedule as ComposedPld gives it bit for
// bit; parts as upper bounds of the truth (independent oracle, tests/core/accounting/oracle) and within the
// discretisation's second-order error of their own composition; anything not a part declined.
#include "core/accounting/pld/pld_prefix.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "core/accounting/pld/pld.h"
#include "tests/core/accounting/oracle/hockey_stick.h"

namespace asyncdp::accounting {
namespace {

constexpr double kDeltas[] = {1e-3, 1e-5, 1.5e-4, 1e-8};

TEST(PldPrefixComposer, TheWholeScheduleIsComposedPldBitForBit) {
  const std::vector<std::pair<Schedule, SamplingModel>> cases = {
      {{{26.0 / 6512, 0.8016, 1253}}, SamplingModel::kPoisson},                         // Table 3 at epsilon = 1
      {{{0.01, 2.0, 40}, {0.02, 1.0, 30}, {0.01, 1.5, 20}}, SamplingModel::kPoisson},  // heterogeneous
      {{{0.05, 1.2, 100}}, SamplingModel::kFixedSizeWithoutReplacement},
  };
  for (const auto& [whole, sampling] : cases) {
    PldOptions options;
    options.compute_lower_bound = false;
    const ComposedPld direct(whole, sampling, options);
    const PldPrefixComposer composer(whole, sampling, options);
    const std::optional<ComposedPld> composed = composer.Compose(whole);
    ASSERT_TRUE(composed.has_value());
    EXPECT_EQ(composed->fft_size(), direct.fft_size());
    EXPECT_EQ(composed->discretization(), direct.discretization());
    for (double delta : kDeltas) EXPECT_EQ(composed->EpsilonUpper(delta), direct.EpsilonUpper(delta)) << delta;
    for (double eps : {0.0, 0.3, 1.0, 4.0}) EXPECT_EQ(composed->DeltaUpper(eps), direct.DeltaUpper(eps)) << eps;
  }
}

TEST(PldPrefixComposer, PartsAreUpperBoundsOfTheTrueEpsilon) {
  // The oracle integrates the hockey-stick divergence of the worst-case pair composed `rounds` times.
  const double q = 0.2, sigma = 1.0, delta = 1e-5;
  const PldPrefixComposer composer({{q, sigma, 3}}, SamplingModel::kPoisson);
  for (int rounds : {1, 2}) {
    const std::optional<ComposedPld> part = composer.Compose({{q, sigma, rounds}});
    ASSERT_TRUE(part.has_value());
    const double truth = oracle::TrueEpsilon(oracle::PoissonPairs(q, sigma), rounds, delta);
    const double eps = part->EpsilonUpper(delta);
    EXPECT_GE(eps, truth * (1 - 1e-6)) << rounds;
    EXPECT_LE(eps, truth * 1.01 + 1e-3) << rounds;
  }
}

TEST(PldPrefixComposer, PartsAgreeWithTheirOwnComposition) {
  // Table 3's schedule at the evaluation points of a run: the part's own ComposedPld brackets the truth
  // with [lower, upper]; the part composed on the whole's grid is an upper bound as tight as the direct one.
  const double q = 26.0 / 6512, sigma = 0.8016, delta = 1.0 / 6513;
  const PldPrefixComposer composer({{q, sigma, 1253}}, SamplingModel::kPoisson);
  for (int64_t rounds : {1, 62, 620, 1240}) {
    const std::optional<ComposedPld> part = composer.Compose({{q, sigma, rounds}});
    ASSERT_TRUE(part.has_value()) << rounds;
    const ComposedPld own({{q, sigma, rounds}}, SamplingModel::kPoisson);
    const double eps = part->EpsilonUpper(delta);
    EXPECT_GE(eps, own.EpsilonLower(delta)) << rounds;
    EXPECT_NEAR(eps, own.EpsilonUpper(delta), 1e-4 * own.EpsilonUpper(delta)) << rounds;
  }
  // Rounds in any order and groups the part skips: a part of a heterogeneous whole.
  const Schedule whole = {{0.01, 2.0, 40}, {0.02, 1.0, 30}, {0.01, 1.5, 20}};
  const PldPrefixComposer mixed(whole, SamplingModel::kPoisson);
  const Schedule part = {{0.01, 1.5, 5}, {0.01, 2.0, 40}, {0.01, 1.5, 5}};
  const std::optional<ComposedPld> composed = mixed.Compose(part);
  ASSERT_TRUE(composed.has_value());
  const ComposedPld own(part, SamplingModel::kPoisson);
  EXPECT_GE(composed->EpsilonUpper(1e-5), own.EpsilonLower(1e-5));
  EXPECT_NEAR(composed->EpsilonUpper(1e-5), own.EpsilonUpper(1e-5), 1e-3 * own.EpsilonUpper(1e-5));
}

TEST(PldPrefixComposer, DeclinesWhatIsNotAPart) {
  const PldPrefixComposer composer({{0.01, 1.0, 100}, {0.02, 1.0, 10}}, SamplingModel::kPoisson);
  EXPECT_FALSE(composer.Compose({{0.01, 1.0, 101}}).has_value());                    // more rounds
  EXPECT_FALSE(composer.Compose({{0.02, 1.0, 6}, {0.02, 1.0, 5}}).has_value());      // more, split
  EXPECT_FALSE(composer.Compose({{0.03, 1.0, 1}}).has_value());                      // another q
  EXPECT_FALSE(composer.Compose({{0.01, 1.1, 1}}).has_value());                      // another sigma
  // No rounds: the loss is 0, delta(eps) = 0.
  const std::optional<ComposedPld> none = composer.Compose({});
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->EpsilonUpper(1e-9), 0.0);
  // Nothing stored when the spectra would exceed the memory given: every part declined.
  const PldPrefixComposer small({{0.01, 1.0, 100}}, SamplingModel::kPoisson, {}, 1024);
  EXPECT_FALSE(small.Compose({{0.01, 1.0, 10}}).has_value());
}

}  // namespace
}  // namespace asyncdp::accounting
