// Per-client privacy of a federation: every accountant's maximum over clients, with the client attaining it.
#include "tests/core/accounting/account_schedule.h"
#include "core/accounting/population.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "tests/core/accounting/oracle/hockey_stick.h"

namespace asyncdp::accounting {
namespace {

// Issue 10's example: sigma = 1, delta = 1e-5; a 1,000-record client that ran 1 round at s = 10 (RDP 0.956,
// PLD 0.199) and a 10,000-record client with 10^4 rounds at s = 10 (RDP 0.788, PLD 0.476). Choosing the
// worst client by RDP and reporting its PLD said 0.199; the largest PLD epsilon is 0.476.
TEST(PopulationTest, EveryAccountantReportsItsOwnMaximumAndWhoAttainsIt) {
  const std::vector<ClientRounds> clients = {{0, 1000, {{0.01, 1.0, 1}}}, {1, 10000, {{0.001, 1.0, 10000}}}};
  PopulationOptions options;
  options.delta = 1e-5;
  const PopulationReport r = ReportPopulation(clients, options);
  EXPECT_EQ(r.clients_with_rounds, 2);
  const WorstClient& rdp = r.worst.at(AccountantKind::kRdp);
  const WorstClient& pld = r.worst.at(AccountantKind::kPld);
  EXPECT_EQ(rdp.client, 0);
  EXPECT_NEAR(rdp.epsilon, 0.956, 0.002);
  EXPECT_EQ(pld.client, 1);
  EXPECT_NEAR(pld.epsilon, 0.476, 0.005);
  EXPECT_DOUBLE_EQ(pld.epsilon, AccountSchedule(AccountantKind::kPld, clients[1].schedule, 1e-5).epsilon);
  EXPECT_GT(pld.epsilon, AccountSchedule(AccountantKind::kPld, clients[0].schedule, 1e-5).epsilon);
  EXPECT_EQ(r.pld_lower.client, 1);
  EXPECT_LE(r.pld_lower.epsilon, pld.epsilon);
  EXPECT_GE(r.worst.at(AccountantKind::kGdp).client, 0);
  EXPECT_EQ(r.assumptions.at(AccountantKind::kPld).bound, BoundKind::kUpperBound);
}

// The report composes the PLD's pooled lower bound for the worst client (by PLD upper bound) only. Against
// the hockey-stick oracle (no code shared with core/accounting): the worst client's true epsilon lies in
// [pld_lower, pld], and the client the search of a calibration keeps (the larger q, same rounds) has the
// larger true epsilon, as SearchMembers in account.cc assumes.
TEST(PopulationTest, TheLowerBoundOfTheWorstClientBracketsItsTrueEpsilon) {
  const double sigma = 1.0, delta = 1e-5;
  const std::vector<ClientRounds> clients = {{0, 1000, {{0.1, sigma, 2}}}, {1, 500, {{0.2, sigma, 2}}}};
  PopulationOptions options;
  options.delta = delta;
  const PopulationReport r = ReportPopulation(clients, options);
  const double small_q = oracle::TrueEpsilon(oracle::PoissonPairs(0.1, sigma), 2, delta);
  const double large_q = oracle::TrueEpsilon(oracle::PoissonPairs(0.2, sigma), 2, delta);
  EXPECT_LT(small_q, large_q);
  const WorstClient& pld = r.worst.at(AccountantKind::kPld);
  EXPECT_EQ(pld.client, 1);
  EXPECT_EQ(r.pld_lower.client, 1);
  EXPECT_LE(r.pld_lower.epsilon, large_q * (1 + 1e-6));
  EXPECT_GE(pld.epsilon, large_q * (1 - 1e-6));
  EXPECT_GT(r.pld_lower.epsilon, 0.99 * large_q);
  EXPECT_EQ(pld.result.epsilon_lower, r.pld_lower.epsilon);
}

TEST(PopulationTest, ClientsWithoutRoundsReleaseNothingAndTiesKeepTheFirstClient) {
  const std::vector<ClientRounds> clients = {{0, 500, {}}, {1, 500, {{0.02, 2.0, 30}}}, {2, 500, {{0.02, 2.0, 30}}}};
  PopulationOptions options;
  const PopulationReport r = ReportPopulation(clients, options);
  EXPECT_EQ(r.clients_with_rounds, 2);
  EXPECT_EQ(r.worst.at(AccountantKind::kRdp).client, 1);
  const PopulationReport none = ReportPopulation(std::vector<ClientRounds>{{0, 500, {}}}, options);
  EXPECT_EQ(none.worst.at(AccountantKind::kPld).epsilon, 0.0);
  EXPECT_EQ(none.worst.at(AccountantKind::kPld).client, -1);
  EXPECT_FALSE(none.proactive.valid);
}

TEST(PopulationTest, ProactiveValidityIsCheckedForEveryClient) {
  // Client 0 meets Theorem 3.1 with the paper's Table 3 setting (N = 10^4, s = 26, 5 epochs, sigma =
  // 19.29962, delta = 1e-4); client 1 has a tenth of the records and fails N >= 10000 and (32)-(34).
  const double sigma = 19.29962;
  const int64_t rounds = 50000 / 26 + 1;
  const std::vector<ClientRounds> clients = {{0, 10000, {{26.0 / 10000, sigma, rounds}}},
                                             {1, 1000, {{26.0 / 1000, sigma, rounds / 10}}}};
  PopulationOptions options;
  options.delta = 1e-4;
  options.accountants = {AccountantKind::kRdp};
  const PopulationReport r = ReportPopulation(clients, options);
  EXPECT_FALSE(r.proactive.valid);
  EXPECT_EQ(r.proactive.invalid_clients, std::vector<int64_t>{1});
  EXPECT_EQ(r.proactive.shown_client, 1);
  EXPECT_NEAR(r.proactive.epsilon.epsilon, EpsilonOfSigma(sigma, 1e-4), 1e-12);
  const PopulationReport alone = ReportPopulation(std::vector<ClientRounds>{clients[0]}, options);
  EXPECT_TRUE(alone.proactive.valid);
  EXPECT_TRUE(alone.proactive.shown.theorem_3_1);
  // Fixed-size sampling: the closed form does not apply to anyone.
  options.accounting.sampling = SamplingModel::kFixedSizeWithoutReplacement;
  const PopulationReport fixed = ReportPopulation(std::vector<ClientRounds>{clients[0]}, options);
  EXPECT_FALSE(fixed.proactive.valid);
  EXPECT_FALSE(fixed.proactive.not_applicable.empty());
}

// Where relation (6) has no value, the report says why, for the first such client: a plan of two noise
// multipliers (proactive phases, a sigma schedule), or sigma^2 <= 2.
TEST(PopulationTest, WhyRelationSixHasNoValueIsReported) {
  PopulationOptions options;
  options.delta = 1e-4;
  options.accountants = {AccountantKind::kRdp};
  const std::vector<ClientRounds> phased = {{0, 10000, {{0.0026, 20.0, 10}}},
                                            {1, 10000, {{0.0026, 20.0, 10}, {0.0026, 10.0, 10}}}};
  const PopulationReport r = ReportPopulation(phased, options);
  EXPECT_TRUE(std::isnan(r.proactive.epsilon.epsilon));
  EXPECT_EQ(r.proactive.invalid_clients.back(), 1);  // client 0 has a value (and fails the theorems' conditions)
  EXPECT_EQ(r.proactive.undefined, "client 1: relation (6) assumes one noise multiplier for all rounds");
  const PopulationReport small = ReportPopulation(std::vector<ClientRounds>{{3, 10000, {{0.0026, 1.0, 10}}}}, options);
  EXPECT_EQ(small.proactive.undefined, "client 3: sigma^2 <= 2: relation (6) gives no epsilon");
  EXPECT_EQ(ReportPopulation(std::vector<ClientRounds>{phased[0]}, options).proactive.undefined, "");
}

TEST(PopulationTest, SecureNoiseLeavesOnlyRdp) {
  PopulationOptions options;
  options.accounting.noise = NoiseModel::kDiscreteGaussian;
  const PopulationReport r = ReportPopulation(std::vector<ClientRounds>{{0, 500, {{0.02, 2.0, 30}}}}, options);
  EXPECT_EQ(r.worst.size(), 1u);
  EXPECT_TRUE(r.worst.count(AccountantKind::kRdp));
  EXPECT_EQ(r.unavailable.size(), 2u);
}

}  // namespace
}  // namespace asyncdp::accounting
