#include "core/accounting/ledger.h"

#include <gtest/gtest.h>

#include "core/accounting/calibration.h"
#include "core/accounting/make_accountant.h"
#include "core/error.h"

namespace asyncdp::accounting {
namespace {

LedgerOptions WithBudget(AccountantKind kind, double budget) {
  LedgerOptions options;
  options.accountant = kind;
  options.epsilon_budget = budget;
  return options;
}

TEST(LedgerTest, EpsilonSoFarMatchesTheOneShotAccountant) {
  for (AccountantKind kind : {AccountantKind::kRdp, AccountantKind::kPld}) {
    PrivacyLedger ledger(WithBudget(kind, std::numeric_limits<double>::infinity()));
    EXPECT_EQ(ledger.EpsilonSoFar(), 0.0);
    for (int i = 0; i < 300; ++i) ledger.RecordRound(0.01, 1.1);
    ledger.RecordRounds(0.02, 1.1, 50);
    EXPECT_EQ(ledger.rounds(), 350);
    EXPECT_EQ(ledger.schedule().size(), 2u);  // grouped by distinct (q, sigma)
    EXPECT_DOUBLE_EQ(ledger.EpsilonSoFar(),
                     AccountSchedule(kind, {{0.01, 1.1, 300}, {0.02, 1.1, 50}}, 1e-5).epsilon);
    EXPECT_EQ(ledger.assumptions().accountant, kind);
  }
}

TEST(LedgerTest, HaltsWhereThePlannedHaltRoundSays) {
  // A ledger deciding round by round and RoundsWithinBudget deciding up front agree.
  for (AccountantKind kind : {AccountantKind::kRdp, AccountantKind::kPld}) {
    PrivacyLedger ledger(WithBudget(kind, 1.0));
    int64_t recorded = 0;
    while (!ledger.WouldExceed(0.05, 2.0)) {
      ledger.RecordRound(0.05, 2.0);
      ++recorded;
      ASSERT_LT(recorded, 100000);
    }
    EXPECT_LE(ledger.EpsilonSoFar(), 1.0);
    EXPECT_EQ(recorded, RoundsWithinBudget(kind, {}, {{0.05, 2.0, 100000}}, 1.0, 1e-5));
  }
}

TEST(LedgerTest, InfiniteBudgetNeverHalts) {
  PrivacyLedger ledger(LedgerOptions{});
  ledger.RecordRounds(0.5, 0.5, 1000);
  EXPECT_FALSE(ledger.WouldExceed(0.5, 0.5));
}

TEST(LedgerTest, ShuffleChargesEpochs) {
  LedgerOptions options;
  options.accounting.sampling = SamplingModel::kShuffle;
  PrivacyLedger ledger(options);
  ledger.RecordRounds(0.25, 4.0, 4);  // one epoch
  const double one_epoch = ledger.EpsilonSoFar();
  ledger.RecordRound(0.25, 4.0);  // the second epoch starts
  EXPECT_GT(ledger.EpsilonSoFar(), one_epoch);
  ledger.RecordRounds(0.25, 4.0, 3);
  AccountantOptions fixed;
  fixed.sampling = SamplingModel::kFixedSizeWithoutReplacement;
  EXPECT_DOUBLE_EQ(ledger.EpsilonSoFar(), AccountSchedule(AccountantKind::kPld, {{1.0, 4.0, 2}}, 1e-5, fixed).epsilon);
}

TEST(LedgerTest, CopiesAreIndependent) {
  PrivacyLedger a(LedgerOptions{});
  a.RecordRounds(0.01, 1.0, 10);
  PrivacyLedger b = a;
  b.RecordRounds(0.01, 1.0, 10);
  EXPECT_EQ(a.rounds(), 10);
  EXPECT_EQ(b.rounds(), 20);
}

TEST(LedgerTest, RejectsInvalidOptionsAndRounds) {
  EXPECT_THROW(PrivacyLedger{WithBudget(AccountantKind::kGdp, 1.0)}, ConfigError);
  LedgerOptions secure;
  secure.accounting.noise = NoiseModel::kDiscreteGaussian;  // PLD cannot account it
  EXPECT_THROW(PrivacyLedger{secure}, ConfigError);
  PrivacyLedger ledger(LedgerOptions{});
  EXPECT_THROW(ledger.RecordRound(1.5, 1.0), ConfigError);
  EXPECT_THROW(ledger.WouldExceed(0.1, 0.0), ConfigError);
}

}  // namespace
}  // namespace asyncdp::accounting
