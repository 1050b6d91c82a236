// End-to-end: `asyncdp utility-graph` on a9a at a tiny scale, its output files, and its input errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/apps/cli_runner.h"

namespace asyncdp::testing {
namespace {

using ::testing::HasSubstr;


// The Table 3 strongly convex configuration on a9a, shrunk to well under a second per w*.
std::string SmallArgs(const std::string& out) {
  return "utility-graph --quiet --config " +
         Quoted(SourceDir() + "/experiments/table3_strongly_convex.toml") +
         " --set data.train=" + Quoted(SharedFile("datasets/libsvm/a9a.gz")) +
         " --set data.test=" + Quoted(SharedFile("datasets/libsvm/a9a.t.gz")) +
         " --set data.rows_per_client=400 --set data.eval_rows=2000 --set schedule.epochs=2 --set seed=3 "
         "--out " +
         Quoted(out);
}

TEST(UtilityGraphCommand, WritesCsvSummaryConfigAndEveryWStarCurve) {
  TempDir dir;
  const std::string out = dir.Path("ug");
  const CliResult r = RunAsyncdp(SmallArgs(out) + " --clips 0.05,0.1 --sigmas 0,5,...,15 --draws 3", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f : {"utility_graph.csv", "summary.json", "config.resolved.toml",
                        "wstar_C0.05.metrics.csv", "wstar_C0.1.metrics.csv"}) {
    EXPECT_TRUE(std::filesystem::exists(out + "/" + f)) << f;
  }
  const std::string csv = ReadFile(out + "/utility_graph.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 2 * 4);  // header + 2 clips x 4 sigmas
  EXPECT_THAT(csv, HasSubstr("0.05,0,3,"));
  const auto summary = nlohmann::json::parse(ReadFile(out + "/summary.json"));
  EXPECT_EQ(summary, nlohmann::json::parse(r.out));  // also printed on stdout
  EXPECT_EQ(summary["seed"], 3);
  // Non-private, and it says so: every w* is trained without noise.
  EXPECT_THAT(summary["privacy"].get<std::string>(), ::testing::StartsWith("none: "));
  EXPECT_THAT(summary["privacy"].get<std::string>(), HasSubstr("covered by no epsilon"));
  EXPECT_EQ(summary["sigmas"], nlohmann::json({0.0, 5.0, 10.0, 15.0}));
  ASSERT_EQ(summary["curves"].size(), 2u);
  for (const auto& curve : summary["curves"]) {
    EXPECT_DOUBLE_EQ(curve["points"][0]["mean_fraction"].get<double>(), 1.0);
    EXPECT_GT(curve["base_accuracy"].get<double>(), 0.6);
  }
  EXPECT_THAT(ReadFile(out + "/config.resolved.toml"), HasSubstr("seed = 3"));
}

TEST(UtilityGraphCommand, BadGridsAndCountsExitWithCodeTwoNamingTheOption) {
  TempDir dir;
  const std::string out = dir.Path("ug");
  const struct {
    const char* args;
    const char* option;
  } cases[] = {{" --clips 0.1 --sigmas 0,2,...,5", "--sigmas"},
               {" --clips 0,0.1 --sigmas 0,2", "--clips"},
               {" --clips 0.1 --sigmas 4,2", "--sigmas"},
               {" --clips 0.1 --sigmas 0,2 --draws 0", "--draws"}};
  for (const auto& c : cases) {
    const CliResult r = RunAsyncdp(SmallArgs(out) + c.args, dir);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_THAT(r.err, HasSubstr(c.option)) << c.args;
    EXPECT_FALSE(std::filesystem::exists(out)) << c.args;
  }
}

// An override the graph does not read is refused naming the key; random check-ins, which train no w* the
// graph can read, are refused (they crashed the command before).
TEST(UtilityGraphCommand, AnOverrideTheGraphDoesNotReadAndCheckInsExitWithCodeTwoNamingTheKey) {
  TempDir dir;
  const std::string out = dir.Path("ug");
  const struct {
    const char* args;
    const char* key;
    const char* why;
  } cases[] = {{" --set dp.sigma=3", "dp.sigma", "--sigmas"},
               {" --set dp.clip=0.5", "dp.clip", "--clips"},
               {" --set output.trace=true", "output.trace", "event trace"},
               {" --set protocol.participation=check_in", "protocol.participation", "check-ins"}};
  for (const auto& c : cases) {
    const CliResult r = RunAsyncdp(SmallArgs(out) + c.args + " --clips 0.1 --sigmas 0,2 --draws 2", dir);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.key)) << c.args;
    EXPECT_THAT(r.err, HasSubstr(c.why)) << c.args;
    EXPECT_FALSE(std::filesystem::exists(out)) << c.args;
  }
}

}  // namespace
}  // namespace asyncdp::testing
