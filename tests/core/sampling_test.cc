// Tests of core/sampling.h: the three mini-batch samplers of docs/theory.md §2
#include "core/sampling.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "core/error.h"

namespace asyncdp {
namespace {

bool SortedUniqueInRange(const std::vector<int64_t>& batch, int64_t n) {
  for (size_t i = 0; i < batch.size(); ++i) {
    if (batch[i] < 0 || batch[i] >= n) return false;
    if (i > 0 && batch[i] <= batch[i - 1]) return false;
  }
  return true;
}

TEST(SamplerTest, EachSamplerNamesItsModelAndNeighbourRelation) {
  const auto poisson = MakeSampler(SamplingModel::kPoisson, 100, 1, 0);
  const auto fixed = MakeSampler(SamplingModel::kFixedSizeWithoutReplacement, 100, 1, 0);
  const auto shuffle = MakeSampler(SamplingModel::kShuffle, 100, 1, 0);
  EXPECT_EQ(poisson->model(), SamplingModel::kPoisson);
  EXPECT_EQ(poisson->neighbours(), NeighbourRelation::kAddRemove);
  EXPECT_EQ(fixed->model(), SamplingModel::kFixedSizeWithoutReplacement);
  EXPECT_EQ(fixed->neighbours(), NeighbourRelation::kReplaceOne);
  EXPECT_EQ(shuffle->model(), SamplingModel::kShuffle);
  EXPECT_EQ(shuffle->neighbours(), NeighbourRelation::kReplaceOne);
  EXPECT_EQ(fixed->num_records(), 100);
}

TEST(ParseSamplingModelTest, RoundTripsAndRejectsUnknownNames) {
  for (const auto m : {SamplingModel::kPoisson, SamplingModel::kFixedSizeWithoutReplacement, SamplingModel::kShuffle}) {
    EXPECT_EQ(ParseSamplingModel(ToString(m), "dp.sampling"), m);
  }
  try {
    ParseSamplingModel("bernoulli", "dp.sampling");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where(), "dp.sampling");
  }
}

TEST(PoissonSamplerTest, InclusionFrequencyOfEveryRecordIsQ) {
  // Each record's count over R rounds is Binomial(R, q): mean 400, sd 19. Allow 5 sd per record.
  const int64_t n = 200, s = 20, rounds = 4000;
  const double q = static_cast<double>(s) / n;
  PoissonSampler sampler(n, 17, 3);
  std::vector<int64_t> counts(n, 0), batch;
  int64_t total = 0;
  double size_sq = 0;
  for (uint32_t round = 0; round < rounds; ++round) {
    sampler.Sample(round, s, batch);
    ASSERT_TRUE(SortedUniqueInRange(batch, n)) << round;
    for (const int64_t r : batch) ++counts[r];
    total += static_cast<int64_t>(batch.size());
    size_sq += static_cast<double>(batch.size()) * batch.size();
  }
  const double mean = rounds * q, sd = std::sqrt(rounds * q * (1 - q));
  for (int64_t r = 0; r < n; ++r) EXPECT_NEAR(counts[r], mean, 5 * sd) << "record " << r;
  // The batch size varies: Binomial(N, q), mean s = 20, variance Nq(1-q) = 18.
  const double mean_size = static_cast<double>(total) / rounds;
  EXPECT_NEAR(mean_size, s, 5 * std::sqrt(18.0 / rounds));
  EXPECT_NEAR(size_sq / rounds - mean_size * mean_size, 18.0, 2.0);
}

TEST(PoissonSamplerTest, GapsAreGeometricForTinyRates) {
  // q = 1e-4 over N = 10^6: the batch size is ~ Poisson(100); geometric skipping never visits the rest.
  std::vector<int64_t> batch;
  double total = 0;
  const int rounds = 200;
  for (uint32_t round = 0; round < rounds; ++round) {
    SamplePoisson(StreamKey{5, 0, round, StreamPurpose::kBatchSampling}, 1000000, 1e-4, batch);
    ASSERT_TRUE(SortedUniqueInRange(batch, 1000000));
    total += batch.size();
  }
  EXPECT_NEAR(total / rounds, 100.0, 5 * std::sqrt(100.0 / rounds));
}

TEST(PoissonSamplerTest, RateZeroAndOneAreExact) {
  std::vector<int64_t> batch = {42};
  SamplePoisson(StreamKey{1, 0, 0, StreamPurpose::kBatchSampling}, 10, 0.0, batch);
  EXPECT_TRUE(batch.empty());
  PoissonSampler sampler(10, 1, 0);
  sampler.Sample(0, 10, batch);  // q = 1
  EXPECT_EQ(batch, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(PoissonSamplerTest, BatchDependsOnlyOnSeedClientAndRound) {
  PoissonSampler a(1000, 9, 2), b(1000, 9, 2), other_client(1000, 9, 3);
  std::vector<int64_t> x, y, z;
  a.Sample(5, 50, x);
  b.Sample(0, 50, y);  // b has a different history
  b.Sample(5, 50, y);
  other_client.Sample(5, 50, z);
  EXPECT_EQ(x, y);
  EXPECT_NE(x, z);
  a.Sample(6, 50, y);
  EXPECT_NE(x, y);
}

TEST(FixedSizeSamplerTest, DrawsExactlySDistinctRecordsUniformly) {
  const int64_t n = 50, s = 10, rounds = 5000;
  FixedSizeSampler sampler(n, 4, 1);
  std::vector<int64_t> counts(n, 0), batch;
  for (uint32_t round = 0; round < rounds; ++round) {
    sampler.Sample(round, s, batch);
    ASSERT_EQ(static_cast<int64_t>(batch.size()), s);
    std::vector<int64_t> sorted = batch;
    std::sort(sorted.begin(), sorted.end());
    ASSERT_TRUE(SortedUniqueInRange(sorted, n)) << round;
    for (const int64_t r : batch) ++counts[r];
  }
  const double p = static_cast<double>(s) / n, mean = rounds * p, sd = std::sqrt(rounds * p * (1 - p));
  for (int64_t r = 0; r < n; ++r) EXPECT_NEAR(counts[r], mean, 5 * sd) << "record " << r;
}

TEST(FixedSizeSamplerTest, BatchDependsOnlyOnItsKeyAndEdgeSizesWork) {
  FixedSizeSampler a(100, 8, 0), b(100, 8, 0);
  std::vector<int64_t> x, y;
  for (uint32_t round = 0; round < 20; ++round) b.Sample(round, 37, y);  // history must not matter
  a.Sample(7, 26, x);
  b.Sample(7, 26, y);
  EXPECT_EQ(x, y);
  a.Sample(0, 0, x);
  EXPECT_TRUE(x.empty());
  a.Sample(1, 100, x);  // s = N: a permutation of everything
  std::sort(x.begin(), x.end());
  EXPECT_EQ(x.size(), 100u);
  EXPECT_TRUE(SortedUniqueInRange(x, 100));
}

TEST(SamplerTest, SteadyStateRoundsDoNotReallocateTheBatch) {
  for (const auto model : {SamplingModel::kFixedSizeWithoutReplacement, SamplingModel::kShuffle}) {
    auto sampler = MakeSampler(model, 1000, 3, 0);
    std::vector<int64_t> batch;
    sampler->Sample(0, 26, batch);
    const int64_t* data = batch.data();
    for (uint32_t round = 1; round < 200; ++round) {
      sampler->Sample(round, 26, batch);
      ASSERT_EQ(batch.data(), data) << ToString(model) << " round " << round;
    }
  }
  // Poisson sizes vary; once the capacity covers them, no reallocation.
  PoissonSampler poisson(1000, 3, 0);
  std::vector<int64_t> batch;
  batch.reserve(100);
  const int64_t* data = batch.data();
  for (uint32_t round = 0; round < 200; ++round) {
    poisson.Sample(round, 26, batch);
    ASSERT_EQ(batch.data(), data);
  }
}

TEST(ShuffleSamplerTest, EveryEpochUsesEveryRecordOnceInDisjointBatches) {
  const int64_t n = 10, s = 4;  // batches 4, 4, 2 per epoch: a batch never spans two epochs
  ShuffleSampler sampler(n, 12, 0);
  std::vector<int64_t> batch;
  std::vector<std::vector<int64_t>> epochs;
  uint32_t round = 0;
  for (int epoch = 0; epoch < 3; ++epoch) {
    std::vector<int64_t> order;
    for (const int64_t expected_size : {4, 4, 2}) {
      sampler.Sample(round++, s, batch);
      EXPECT_EQ(static_cast<int64_t>(batch.size()), expected_size);
      EXPECT_EQ(sampler.epoch(), static_cast<uint32_t>(epoch));
      order.insert(order.end(), batch.begin(), batch.end());
    }
    std::vector<int64_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
    epochs.push_back(order);
  }
  EXPECT_NE(epochs[0], epochs[1]);  // a fresh permutation each epoch
  EXPECT_NE(epochs[1], epochs[2]);
  // Same seed and client: same permutations.
  ShuffleSampler again(n, 12, 0);
  again.Sample(0, 10, batch);
  EXPECT_EQ(batch, epochs[0]);
}

TEST(ShuffleSamplerTest, PermutationsAreUniform) {
  // Position of record 0 in epoch e's permutation: uniform over N = 5 slots across 5000 epochs.
  const int64_t n = 5;
  ShuffleSampler sampler(n, 21, 0);
  std::vector<int> position_counts(n, 0);
  std::vector<int64_t> batch;
  const int epochs = 5000;
  for (uint32_t round = 0; round < epochs; ++round) {
    sampler.Sample(round, n, batch);
    ++position_counts[std::find(batch.begin(), batch.end(), 0) - batch.begin()];
  }
  const double mean = epochs / 5.0, sd = std::sqrt(epochs * 0.2 * 0.8);
  for (const int c : position_counts) EXPECT_NEAR(c, mean, 5 * sd);
}

}  // namespace
}  // namespace asyncdp
