// Each sampler draws its batches by the law its accountant assumes (docs/theory.md §4, §7), tested as a law,
// not as a rate: what users of DP-SGD tools most often get wrong is a sampler that has the right rate but
// another law (fixed-size batches accounted as Poisson; a "Poisson" sampler whose inclusions are not
// independent). Each statistic below is first shown to reject the wrong sampler, so the test can fail.
//   Poisson (add/remove):   inclusions independent across records and rounds, each with probability q;
//                           the batch size is Binomial(N, q).
//   fixed size (replace-one): exactly s distinct records, every s-subset equally likely.
//   random allocation:      every record in exactly k of the window's m rounds, the k-subset uniform and
//                           independent across records.
// And every sampler/accountant pair either has a theorem behind it or is refused with a reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "core/accounting/account.h"
#include "core/accounting/dp_event.h"
#include "core/sampling.h"

namespace asyncdp {
namespace {

constexpr int64_t kN = 20;
constexpr int64_t kS = 10;
constexpr uint32_t kRounds = 20000;

// Pearson's chi-square statistic of observed counts against expected counts (cells with expectation >= 5).
double ChiSquare(const std::vector<double>& observed, const std::vector<double>& expected) {
  double chi = 0.0;
  for (size_t i = 0; i < observed.size(); ++i) {
    if (expected[i] < 5.0) continue;
    chi += (observed[i] - expected[i]) * (observed[i] - expected[i]) / expected[i];
  }
  return chi;
}

// A chi-square statistic with `dof` degrees of freedom is beyond its 1 − 10⁻⁶ quantile when it exceeds
// dof + 7.5 sqrt(2 dof) + 25 (a conservative Wilson–Hilferty-style bound for dof ≤ 200).
bool RejectsAtOneInAMillion(double chi, int dof) { return chi > dof + 7.5 * std::sqrt(2.0 * dof) + 25.0; }

double BinomialPmf(int64_t n, int64_t k, double p) {
  return std::exp(std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0) + k * std::log(p) +
                  (n - k) * std::log1p(-p));
}

// Batch-size histogram of `rounds` batches against Binomial(N, q): the chi-square statistic.
double BatchSizeChiSquare(BatchSampler& sampler, double q) {
  std::vector<double> observed(kN + 1, 0.0), expected(kN + 1, 0.0);
  std::vector<int64_t> batch;
  for (uint32_t round = 0; round < kRounds; ++round) {
    sampler.Sample(round, kS, batch);
    observed[batch.size()] += 1.0;
  }
  for (int64_t k = 0; k <= kN; ++k) expected[k] = kRounds * BinomialPmf(kN, k, q);
  return ChiSquare(observed, expected);
}

// Independence of inclusions: the largest |z| over the pairs (i, j) of records in one round, and over
// (record in round t, same record in round t + 1), of the co-inclusion count against R q².
double LargestCoInclusionZ(BatchSampler& sampler, double q) {
  std::vector<std::vector<double>> pair(kN, std::vector<double>(kN, 0.0));
  std::vector<double> again(kN, 0.0);
  std::vector<int64_t> batch;
  std::vector<bool> previous(kN, false), now(kN, false);
  for (uint32_t round = 0; round < kRounds; ++round) {
    sampler.Sample(round, kS, batch);
    std::fill(now.begin(), now.end(), false);
    for (int64_t r : batch) now[r] = true;
    for (int64_t i = 0; i < kN; ++i) {
      if (!now[i]) continue;
      if (round > 0 && previous[i]) again[i] += 1.0;
      for (int64_t j = i + 1; j < kN; ++j) pair[i][j] += now[j] ? 1.0 : 0.0;
    }
    previous = now;
  }
  const double p = q * q;
  const double sd_pair = std::sqrt(kRounds * p * (1 - p)), sd_again = std::sqrt((kRounds - 1) * p * (1 - p));
  double worst = 0.0;
  for (int64_t i = 0; i < kN; ++i) {
    worst = std::max(worst, std::fabs(again[i] - (kRounds - 1) * p) / sd_again);
    for (int64_t j = i + 1; j < kN; ++j) worst = std::max(worst, std::fabs(pair[i][j] - kRounds * p) / sd_pair);
  }
  return worst;
}

// 190 pairs and 20 lags: 6 sd is beyond every one of them with probability > 1 − 10⁻⁶.
constexpr double kIndependentZ = 6.0;

TEST(SamplerLaw, PoissonInclusionsAreIndependentWithABinomialBatchSize) {
  const double q = static_cast<double>(kS) / kN;
  PoissonSampler poisson(kN, 101, 0);
  const double chi = BatchSizeChiSquare(poisson, q);
  EXPECT_FALSE(RejectsAtOneInAMillion(chi, kN)) << "chi-square " << chi;
  PoissonSampler again(kN, 102, 0);
  EXPECT_LT(LargestCoInclusionZ(again, q), kIndependentZ);
  // The same statistics reject a fixed-size sampler of the same rate: its batch size never varies and two
  // records are in together with probability s(s−1)/(N(N−1)) = 0.237, not q² = 0.25.
  FixedSizeSampler fixed(kN, 101, 0);
  EXPECT_TRUE(RejectsAtOneInAMillion(BatchSizeChiSquare(fixed, q), kN));
  FixedSizeSampler fixed_again(kN, 102, 0);
  EXPECT_GT(LargestCoInclusionZ(fixed_again, q), kIndependentZ);
}

TEST(SamplerLaw, FixedSizeBatchesAreUniformOverSubsets) {
  // N = 6, s = 3: 20 subsets, each with probability 1/20.
  const int64_t n = 6, s = 3;
  FixedSizeSampler sampler(n, 7, 0);
  std::map<std::vector<int64_t>, double> seen;
  std::vector<int64_t> batch;
  for (uint32_t round = 0; round < kRounds; ++round) {
    sampler.Sample(round, s, batch);
    ASSERT_EQ(static_cast<int64_t>(batch.size()), s);
    std::sort(batch.begin(), batch.end());
    ASSERT_EQ(std::adjacent_find(batch.begin(), batch.end()), batch.end()) << "a record drawn twice";
    seen[batch] += 1.0;
  }
  ASSERT_EQ(seen.size(), 20u);
  std::vector<double> observed, expected;
  for (const auto& [subset, count] : seen) {
    observed.push_back(count);
    expected.push_back(kRounds / 20.0);
  }
  const double chi = ChiSquare(observed, expected);
  EXPECT_FALSE(RejectsAtOneInAMillion(chi, 19)) << "chi-square " << chi;
  // A Poisson sampler of the same rate fails it: its batches are not always of size s.
  PoissonSampler poisson(n, 7, 0);
  int wrong_size = 0;
  for (uint32_t round = 0; round < 200; ++round) {
    poisson.Sample(round, s, batch);
    wrong_size += static_cast<int64_t>(batch.size()) != s ? 1 : 0;
  }
  EXPECT_GT(wrong_size, 0);
}

TEST(SamplerLaw, RandomAllocationRecordsChooseTheirRoundsIndependently) {
  // k = 1 of m = 4 rounds per window: two records share a round with probability 1/m, independently of the
  // rest; over W windows the count of shared windows is Binomial(W, 1/m) for every pair.
  const int64_t m = 4, windows = 5000;
  AllocationSampler sampler(kN, 11, 0, {m, 1});
  std::vector<int64_t> slot(kN), batch;
  std::vector<std::vector<double>> shared(kN, std::vector<double>(kN, 0.0));
  for (int64_t w = 0; w < windows; ++w) {
    for (int64_t j = 0; j < m; ++j) {
      sampler.Sample(static_cast<uint32_t>(w * m + j), 0, batch);
      for (int64_t r : batch) slot[r] = j;
    }
    for (int64_t i = 0; i < kN; ++i) {
      for (int64_t k = i + 1; k < kN; ++k) shared[i][k] += slot[i] == slot[k] ? 1.0 : 0.0;
    }
  }
  const double p = 1.0 / m, sd = std::sqrt(windows * p * (1 - p));
  double worst = 0.0;
  for (int64_t i = 0; i < kN; ++i) {
    for (int64_t k = i + 1; k < kN; ++k) worst = std::max(worst, std::fabs(shared[i][k] - windows * p) / sd);
  }
  EXPECT_LT(worst, kIndependentZ);
}

// Which accountant may account which sampler (docs/theory.md §7): Poisson and fixed size by RDP, PLD and
// GDP (fixed size through its replace-one reduction, sensitivity 2); shuffling charged as full batches;
// random allocation by its own accountant only. Every other pair is refused with a reason, not accounted by
// a theorem about another sampler.
TEST(SamplerLaw, EverySamplerAccountantPairHasATheoremOrIsRefused) {
  using accounting::AccountantKind;
  const accounting::Schedule rounds = {{0.1, 1.0, 10}};
  const std::map<SamplingModel, std::vector<AccountantKind>> covered = {
      {SamplingModel::kPoisson, {AccountantKind::kRdp, AccountantKind::kPld, AccountantKind::kGdp}},
      {SamplingModel::kFixedSizeWithoutReplacement,
       {AccountantKind::kRdp, AccountantKind::kPld, AccountantKind::kGdp}},
      {SamplingModel::kShuffle, {AccountantKind::kRdp, AccountantKind::kPld, AccountantKind::kGdp}},
      {SamplingModel::kRandomAllocation, {AccountantKind::kRandomAllocation}},
  };
  for (const auto& [sampling, kinds] : covered) {
    const accounting::DpEventPtr event =
        accounting::ScheduleEvent(rounds, sampling, accounting::NoiseModel::kGaussian, {10, 1, 1.0});
    for (const AccountantKind kind : {AccountantKind::kRdp, AccountantKind::kPld, AccountantKind::kGdp,
                                      AccountantKind::kRandomAllocation}) {
      const bool theorem = std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
      const std::string why = accounting::ApplicableLimitation(*event, kind);
      EXPECT_EQ(why.empty(), theorem) << ToString(sampling) << " by " << accounting::ToString(kind) << ": " << why;
    }
  }
}

}  // namespace
}  // namespace asyncdp
