#include "core/accounting/ledger.h"

#include <gtest/gtest.h>

#include "core/accounting/rdp.h"
#include "core/error.h"

namespace asyncdp::accounting {
namespace {

TEST(LedgerTest, EpsilonSoFarMatchesTheOneShotAccountant) {
  PrivacyLedger ledger(LedgerOptions{});
  EXPECT_EQ(ledger.EpsilonSoFar(), 0.0);
  for (int i = 0; i < 300; ++i) ledger.RecordRound(0.01, 1.1);
  ledger.RecordRounds(0.02, 1.1, 50);
  EXPECT_EQ(ledger.rounds(), 350);
  const double expected =
      RdpEpsilon({{0.01, 1.1, 300}, {0.02, 1.1, 50}}, SamplingModel::kPoisson, 1e-5).epsilon;
  EXPECT_NEAR(ledger.EpsilonSoFar(), expected, 1e-12 * expected);
  EXPECT_EQ(ledger.schedule().size(), 2u);  // grouped by distinct (q, sigma)
  const PrivacyReport report = ledger.Report(true, false, true);
  EXPECT_NEAR(report.rdp->epsilon, expected, 1e-12 * expected);
}

TEST(LedgerTest, QueriesBetweenRecordsDoNotChangeTheTotal) {
  // Rounds are folded into the per-order RDP sums lazily, at each query; the order of records and
  // queries must not matter.
  PrivacyLedger queried(LedgerOptions{});
  PrivacyLedger silent(LedgerOptions{});
  for (int i = 0; i < 200; ++i) {
    const double q = i % 3 == 0 ? 0.02 : 0.01;
    queried.RecordRound(q, 1.3);
    silent.RecordRound(q, 1.3);
    if (i % 17 == 0) {
      EXPECT_GT(queried.EpsilonSoFar(), 0.0);
    }
  }
  const double expected = RdpEpsilon(silent.schedule(), SamplingModel::kPoisson, 1e-5).epsilon;
  EXPECT_NEAR(queried.EpsilonSoFar(), expected, 1e-12 * expected);
  EXPECT_NEAR(silent.EpsilonSoFar(), expected, 1e-12 * expected);
}

TEST(LedgerTest, HaltsExactlyBeforeTheBudgetIsExceeded) {
  LedgerOptions options;
  options.epsilon_budget = 1.0;
  PrivacyLedger ledger(options);
  int64_t recorded = 0;
  while (!ledger.WouldExceed(0.02, 2.0)) {
    ledger.RecordRound(0.02, 2.0);
    ++recorded;
    ASSERT_LT(recorded, 100000);
  }
  EXPECT_LE(ledger.EpsilonSoFar(), 1.0);
  const double one_more = RdpEpsilon({{0.02, 2.0, recorded + 1}}, SamplingModel::kPoisson, 1e-5).epsilon;
  EXPECT_GT(one_more, 1.0);
  EXPECT_GT(recorded, 100);
}

TEST(LedgerTest, PldLedgerAllowsMoreRoundsThanRdp) {
  LedgerOptions options;
  options.epsilon_budget = 1.0;
  PrivacyLedger rdp(options);
  options.accountant = AccountantKind::kPld;
  PrivacyLedger pld(options);
  // Run the RDP ledger to its halt, then give the PLD ledger the same rounds: the tighter PLD still
  // certifies another round.
  while (!rdp.WouldExceed(0.02, 2.0)) rdp.RecordRound(0.02, 2.0);
  pld.RecordRounds(0.02, 2.0, rdp.rounds());
  EXPECT_FALSE(pld.WouldExceed(0.02, 2.0));
  EXPECT_LT(pld.EpsilonSoFar(), rdp.EpsilonSoFar());
  EXPECT_EQ(pld.assumptions().accountant, AccountantKind::kPld);
  pld.RecordRounds(0.02, 2.0, 5 * rdp.rounds());  // far beyond: the PLD ledger halts too
  EXPECT_TRUE(pld.WouldExceed(0.02, 2.0));
}

TEST(LedgerTest, InfiniteBudgetNeverHalts) {
  PrivacyLedger ledger(LedgerOptions{});
  ledger.RecordRounds(0.5, 0.5, 1000);
  EXPECT_FALSE(ledger.WouldExceed(0.5, 0.5));
}

TEST(LedgerTest, ShuffleChargesEpochs) {
  LedgerOptions options;
  options.sampling = SamplingModel::kShuffle;
  options.neighbours = NeighbourRelation::kReplaceOne;
  PrivacyLedger ledger(options);
  ledger.RecordRounds(0.25, 4.0, 4);  // one epoch
  const double one_epoch = ledger.EpsilonSoFar();
  ledger.RecordRound(0.25, 4.0);  // the second epoch starts
  EXPECT_GT(ledger.EpsilonSoFar(), one_epoch);
  ledger.RecordRounds(0.25, 4.0, 3);
  EXPECT_DOUBLE_EQ(ledger.EpsilonSoFar(),
                   RdpEpsilon({{1.0, 4.0, 2}}, SamplingModel::kFixedSizeWithoutReplacement, 1e-5).epsilon);
}

TEST(LedgerTest, RejectsInvalidOptionsAndRounds) {
  LedgerOptions options;
  options.accountant = AccountantKind::kGdp;
  EXPECT_THROW(PrivacyLedger{options}, ConfigError);
  options = {};
  options.sampling = SamplingModel::kFixedSizeWithoutReplacement;  // neighbours left at add/remove
  EXPECT_THROW(PrivacyLedger{options}, ConfigError);
  PrivacyLedger ledger(LedgerOptions{});
  EXPECT_THROW(ledger.RecordRound(1.5, 1.0), ConfigError);
  EXPECT_THROW(ledger.WouldExceed(0.1, 0.0), ConfigError);
}

}  // namespace
}  // namespace asyncdp::accounting
