// End-to-end: `asyncdp train` with dp.sampling = "random_allocation" inside the Proactive-DP clients. The
// run's reported epsilon must be what `asyncdp account --sampling random_allocation` gives for the same
// window (m, k), number of windows E, sigma and delta; bad combinations exit 2 naming the key.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

#include "tests/apps/cli_runner.h"

namespace asyncdp::testing {
namespace {

using ::testing::HasSubstr;

// Table 3's strongly convex setting on a9a, 500 rows per client, s = 26, two epochs: T = 39 rounds.
std::string AllocationArgs(const std::string& out, const std::string& extra) {
  return "train --quiet --config " + Quoted(SourceDir() + "/experiments/table3_strongly_convex.toml") +
         " --set data.train=" + Quoted(SharedFile("datasets/libsvm/a9a.gz")) +
         " --set data.test=" + Quoted(SharedFile("datasets/libsvm/a9a.t.gz")) +
         " --set data.rows_per_client=500 --set schedule.epochs=2 --set eval.points=3 --set seed=5"
         " --set dp.sampling=random_allocation --set dp.accountant=random_allocation " +
         extra + " --out " + Quoted(out);
}

TEST(TrainRandomAllocation, CalibratedRunReportsTheAccountCommandsEpsilon) {
  // Expectation: the 39 rounds hold round(39 * 26 / 500) = 2 windows of about 500 / 26 rounds: the derived
  // window is m = ceil(39 / 2) = 20 (the second window started at round 20, cut short after 19 rounds and
  // charged whole); with k = 2 the windows would be E = round(39 * 26 / 1000) = 1 of m = 39. sigma is
  // calibrated for epsilon = 2 and the summary's epsilon equals `account --sampling random_allocation
  // --steps 20 --k 1 --windows 2` at that sigma.
  TempDir dir;
  const std::string out = dir.Path("run");
  const CliResult r =
      RunAsyncdp(AllocationArgs(out, "--set dp.sigma=0 --set dp.epsilon=2"), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto summary = nlohmann::json::parse(ReadFile(out + "/summary.json"));
  const nlohmann::json& privacy = summary["privacy"];
  EXPECT_EQ(privacy["accountant"], "random_allocation");
  EXPECT_EQ(privacy["calibrated_by"], "random_allocation");
  EXPECT_EQ(privacy["sampling"], "random_allocation");
  EXPECT_EQ(privacy["neighbours"], "add_remove");
  EXPECT_EQ(privacy["allocation"]["steps"], 20);
  EXPECT_EQ(privacy["allocation"]["allocations"], 1);
  EXPECT_EQ(summary["rounds_per_client"][0], 39);
  EXPECT_THAT(privacy["assumptions"]["random_allocation"].get<std::string>(), HasSubstr("Feldman & Shenfeld"));
  EXPECT_THAT(privacy["assumptions"]["random_allocation"].get<std::string>(), HasSubstr("joins k uniformly"));
  EXPECT_THAT(privacy["assumptions"]["pld"].get<std::string>(), HasSubstr("unavailable"));
  const std::string resolved = ReadFile(out + "/config.resolved.toml");
  EXPECT_THAT(resolved, HasSubstr("allocation_steps = 20"));
  EXPECT_THAT(resolved, HasSubstr("allocation_k = 1"));

  const double epsilon = summary["epsilon"]["random_allocation"].get<double>();
  const double sigma = summary["sigma"].get<double>();
  const double delta = summary["delta"].get<double>();
  EXPECT_LE(epsilon, 2.0);
  EXPECT_GT(epsilon, 1.9);  // calibrated to 1e-4 in sigma: the budget is spent, not wasted
  char sigma_text[64], delta_text[64];
  std::snprintf(sigma_text, sizeof(sigma_text), "%.17g", sigma);
  std::snprintf(delta_text, sizeof(delta_text), "%.17g", delta);
  const CliResult account = RunAsyncdp(std::string("account --sampling random_allocation --steps 20 --k 1 ") +
                                           "--windows 2 --sigma " + sigma_text + " --delta " + delta_text,
                                       dir);
  ASSERT_EQ(account.exit_code, 0) << account.err;
  const auto cli = nlohmann::json::parse(account.out);
  EXPECT_EQ(cli["random_allocation"]["epsilon"].get<double>(), epsilon);  // bit for bit: one accountant
}

TEST(TrainRandomAllocation, ExplicitWindowAndFixedSigma) {
  // Expectation: m = 10, k = 2, sigma = 3: T = 39 rounds are E = 4 windows (the last cut short); the
  // reported epsilon is the account command's for (10, 2, 4, 3, 1/500); the metrics' running epsilon ends at
  // the same value (every round applied).
  TempDir dir;
  const std::string out = dir.Path("run");
  const CliResult r =
      RunAsyncdp(AllocationArgs(out, "--set dp.allocation_steps=10 --set dp.allocation_k=2 --set dp.sigma=3"), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto summary = nlohmann::json::parse(ReadFile(out + "/summary.json"));
  const CliResult account =
      RunAsyncdp("account --sampling random_allocation --steps 10 --k 2 --windows 4 --sigma 3 --delta 0.002", dir);
  ASSERT_EQ(account.exit_code, 0) << account.err;
  const auto cli = nlohmann::json::parse(account.out);
  EXPECT_EQ(cli["random_allocation"]["epsilon"].get<double>(), summary["epsilon"]["random_allocation"].get<double>());
  const double epsilon = summary["epsilon"]["random_allocation"].get<double>();
  const std::string metrics = ReadFile(out + "/metrics.csv");
  const std::string last = metrics.substr(metrics.rfind('\n', metrics.size() - 2) + 1);
  // columns: global_round, virtual_seconds, gradients, epsilon, ...
  size_t comma = 0;
  for (int i = 0; i < 3; ++i) comma = last.find(',', comma) + 1;
  EXPECT_NEAR(std::stod(last.substr(comma)), epsilon, 1e-7 * epsilon) << last;
}

TEST(TrainRandomAllocation, BudgetHaltsAtAWholeWindow) {
  // Expectation: sigma = 1, derived m = 20: one window costs epsilon 0.713 and two 1.048 (account command,
  // the random-allocation PLD binding), so a budget of 0.9 halts every client after round 20 — the second
  // window would start, and a started window is charged whole — and the reported epsilon is the
  // one-window value.
  TempDir dir;
  const std::string out = dir.Path("run");
  const CliResult r = RunAsyncdp(AllocationArgs(out, "--set dp.sigma=1 --set dp.epsilon=0.9"), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto summary = nlohmann::json::parse(ReadFile(out + "/summary.json"));
  EXPECT_EQ(summary["privacy"]["halted_by"], "random_allocation");
  for (const auto& rounds : summary["rounds_per_client"]) EXPECT_EQ(rounds, 20);
  const CliResult account =
      RunAsyncdp("account --sampling random_allocation --steps 20 --windows 1 --sigma 1 --delta 0.002", dir);
  ASSERT_EQ(account.exit_code, 0) << account.err;
  EXPECT_EQ(nlohmann::json::parse(account.out)["random_allocation"]["epsilon"].get<double>(),
            summary["epsilon"]["random_allocation"].get<double>());
}

TEST(TrainRandomAllocation, RefusesCombinationsThatDoNotFit) {
  // Expectation: each senseless combination exits 2 and names the key to change.
  TempDir dir;
  const struct {
    std::string set;
    std::string key;
  } cases[] = {
      {"--set dp.accountant=pld", "dp.accountant"},
      {"--set dp.secure_noise=true", "dp.secure_noise"},
      {"--set schedule.sample_sizes=linear --set schedule.sample_size_slope=1", "schedule.sample_sizes"},
      {"--set dp.allocation_steps=3 --set dp.allocation_k=4", "dp.allocation_k"},
      {"--set protocol.participation=check_in", "dp.sampling"},
  };
  for (const auto& c : cases) {
    const CliResult r = RunAsyncdp(AllocationArgs(dir.Path("bad"), c.set), dir);
    EXPECT_EQ(r.exit_code, 2) << c.set;
    EXPECT_THAT(r.err, HasSubstr(c.key)) << c.set;
  }
  const CliResult r = RunAsyncdp("train --quiet --config " +
                                     Quoted(SourceDir() + "/experiments/table3_strongly_convex.toml") +
                                     " --set dp.accountant=random_allocation --out " + Quoted(dir.Path("bad2")),
                                 dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("dp.accountant"));
}

}  // namespace
}  // namespace asyncdp::testing
