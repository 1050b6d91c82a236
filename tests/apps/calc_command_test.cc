// End-to-end: `asyncdp calc` reproduces the paper's Tables 9-11 in paper mode, reports every condition,
// runs the E.1 multi-phase calculator from a CSV, and fails with exit code 2 on bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/apps/cli_runner.h"
#include "tests/data/temp_files.h"

namespace asyncdp::apps {
namespace {

using testing::CliResult;
using ::testing::HasSubstr;
using testing::Quoted;
using testing::RunAsyncdp;

TEST(CalcCommandTest, PaperModeReproducesTables9To11) {
  struct Table {
    const char* args;
    double eps, gamma;
    int s_max, s_max_asym;
    double fdp, fdp_asym;
  };
  const Table tables[] = {
      {"--N 10000 --K 50000 --delta 1e-4 --sigma 19.29962", 0.0497, 3.814945, 26, 198, 0.0105, 0.0533},
      {"--N 60000 --K 360000 --delta 1.6666666666666667e-05 --sigma 12.10881", 0.1521, 5.281112, 288, 3042,
       0.0389, 0.2097},
      {"--N 50000 --K 350000 --delta 2e-5 --sigma 6.572", 0.5253, 9.225327, 406, 7504, 0.1133, 0.8239},
  };
  testing::TempDir dir;
  for (const Table& t : tables) {
    const CliResult r = RunAsyncdp(std::string("calc ") + t.args, dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto out = nlohmann::ordered_json::parse(r.out);
    SCOPED_TRACE(t.args);
    // The paper's printed digits.
    EXPECT_NEAR(out["epsilon"].get<double>(), t.eps, 5e-5);
    EXPECT_NEAR(out["gamma"].get<double>(), t.gamma, 5e-7);
    EXPECT_EQ(out["s_max"], t.s_max);
    EXPECT_EQ(out["s_max_asym"], t.s_max_asym);
    EXPECT_NEAR(out["eps_fdp"]["s_max"].get<double>(), t.fdp, 5e-5);
    EXPECT_NEAR(out["eps_fdp"]["s_max_asym_paper"].get<double>(), t.fdp_asym, 5e-5);
    for (const char* id : {"(7)", "(8)", "(32)", "(33)", "(34)", "(35)", "eps<0.5"}) {
      ASSERT_TRUE(out["conditions"].contains(id)) << id;
      for (const char* field : {"lhs", "rhs", "holds", "margin"})
        EXPECT_TRUE(out["conditions"][id].contains(field));
    }
    // The documented leading keys, in order.
    std::string keys;
    for (const auto& [key, value] : out.items()) keys += key + ",";
    EXPECT_EQ(keys.rfind("epsilon,sigma,gamma,T_min,s_max,T_min_asym,s_max_asym,conditions,", 0), 0u) << keys;
  }
}

TEST(CalcCommandTest, Table11FailsEpsBelowHalfWithItsMargin) {
  testing::TempDir dir;
  const CliResult r = RunAsyncdp("calc --N 50000 --K 350000 --delta 2e-5 --sigma 6.572", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto c = nlohmann::json::parse(r.out)["conditions"]["eps<0.5"];
  EXPECT_FALSE(c["holds"].get<bool>());
  EXPECT_NEAR(c["margin"].get<double>(), 0.5 - 0.5253444, 1e-6);
}

TEST(CalcCommandTest, ExactModeAndEpsilonInput) {
  testing::TempDir dir;
  const CliResult r = RunAsyncdp("calc --N 10000 --K 50000 --delta 1e-4 --epsilon 0.04945 --mode exact", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  EXPECT_NEAR(out["sigma"].get<double>(), 19.352293, 1e-5);
  EXPECT_EQ(out["mode"], "exact");
}

TEST(CalcCommandTest, MultiPhaseCalculatorFromCsv) {
  testing::TempDir dir;
  const std::string single = dir.Write("one.csv", "K,sigma\n50000,\n");
  CliResult r = RunAsyncdp("calc --N 10000 --delta 1e-4 --epsilon 0.04945 --phases " + Quoted(single), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = nlohmann::json::parse(r.out);
  EXPECT_TRUE(out["can_participate"].get<bool>());
  EXPECT_EQ(out["phases"][0]["s"], 29);  // spec §8.5, Table 6 first row

  const std::string hopeless = dir.Write("two.csv", "K,sigma\n50000,\n10000,3\n");
  r = RunAsyncdp("calc --N 10000 --delta 1e-4 --epsilon 0.0001 --phases " + Quoted(hopeless), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  out = nlohmann::json::parse(r.out);
  EXPECT_FALSE(out["can_participate"].get<bool>());
  EXPECT_EQ(out["phases"].size(), 1u);
  EXPECT_THAT(out["phases"][0]["stop_reason"].get<std::string>(), HasSubstr("cannot participate"));
}

TEST(CalcCommandTest, BadInputIsExitCode2) {
  testing::TempDir dir;
  CliResult r = RunAsyncdp("calc --N 10000 --K 50000 --delta 1e-4", dir);  // neither sigma nor epsilon
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("error:"));
  const std::string bad = dir.Write("bad.csv", "K,sigma\n50000,\nlots,2\n");
  r = RunAsyncdp("calc --N 10000 --delta 1e-4 --epsilon 1 --phases " + Quoted(bad), dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("bad.csv:3:1: expected a number for K"));
}

// The calculators' own checks (both sigma and epsilon given; sigma^2 <= 2 in (6)) name the option the user
// typed, --sigma, not the library's calc.sigma.
TEST(CalcCommandTest, TheCalculatorsOwnChecksNameTheOption) {
  testing::TempDir dir;
  CliResult r = RunAsyncdp("calc --N 1000 --K 1000 --delta 1e-3 --sigma 3 --epsilon 1", dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: --sigma: give exactly one of sigma and epsilon\n");
  r = RunAsyncdp("calc --N 1000 --K 1000 --delta 1e-3 --sigma 1", dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: --sigma: relation (6) needs sigma^2 > 2\n");
}

TEST(CalcCommandTest, HelpDocumentsEveryOutputField) {
  testing::TempDir dir;
  const CliResult r = RunAsyncdp("calc --help", dir);
  EXPECT_EQ(r.exit_code, 0);
  for (const char* field :
       {"T_min_asym", "s_max_asym", "conditions", "margin", "eps_fdp", "can_participate"}) {
    EXPECT_THAT(r.out, HasSubstr(field));
  }
}

// Issue 14: numbers are checked where they enter; errors start with "error:", name the option and print
// the number briefly; no s_max is ever a wrapped-around integer.
TEST(CalcCommandTest, OutOfRangeNumbersAreRefusedWithTheOption) {
  testing::TempDir dir;
  struct Case {
    const char* args;
    const char* message;
  };
  const Case cases[] = {
      {"--N 10000 --K 50000 --delta 1e-4 --epsilon 1e300",
       "error: --epsilon: must be a finite number in (0, 1000], got 1e+300\n"},
      {"--N 1e300 --K 1e300 --delta 1e-4 --sigma 19.3",
       "error: --N: must be an integer in [1, 1000000000], got 1e+300\n"},
      {"--N 10.5 --K 50 --delta 1e-4 --sigma 19.3", "error: --N: must be an integer in [1, 1000000000], got 10.5\n"},
      {"--N 10000 --K 1e15 --delta 1e-4 --sigma 19.3",
       "error: --K: must be an integer in [1, 1000000000000], got 1000000000000000\n"},
      {"--N 10000 --K 50000 --delta 0 --sigma 19.3", "error: --delta: must be a finite number in (0, 1), got 0\n"},
      {"--N 10000 --K 50000 --delta 1e-4 --sigma inf", "error: --sigma: must be a finite number in (0, 1000000], got inf\n"},
      {"--N 10000 --K 50000 --delta 1e-4 --sigma nan", "error: --sigma: must be a finite number in (0, 1000000], got nan\n"},
      {"--N 10000 --K 50000 --delta 1e-4 --sigma 19.3 --theta 0.5",
       "error: --theta: must be a finite number in [1, 1000], got 0.5\n"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    const CliResult r = RunAsyncdp(std::string("calc ") + c.args, dir);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, c.message);
  }
}

TEST(CalcCommandTest, CliParseErrorsAlsoStartWithError) {
  testing::TempDir dir;
  const CliResult r = RunAsyncdp("calc --N abc --K 50000 --delta 1e-4 --epsilon 1", dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, ::testing::StartsWith("error: "));
  EXPECT_THAT(r.err, HasSubstr("--N"));
}

TEST(CalcCommandTest, SampleSizesBeyondExactIntegersAreNullNeverNegative) {
  testing::TempDir dir;
  // sigma just above sqrt(2): eps from (6) is huge, T_min_asym tiny, k N / T_min_asym beyond 2^53.
  const CliResult r = RunAsyncdp("calc --N 1000000000 --K 1 --delta 1e-9 --sigma 1.4142136", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::ordered_json::parse(r.out);
  for (const char* key : {"s_max", "s_max_asym"}) {
    SCOPED_TRACE(key);
    EXPECT_TRUE(out[key].is_null() || out[key].get<int64_t>() >= 0) << out[key];
  }
  EXPECT_TRUE(out["s_max_asym"].is_null()) << out["s_max_asym"];
}

TEST(CalcCommandTest, APhasesFileWithAByteOrderMarkIsRead) {
  testing::TempDir dir;
  const std::string csv = dir.Write("phases.csv", "\xEF\xBB\xBFK,sigma\n50000,\n");
  const CliResult r = RunAsyncdp("calc --N 10000 --delta 1e-4 --epsilon 0.5 --phases " + Quoted(csv), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::ordered_json::parse(r.out)["phases"].size(), 1u);
}

}  // namespace
}  // namespace asyncdp::apps
