// Tests of AllocationSampler (core/sampling.h): random allocation ("balls in bins", Feldman & Shenfeld 2025
// §2.1) — every record joins exactly k uniformly chosen rounds of each window of m rounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "core/sampling.h"

namespace asyncdp {
namespace {

// rounds[r] = the rounds of window `window` record r was allocated to (in increasing order).
std::vector<std::vector<int64_t>> RoundsOfRecords(BatchSampler& sampler, int64_t window, int64_t m) {
  std::vector<std::vector<int64_t>> rounds(static_cast<size_t>(sampler.num_records()));
  std::vector<int64_t> batch;
  for (int64_t j = 0; j < m; ++j) {
    sampler.Sample(static_cast<uint32_t>(window * m + j), 0, batch);
    for (size_t i = 0; i < batch.size(); ++i) {
      EXPECT_GE(batch[i], 0);
      EXPECT_LT(batch[i], sampler.num_records());
      if (i > 0) {
        EXPECT_LT(batch[i - 1], batch[i]) << "a batch is sorted and has no repeated record";
      }
      rounds[static_cast<size_t>(batch[i])].push_back(j);
    }
  }
  return rounds;
}

TEST(AllocationSamplerTest, NamesItsModelAndAddRemoveNeighbours) {
  const auto sampler = MakeSampler(SamplingModel::kRandomAllocation, 100, 1, 0, {10, 2});
  EXPECT_EQ(sampler->model(), SamplingModel::kRandomAllocation);
  EXPECT_EQ(sampler->neighbours(), NeighbourRelation::kAddRemove);
  EXPECT_EQ(ParseSamplingModel("random_allocation", "dp.sampling"), SamplingModel::kRandomAllocation);
}

TEST(AllocationSamplerTest, EveryRecordJoinsExactlyKDistinctRoundsOfEveryWindow) {
  // Expectation: in each window, each record appears in exactly k of the m batches (k = 1, 3, m).
  for (const auto& [m, k] : {std::pair<int64_t, int64_t>{7, 1}, {7, 3}, {5, 5}, {40, 2}}) {
    AllocationSampler sampler(123, 99, 4, {m, k});
    for (int64_t window : {0, 1, 5}) {
      const auto rounds = RoundsOfRecords(sampler, window, m);
      for (const auto& r : rounds) EXPECT_EQ(static_cast<int64_t>(r.size()), k) << "m=" << m << " k=" << k;
    }
  }
}

TEST(AllocationSamplerTest, RoundSizesAverageNkOverMWithBinomialSpread) {
  // Expectation: a round's batch size is Binomial(N, k/m): the window total is N k exactly, and over many
  // rounds the sizes have mean N k / m and variance N (k/m)(1 - k/m) (within 5%).
  const int64_t n = 2000, m = 50, k = 2;
  AllocationSampler sampler(n, 7, 0, {m, k});
  EXPECT_DOUBLE_EQ(sampler.expected_batch(), 80.0);
  std::vector<int64_t> batch;
  double sum = 0.0, sum_sq = 0.0;
  const int64_t windows = 40;
  for (int64_t w = 0; w < windows; ++w) {
    int64_t window_total = 0;
    for (int64_t j = 0; j < m; ++j) {
      sampler.Sample(static_cast<uint32_t>(w * m + j), 0, batch);
      const auto size = static_cast<double>(batch.size());
      window_total += static_cast<int64_t>(batch.size());
      sum += size;
      sum_sq += size * size;
    }
    EXPECT_EQ(window_total, n * k);
  }
  const double count = static_cast<double>(windows * m);
  const double mean = sum / count, variance = sum_sq / count - mean * mean;
  EXPECT_NEAR(mean, 80.0, 1e-9);  // exact: every window places N k records
  const double p = static_cast<double>(k) / m;
  EXPECT_NEAR(variance, n * p * (1.0 - p), 0.05 * n * p * (1.0 - p) + 8.0);
}

TEST(AllocationSamplerTest, KSubsetsAreUniform) {
  // Expectation: with m = 4, k = 2 each of the 6 pairs of rounds is a record's allocation with probability
  // 1/6; over 300 records x 200 windows = 60000 draws each count is within 5 sd of 10000.
  const int64_t n = 300, m = 4, k = 2, windows = 200;
  AllocationSampler sampler(n, 11, 3, {m, k});
  std::map<std::pair<int64_t, int64_t>, int64_t> pairs;
  for (int64_t w = 0; w < windows; ++w) {
    for (const auto& r : RoundsOfRecords(sampler, w, m)) ++pairs[{r[0], r[1]}];
  }
  ASSERT_EQ(pairs.size(), 6u);
  const double draws = static_cast<double>(n * windows), expected = draws / 6.0;
  const double sd = std::sqrt(draws * (1.0 / 6.0) * (5.0 / 6.0));
  for (const auto& [pair, c] : pairs) EXPECT_NEAR(static_cast<double>(c), expected, 5.0 * sd);
}

TEST(AllocationSamplerTest, EachRecordsRoundIsUniformAcrossWindows) {
  // Expectation (k = 1): over 4000 windows a fixed record lands in each of m = 8 rounds ~ 500 times
  // (Binomial sd ~ 21; within 5 sd), and consecutive windows are not copies of each other.
  const int64_t m = 8, windows = 4000;
  AllocationSampler sampler(5, 3, 1, {m, 1});
  std::vector<int64_t> hits(m, 0);
  int64_t same_as_previous = 0, previous = -1;
  for (int64_t w = 0; w < windows; ++w) {
    const int64_t round = RoundsOfRecords(sampler, w, m)[2][0];
    ++hits[static_cast<size_t>(round)];
    same_as_previous += round == previous ? 1 : 0;
    previous = round;
  }
  const double sd = std::sqrt(windows * (1.0 / m) * (1.0 - 1.0 / m));
  for (int64_t h : hits) EXPECT_NEAR(static_cast<double>(h), windows / static_cast<double>(m), 5.0 * sd);
  EXPECT_NEAR(static_cast<double>(same_as_previous), windows / static_cast<double>(m), 5.0 * sd);
}

TEST(AllocationSamplerTest, DeterministicBySeedAndIndependentOfRequestOrder) {
  // Expectation: a batch is a function of (seed, client, round): two samplers agree, a sampler asked for
  // rounds backwards (re-tabulating windows) agrees, and another seed or client gives other batches.
  const int64_t n = 500, m = 10, k = 3, rounds = 35;  // 3.5 windows: the last one is a prefix
  AllocationSampler a(n, 42, 2, {m, k}), b(n, 42, 2, {m, k}), backwards(n, 42, 2, {m, k});
  AllocationSampler other_seed(n, 43, 2, {m, k}), other_client(n, 42, 3, {m, k});
  std::vector<std::vector<int64_t>> forward(rounds);
  std::vector<int64_t> x, y;
  int64_t differ_seed = 0, differ_client = 0;
  for (int64_t r = 0; r < rounds; ++r) {
    a.Sample(static_cast<uint32_t>(r), 0, forward[static_cast<size_t>(r)]);
    b.Sample(static_cast<uint32_t>(r), 0, x);
    EXPECT_EQ(x, forward[static_cast<size_t>(r)]);
    other_seed.Sample(static_cast<uint32_t>(r), 0, x);
    other_client.Sample(static_cast<uint32_t>(r), 0, y);
    differ_seed += x != forward[static_cast<size_t>(r)] ? 1 : 0;
    differ_client += y != forward[static_cast<size_t>(r)] ? 1 : 0;
  }
  for (int64_t r = rounds - 1; r >= 0; --r) {
    backwards.Sample(static_cast<uint32_t>(r), 0, x);
    EXPECT_EQ(x, forward[static_cast<size_t>(r)]) << "round " << r;
  }
  EXPECT_EQ(differ_seed, rounds);
  EXPECT_EQ(differ_client, rounds);
}

TEST(AllocationSamplerTest, SmallDataGivesEmptyRounds) {
  // Expectation: 3 records over m = 12 rounds fill at most 3 rounds, so at least 9 batches are empty.
  AllocationSampler sampler(3, 5, 0, {12, 1});
  std::vector<int64_t> batch = {99};
  int64_t empty = 0;
  for (uint32_t r = 0; r < 12; ++r) {
    sampler.Sample(r, 26, batch);
    empty += batch.empty() ? 1 : 0;
  }
  EXPECT_GE(empty, 9);
}

}  // namespace
}  // namespace asyncdp
