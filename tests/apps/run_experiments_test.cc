// End-to-end: every bash subcommand of run_experiments.sh at the tiny scale (ASYNCDP_EXPERIMENTS_SCALE=tiny,
// seconds per subcommand) against the built binary (ASYNCDP_BIN), writing into a temporary directory.
// Checks the files each mode promises and the report sections; the numbers themselves are asyncdp's and
// are tested where they are computed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/apps/cli_runner.h"

namespace asyncdp::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;


int CountLines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// Runs `run_experiments.sh <args>` at the tiny scale with this build's binary. ASYNCDP_SHARED_DIR points at
// a directory that does not exist: the script must find its real data in the repository (a fresh clone).
CliResult RunScript(const std::string& args, const TempDir& dir) {
  // A hanging asyncdp call fails its run (and so the test) instead of stalling CI.
  return RunCommand("ASYNCDP_EXPERIMENTS_SCALE=tiny ASYNCDP_RUN_TIMEOUT=240 ASYNCDP_BIN=" + Quoted(AsyncdpBinary()) +
                        " ASYNCDP_SHARED_DIR=" + Quoted(dir.Path("no-shared-beside-this-clone")) + " " +
                        Quoted(SourceDir() + "/run_experiments.sh") + " " + args,
                    dir);
}

void ExpectFiles(const std::string& dir, const std::vector<std::string>& names) {
  for (const auto& name : names) EXPECT_TRUE(std::filesystem::exists(dir + "/" + name)) << dir << "/" << name;
}

// Every run directory holds its resolved configuration (with the seed) and summary.
void ExpectRunsRecordConfigAndSeed(const std::string& runs) {
  int count = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(runs)) {
    if (entry.path().filename() != "summary.json") continue;
    ++count;
    const std::string toml = ReadFile((entry.path().parent_path() / "config.resolved.toml").string());
    EXPECT_THAT(toml, HasSubstr("seed = ")) << entry.path();
  }
  EXPECT_GT(count, 0) << runs;
}

// `quick` is the Python experiment layer: python/tests/test_experiments.py runs it through this script and
// checks its tables, figures and REPORT.

TEST(RunExperiments, PaperReproducesTables9To11ExactlyAndWritesEveryFigure) {
  TempDir dir;
  const std::string out = dir.Path("paper");
  const CliResult r = RunScript("paper --out " + Quoted(out), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectFiles(out, {"REPORT.md", "tables_9_11.csv", "printed_settings_epsilon.csv", "runs.csv", "rates.csv",
                    "plots/fig_e_suboptimality.png", "reference/strongly_convex/summary.json"});
  for (const char* fig :
       {"fig1a_utility_strongly_convex", "fig2a_utility_plain_convex", "fig3a_utility_lenet",
        "fig1b_sample_sizes_strongly_convex", "fig2b_sample_sizes_plain_convex", "fig3b_sample_sizes_lenet",
        "fig1c_budgets_strongly_convex", "fig2c_budgets_plain_convex", "fig3c_budgets_lenet"}) {
    ExpectFiles(out + "/plots", {std::string(fig) + ".png"});
  }
  // Every printed value of Tables 9-11 matches to the printed digits.
  const std::string tables = ReadFile(out + "/tables_9_11.csv");
  EXPECT_EQ(CountLines(tables), 1 + 3 * 7);
  std::istringstream lines(tables);
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line)) EXPECT_THAT(line, ::testing::EndsWith(",yes")) << line;
  const std::string report = ReadFile(out + "/REPORT.md");
  for (const char* section :
       {"## (d) Tables 9–11", "21 of 21 printed values reproduced exactly", "## Tight ε for every setting",
        "## (a) Utility graphs", "## (b) Constant sample sizes", "## (c) Privacy budgets",
        "## (e) Convergence of the convex runs", "## Round update: sum or average", "First global round, LeNet",
        "## Figure shapes: checked", "## Where and why"}) {
    EXPECT_THAT(report, HasSubstr(section));
  }
  ExpectRunsRecordConfigAndSeed(out + "/runs");
}

TEST(RunExperiments, BadUsageExitsWithCodeTwo) {
  TempDir dir;
  // quick and sweep (Python): python/tests/test_experiments.py.
  for (const char* args : {"bogus", "paper --jobs 0", "paper --mpi 2", "audit --config x.toml", "paper --full --tiny x"}) {
    const CliResult r = RunScript(std::string(args) + " --out " + Quoted(dir.Path("x")), dir);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_THAT(r.err, HasSubstr("error:")) << args;
  }
}

}  // namespace
}  // namespace asyncdp::testing
