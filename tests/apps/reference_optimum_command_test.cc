// End-to-end: `asyncdp reference-optimum` on a9a shards — the summary it writes, that it is the optimum of
// the run's own objective (the same shards and resolved λ as `asyncdp train`), --reuse, and its errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <vector>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/apps/cli_runner.h"

namespace asyncdp::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The quick strongly convex configuration on 600 a9a rows per client.
std::string Args(const std::string& config, const std::string& out, const std::string& extra = "") {
  return "reference-optimum --quiet --config " + Quoted(SourceDir() + "/experiments/" + config) +
         " --set data.train=" + Quoted(SharedFile("datasets/libsvm/a9a.gz")) +
         " --set data.test=" + Quoted(SharedFile("datasets/libsvm/a9a.t.gz")) +
         " --set data.rows_per_client=600 " + extra + " --out " + Quoted(out);
}

TEST(ReferenceOptimumCommand, WritesTheOptimumOfTheRunsObjectiveAndReusesIt) {
  TempDir dir;
  const std::string out = dir.Path("ref");
  const CliResult r = RunAsyncdp(Args("quick_strongly_convex.toml", out), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto summary = nlohmann::json::parse(ReadFile(out + "/summary.json"));
  EXPECT_EQ(summary, nlohmann::json::parse(r.out));  // also printed on stdout
  EXPECT_EQ(summary["kind"], "reference_optimum");
  // Non-private, and it says so: w* is solved from the training rows without noise.
  EXPECT_THAT(summary["privacy"].get<std::string>(), ::testing::StartsWith("none: "));
  EXPECT_THAT(summary["privacy"].get<std::string>(), HasSubstr("covered by no epsilon"));
  EXPECT_EQ(summary["model"], "logistic_l2");
  EXPECT_EQ(summary["method"], "newton_cg");
  EXPECT_TRUE(summary["converged"].get<bool>());
  EXPECT_LE(summary["gradient_norm"].get<double>(), 1e-10);
  EXPECT_EQ(summary["records"], 5 * 600);  // the union of the five capped shards
  EXPECT_EQ(summary["params"].size(), 124u);
  // λ resolved as the run resolves it: 1/N_c.
  EXPECT_DOUBLE_EQ(summary["objective_key"]["model.l2_lambda"].get<double>(), 1.0 / 600.0);
  EXPECT_NEAR(summary["evaluated_objective"].get<double>(), summary["objective"].get<double>(), 1e-6);
  EXPECT_THAT(ReadFile(out + "/config.resolved.toml"), HasSubstr("l2_lambda = 0.0016666"));

  // --reuse keeps an optimum of the same objective: the second call does not rewrite it.
  const auto written = std::filesystem::last_write_time(out + "/summary.json");
  const CliResult again = RunAsyncdp(Args("quick_strongly_convex.toml", out, "--reuse"), dir);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(std::filesystem::last_write_time(out + "/summary.json"), written);
  EXPECT_EQ(nlohmann::json::parse(again.out), summary);
  // A different objective (another seed draws other shards) is recomputed.
  const CliResult other = RunAsyncdp(Args("quick_strongly_convex.toml", out, "--reuse --set seed=9"), dir);
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_NE(nlohmann::json::parse(ReadFile(out + "/summary.json"))["objective"], summary["objective"]);
}

// CSV column `name` of metrics.csv text as numbers.
std::vector<double> Column(const std::string& csv, const std::string& name) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  for (std::istringstream h(line); std::getline(h, line, ',');) header.push_back(line);
  const auto it = std::find(header.begin(), header.end(), name);
  if (it == header.end()) return {};
  const size_t index = static_cast<size_t>(it - header.begin());
  std::vector<double> values;
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string cell;
    for (size_t i = 0; i <= index; ++i) std::getline(row, cell, ',');
    values.push_back(std::stod(cell));
  }
  return values;
}

