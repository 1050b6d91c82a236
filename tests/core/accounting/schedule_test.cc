#include "core/accounting/schedule.h"

#include <gtest/gtest.h>

#include <string>

#include "core/accounting/accountant.h"
#include "core/accounting/make_accountant.h"
#include "core/error.h"

namespace asyncdp::accounting {
namespace {

TEST(ScheduleTest, CompactMergesEqualRoundsAndDropsEmptyGroups) {
  const Schedule s = CompactSchedule({{0.02, 1.0, 3}, {0.01, 2.0, 0}, {0.01, 1.0, 5}, {0.02, 1.0, 4}});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0], (RoundGroup{0.01, 1.0, 5}));
  EXPECT_EQ(s[1], (RoundGroup{0.02, 1.0, 7}));
  EXPECT_EQ(TotalRounds(s), 12);
}

TEST(ScheduleTest, ValidationNamesTheOffendingField) {
  try {
    ValidateSchedule({{0.1, 1.0, 1}, {0.1, -2.0, 1}});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where(), "schedule[1].sigma");
  }
  EXPECT_THROW(ValidateSchedule({{0.0, 1.0, 1}}), ConfigError);
  EXPECT_THROW(ValidateSchedule({{0.1, 1.0, -1}}), ConfigError);
}

// Inputs that aborted the PLD (an internal check in its discretisation, or a vector beyond max_size) and
// the random-allocation RDP before the domain was enforced, found by the Python package's hypothesis suite:
// every accountant now refuses them with a ConfigError naming the bound, and accepts the domain's edges.
TEST(ScheduleTest, TheAccountantsDomainIsEnforcedForEveryAccountant) {
  const RoundGroup outside[] = {{5e-324, 1.0, 1}, {1e-300, 1.0, 1}, {1e-13, 1.0, 1}, {1e-12, 1e-9, 7},
                                {1.0, 1e-12, 7}, {0.5, 5e-324, 7},  {0.5, 1.7e308, 7}, {0.5, 9e-7, 7}};
  for (const RoundGroup& g : outside) {
    for (const AccountantKind kind : kMechanismAccountants) {
      for (const SamplingModel sampling : {SamplingModel::kPoisson, SamplingModel::kFixedSizeWithoutReplacement}) {
        AccountantOptions options;
        options.sampling = sampling;
        auto accountant = MakeAccountant(kind, options);
        try {
          accountant->AddRounds(g.q, g.sigma, g.count);
          FAIL() << "accepted q=" << g.q << " sigma=" << g.sigma;
        } catch (const ConfigError& e) {
          EXPECT_NE(std::string(e.what()).find("domain"), std::string::npos) << e.what();
        }
      }
    }
  }
  const RoundGroup edges[] = {{kMinSamplingRate, kMinNoiseMultiplier, 7}, {1.0, kMinNoiseMultiplier, 7},
                              {kMinSamplingRate, kMaxNoiseMultiplier, 7}, {1.0, kMaxNoiseMultiplier, 7}};
  for (const RoundGroup& g : edges) {
    for (const AccountantKind kind : kMechanismAccountants) {
      auto accountant = MakeAccountant(kind);
      accountant->AddRounds(g.q, g.sigma, g.count);
      const double epsilon = accountant->Epsilon(1e-5).epsilon;
      EXPECT_GE(epsilon, 0.0) << ToString(kind) << " q=" << g.q << " sigma=" << g.sigma;
      EXPECT_GE(accountant->Delta(0.0), 0.0);
    }
  }
}

}  // namespace
}  // namespace asyncdp::accounting