TEST(ReferenceOptimumCommand, ARunRecordsItsSuboptimalityAgainstTheOptimum) {
  TempDir dir;
  const std::string ref = dir.Path("ref");
  ASSERT_EQ(RunAsyncdp(Args("quick_strongly_convex.toml", ref), dir).exit_code, 0);
  // `asyncdp train` with the same data options as Args, into OUT.
  const auto train = [&](const std::string& out, const std::string& extra) {
    const std::string args = Args("quick_strongly_convex.toml", dir.Path(out),
                                  "--set eval.points=5 --set schedule.iterations=3000 --set eval.gradient_norm=true --set dp.enabled=false "
                                  "--set output.diagnostics=true "
                                  "--set eval.reference_optimum=" + Quoted(ref) + " " + extra);
    return RunAsyncdp("train" + args.substr(args.find(' ')), dir);
  };
  const CliResult r = train("run", "");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string csv = ReadFile(dir.Path("run") + "/metrics.csv");
  const std::vector<double> gap = Column(csv, "diag_suboptimality");
  const std::vector<double> distance = Column(csv, "diag_distance_sq");
  ASSERT_GE(gap.size(), 5u) << csv;
  ASSERT_EQ(distance.size(), gap.size());
  EXPECT_EQ(Column(csv, "diag_gradient_norm").size(), gap.size());
  // F(ŵ) ≥ F(w*) up to float rounding of the evaluation; without noise the run gets closer to w*.
  for (const double g : gap) EXPECT_GT(g, -1e-6) << csv;
  EXPECT_LT(gap.back(), gap.front()) << csv;
  EXPECT_LT(distance.back(), distance.front()) << csv;
  const auto summary = nlohmann::json::parse(ReadFile(dir.Path("run") + "/summary.json"));
  EXPECT_NEAR(summary["diagnostics"]["suboptimality"].get<double>(), gap.back(), 1e-8 + 1e-6 * gap.back());
  // Without diagnostics the reference optimum would add nothing: the run refuses the key instead of
  // ignoring it (nothing data-dependent is published, and no setting is silently ignored).
  const CliResult quiet = train("quiet", "--set output.diagnostics=false");
  EXPECT_EQ(quiet.exit_code, 2) << quiet.err;
  EXPECT_THAT(quiet.err, HasSubstr("eval.reference_optimum"));
  EXPECT_THAT(quiet.err, HasSubstr("output.diagnostics"));
  EXPECT_FALSE(std::filesystem::exists(dir.Path("quiet")));

  // The optimum of another objective (other shards) is refused, naming the key and what differs.
  const CliResult other = train("other", "--set seed=9");
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_THAT(other.err, HasSubstr("eval.reference_optimum"));
  EXPECT_THAT(other.err, HasSubstr("seed"));
  const CliResult missing = train("missing", "--set eval.reference_optimum=" + Quoted(dir.Path("nowhere")));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("eval.reference_optimum"));
}

TEST(ReferenceOptimumCommand, SolvesTheGeometricMedianByWeiszfeld) {
  TempDir dir;
  const std::string out = dir.Path("gm");
  const CliResult r = RunAsyncdp(Args("quick_geometric_median.toml", out), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["model"], "geometric_median");
  EXPECT_EQ(summary["method"], "weiszfeld");
  EXPECT_TRUE(summary["converged"].get<bool>());
  EXPECT_EQ(summary["params"].size(), 123u);
}

TEST(ReferenceOptimumCommand, ModelsWithoutASolverAndBadOptionsExitWithCodeTwo) {
  TempDir dir;
  // The hinge loss is convex but has no solver here (nor do mlp, lenet, alexnet).
  const CliResult svm = RunAsyncdp(Args("quick_plain_convex.toml", dir.Path("x"), "--set model.kind=svm"), dir);
  EXPECT_EQ(svm.exit_code, 2);
  EXPECT_THAT(svm.err, HasSubstr("model.kind"));
  EXPECT_FALSE(std::filesystem::exists(dir.Path("x")));
  const CliResult tolerance = RunAsyncdp(Args("quick_strongly_convex.toml", dir.Path("y"), "--tolerance 0"), dir);
  EXPECT_EQ(tolerance.exit_code, 2);
  EXPECT_THAT(tolerance.err, HasSubstr("--tolerance"));
}

// `--set` of a key F does not read could change nothing but the echo: refused naming the key and what F
// reads. --objective-keys lists the keys it accepts, for scripts that derive its overrides from a run's.
TEST(ReferenceOptimumCommand, AnOverrideOfAKeyTheObjectiveDoesNotReadExitsWithCodeTwo) {
  TempDir dir;
  for (const std::string key : {"dp.sigma=3", "schedule.iterations=100", "eval.train_rows=50"}) {
    const CliResult r = RunAsyncdp(Args("quick_strongly_convex.toml", dir.Path("x"), "--set " + key), dir);
    EXPECT_EQ(r.exit_code, 2) << key;
    EXPECT_THAT(r.err, HasSubstr(key.substr(0, key.find('=')))) << key;
    EXPECT_THAT(r.err, HasSubstr("`asyncdp reference-optimum` does not read it")) << key;
    EXPECT_THAT(r.err, HasSubstr("data.rows_per_client")) << key;  // what F does read
    EXPECT_FALSE(std::filesystem::exists(dir.Path("x"))) << key;
  }
  const CliResult keys = RunAsyncdp("reference-optimum --objective-keys", dir);
  ASSERT_EQ(keys.exit_code, 0) << keys.err;
  for (const char* key : {"seed\n", "data.train\n", "data.rows_per_client\n", "clients.count\n",
                          "model.kind\n", "model.l2_lambda\n"}) {
    EXPECT_THAT(keys.out, HasSubstr(key));
  }
  EXPECT_THAT(keys.out, Not(HasSubstr("dp.")));
  // With it, the options of a solve would change nothing: refused.
  const CliResult mixed = RunAsyncdp("reference-optimum --objective-keys --set seed=2", dir);
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_THAT(mixed.err, HasSubstr("--objective-keys"));
}

}  // namespace
}  // namespace asyncdp::testing
