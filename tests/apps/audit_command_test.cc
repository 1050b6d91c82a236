// End-to-end: `asyncdp audit` — its verdict line and exit codes (0 consistent, 3 VIOLATION, 2 bad input),
// its output files with the resolved configuration, and `run_experiments.sh audit` at the tiny scale.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/apps/cli_runner.h"

namespace asyncdp::testing {
namespace {

using ::testing::HasSubstr;

// experiments/audit_logistic.toml shrunk to a second: 3 clients of 60 records, 4 full-batch rounds,
// sigma = 2 (mu = 1, eps(1e-5) = 4.38 by PLD). runs = 0: no --runs and --jobs (the one-run audit refuses
// them).
std::string SmallAuditArgs(const std::string& out, const std::string& extra = "", int runs = 400) {
  const std::string multi = runs > 0 ? " --jobs 2 --runs " + std::to_string(runs) : "";
  return "audit --quiet --config " + Quoted(SourceDir() + "/experiments/audit_logistic.toml") +
         " --set data.train=" + Quoted(SharedFile("datasets/libsvm/a9a.gz")) +
         " --set data.test=" + Quoted(SharedFile("datasets/libsvm/a9a.t.gz")) +
         " --set clients.count=3 --set data.rows_per_client=60 --set schedule.sample_size=60"
         " --set schedule.rounds=4 --set dp.sigma=2" +
         multi + " --out " + Quoted(out) + " " + extra;
}

TEST(AuditCommand, ConsistentConfigExitsZeroWithVerdictLineAndOutputs) {
  TempDir dir;
  const std::string out = dir.Path("audit");
  const CliResult r = RunAsyncdp(SmallAuditArgs(out), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ::testing::MatchesRegex(
                         "eps_lower = [0-9.e+-]+ \\(95%\\) <= eps_reported\\(pld\\) = 4\\.38[0-9]* "
                         ": consistent\n"));
  for (const char* f : {"audit.json", "config.resolved.toml", "scores.csv", "histogram.csv", "roc.csv",
                        "tradeoff.csv"}) {
    EXPECT_TRUE(std::filesystem::exists(out + "/" + f)) << f;
  }
  // The ROC beside the most TPR the reported curve allows: an honest run stays (nearly) below it, and the
  // allowed TPR is at least chance.
  const std::string roc = ReadFile(out + "/roc.csv");
  EXPECT_THAT(roc, ::testing::StartsWith("threshold,fpr,tpr,tpr_allowed\n"));
  {
    std::istringstream lines(roc);
    std::string line;
    std::getline(lines, line);
    int rows = 0, above = 0;
    while (std::getline(lines, line)) {
      double threshold = 0, fpr = 0, tpr = 0, allowed = 0;
      ASSERT_EQ(std::sscanf(line.c_str(), "%lf,%lf,%lf,%lf", &threshold, &fpr, &tpr, &allowed), 4) << line;
      EXPECT_GE(allowed, fpr - 1e-9) << line;
      ++rows;
      above += tpr > allowed + 0.1 ? 1 : 0;  // 400 runs a side: sampling error of a rate is below 0.1
    }
    EXPECT_GT(rows, 10);
    EXPECT_EQ(above, 0);
  }
  const auto j = nlohmann::json::parse(ReadFile(out + "/audit.json"));
  EXPECT_EQ(j["verdict"], "consistent");
  EXPECT_TRUE(j["fault_injection"].is_null());
  for (const char* accountant : {"rdp", "pld", "gdp"}) {
    EXPECT_TRUE(j["reported"][accountant]["epsilon"].is_number()) << accountant;
    EXPECT_THAT(j["reported"][accountant]["assumptions"].get<std::string>(), HasSubstr("add_remove"));
  }
  EXPECT_EQ(j["multi_run"]["runs_per_side"], 400);
  EXPECT_EQ(j["audit"]["runs_per_side"], 400);
  EXPECT_TRUE(j["audit"]["canaries"].is_null());  // one canary: the one-run audit's size is not echoed
  EXPECT_THAT(j["multi_run"]["gdp_counts"]["assumes"].get<std::string>(), HasSubstr("Gaussian trade-off"));
  EXPECT_THAT(j["threat_model"].get<std::string>(), HasSubstr("(i, U)"));
  EXPECT_THAT(j["config"].get<std::string>(), HasSubstr("rows_per_client = 60"));
  EXPECT_THAT(ReadFile(out + "/config.resolved.toml"), HasSubstr("sigma = 2"));
  const std::string scores = ReadFile(out + "/scores.csv");
  EXPECT_EQ(std::count(scores.begin(), scores.end(), '\n'), 1 + 800);
  EXPECT_THAT(scores, HasSubstr("side,run,seed,score\nin,0,"));
  // A second audit may replace the first one's folder (it holds audit.json).
  EXPECT_EQ(RunAsyncdp(SmallAuditArgs(out, "", 8), dir).exit_code, 0);
}

// The deliberately wrong accountant: noise 0.5 sigma accounted as sigma. Exit code 3, a VIOLATION line
// naming the refuted accountants, and audit.json records the fault injection.
TEST(AuditCommand, UnderReportedNoiseIsAViolationWithExitCodeThree) {
  TempDir dir;
  const std::string out = dir.Path("audit");
  const CliResult r = RunAsyncdp(SmallAuditArgs(out, "--test-noise-scale 0.5"), dir);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr(": VIOLATION: the runs show delta >= "));
  EXPECT_THAT(r.out, HasSubstr("refuted: "));
  EXPECT_THAT(r.err, HasSubstr("privacy audit VIOLATION"));
  const auto j = nlohmann::json::parse(ReadFile(out + "/audit.json"));
  EXPECT_EQ(j["verdict"], "VIOLATION");
  EXPECT_EQ(j["fault_injection"]["noise_scale"], 0.5);
  EXPECT_TRUE(j["multi_run"]["profile"]["refuted"].get<bool>());
}

// The old fixed-size accounting (the Poisson pair for batches drawn without replacement), caught end to
// end on the replace-one worst case.
TEST(AuditCommand, OldFixedSizeAccountingIsAViolation) {
  TempDir dir;
  const std::string fixed =
      "--set dp.sampling=fixed_size_without_replacement --set data.rows_per_client=40 "
      "--set schedule.sample_size=20 --set schedule.rounds=1 --set dp.sigma=1 --canary opposite";
  const CliResult honest = RunAsyncdp(SmallAuditArgs(dir.Path("honest"), fixed, 500), dir);
  EXPECT_EQ(honest.exit_code, 0) << honest.out << honest.err;
  const CliResult old =
      RunAsyncdp(SmallAuditArgs(dir.Path("old"), fixed + " --test-accounted-sampling poisson", 500), dir);
  EXPECT_EQ(old.exit_code, 3) << old.out << old.err;
  const auto j = nlohmann::json::parse(ReadFile(dir.Path("old") + "/audit.json"));
  EXPECT_EQ(j["audited"]["sampling"], "fixed_size_without_replacement");
  EXPECT_EQ(j["audited"]["accounted_sampling"], "poisson");
}

TEST(AuditCommand, OneRunModeWritesCanaryScores) {
  TempDir dir;
  const std::string out = dir.Path("one");
  const CliResult r = RunAsyncdp(SmallAuditArgs(out, "--mode one-run --canaries 40", 0), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(ReadFile(out + "/audit.json"));
  EXPECT_EQ(j["one_run"]["canaries"], 40);
  EXPECT_EQ(j["audit"]["canaries"], 40);
  EXPECT_TRUE(j["audit"]["runs_per_side"].is_null());  // it trains once
  EXPECT_TRUE(j["audit"]["jobs"].is_null());
  EXPECT_THAT(ReadFile(out + "/scores.csv"), HasSubstr("canary,included,score\n0,"));
}

TEST(AuditCommand, BadInputIsExitCodeTwo) {
  TempDir dir;
  for (const std::string bad :
       {"--canaries 3", "--mode sometimes", "--view side", "--canary opposite", "--confidence 1.5",
        "--test-noise-scale 2", "--client 7", "--set dp.enabled=false",
        "--statistic likelihood-ratio --view final-model"}) {
    const CliResult r = RunAsyncdp(SmallAuditArgs(dir.Path("bad"), bad), dir);
    EXPECT_EQ(r.exit_code, 2) << bad << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr("error: ")) << bad;
  }
  const CliResult few = RunAsyncdp(SmallAuditArgs(dir.Path("bad"), "", 2), dir);
  EXPECT_EQ(few.exit_code, 2);
  EXPECT_THAT(few.err, HasSubstr("error: --runs: needs 8 <= runs per side"));
  const CliResult few_canaries =
      RunAsyncdp(SmallAuditArgs(dir.Path("bad"), "--mode one-run --canaries 3", 0), dir);
  EXPECT_EQ(few_canaries.exit_code, 2);
  EXPECT_THAT(few_canaries.err, HasSubstr("error: --canaries: needs 10 <= canaries"));
  EXPECT_FALSE(std::filesystem::exists(dir.Path("bad")));
}

// A flag of the other audit mode is refused naming it, not ignored: the one-run audit trains once (--runs
// and --jobs changed nothing in its audit.json but their echo), the multi-run audit plants one canary.
TEST(AuditCommand, AFlagOfTheOtherModeIsRefused) {
  TempDir dir;
  for (const std::string flag : {"--runs 20", "--jobs 2"}) {
    const CliResult r = RunAsyncdp(SmallAuditArgs(dir.Path("bad"), "--mode one-run " + flag, 0), dir);
    EXPECT_EQ(r.exit_code, 2) << flag;
    EXPECT_THAT(r.err,
                HasSubstr("error: " + flag.substr(0, flag.find(' ')) + ": applies to --mode multi only"));
  }
  const CliResult canaries = RunAsyncdp(SmallAuditArgs(dir.Path("bad"), "--canaries 50"), dir);
  EXPECT_EQ(canaries.exit_code, 2);
  EXPECT_THAT(canaries.err, HasSubstr("error: --canaries: applies to --mode one-run only"));
  EXPECT_FALSE(std::filesystem::exists(dir.Path("bad")));
}

// `asyncdp train --set audit.canaries=m`: the one-run audit of the training run itself, in summary.json;
// exit code 0 when consistent, 3 on VIOLATION (after the outputs are written), 2 for bad audit keys.
std::string SmallTrainAuditArgs(const std::string& out, const std::string& extra) {
  return "train --quiet --config " + Quoted(SourceDir() + "/experiments/audit_logistic.toml") +
         " --set data.train=" + Quoted(SharedFile("datasets/libsvm/a9a.gz")) +
         " --set data.test=" + Quoted(SharedFile("datasets/libsvm/a9a.t.gz")) +
         " --set clients.count=3 --set data.rows_per_client=100 --set schedule.sample_size=100"
         " --set schedule.rounds=4 --set audit.canaries=300 --out " +
         Quoted(out) + " " + extra;
}

TEST(AuditCommand, TrainingRunAuditVerdictAndExitCode) {
  TempDir dir;
  const CliResult honest = RunAsyncdp(SmallTrainAuditArgs(dir.Path("honest"), "--set dp.sigma=8"), dir);
  ASSERT_EQ(honest.exit_code, 0) << honest.err;
  const auto h = nlohmann::json::parse(ReadFile(dir.Path("honest") + "/summary.json"));
  EXPECT_EQ(h["audit"]["verdict"], "consistent");
  EXPECT_THAT(h["audit"]["verdict_line"].get<std::string>(), HasSubstr("<= eps_reported(pld) = "));
  EXPECT_THAT(ReadFile(dir.Path("honest") + "/config.resolved.toml"), HasSubstr("canaries = 300"));
  const CliResult faulty = RunAsyncdp(
      SmallTrainAuditArgs(dir.Path("faulty"), "--set dp.sigma=8 --set audit.test_noise_scale=0.05"), dir);
  EXPECT_EQ(faulty.exit_code, 3) << faulty.err;
  EXPECT_THAT(faulty.err, HasSubstr("VIOLATION"));
  const auto f = nlohmann::json::parse(ReadFile(dir.Path("faulty") + "/summary.json"));
  EXPECT_EQ(f["audit"]["verdict"], "VIOLATION");
  EXPECT_EQ(f["audit"]["fault_injection"]["noise_scale"], 0.05);
  for (const std::string bad : {"--set audit.canaries=-1", "--set audit.canaries=5", "--set audit.client=3",
                                "--set audit.canary=loud", "--set audit.confidence=1"}) {
    const CliResult r = RunAsyncdp(SmallTrainAuditArgs(dir.Path("bad"), bad), dir);
    EXPECT_EQ(r.exit_code, 2) << bad << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr("audit.")) << bad;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.Path("bad")));
}

// `./run_experiments.sh audit` at the tiny scale: every row, the table and the plots.

// A key the audit does not read is refused as an override, naming it (AuditUnreadReason; the probe is
// tests/sim/audit/audit_keys_test.cc); a budget that lets the audited client train no round is refused on
// dp.epsilon — it stopped on an internal check (exit 134) before.
TEST(AuditCommand, AnOverrideTheAuditDoesNotReadAndAnEmptyBudgetExitWithCodeTwo) {
  TempDir dir;
  const std::string out = dir.Path("audit");
  const struct {
    const char* set;
    const char* key;
    const char* why;
  } cases[] = {{"--set eval.points=3", "eval.points", "writes none of a run's outputs"},
               {"--set output.diagnostics=true", "output.diagnostics", "writes none of a run's outputs"},
               {"--set protocol.runtime=threads", "protocol.runtime", "virtual runtime"},
               {"--set protocol.worker_threads=2", "protocol.worker_threads", "--jobs"},
               {"--set audit.client=1", "audit.client", "--client"},
               {"--set dp.epsilon=1", "dp.epsilon", "no round: nothing to audit"}};
  for (const auto& c : cases) {
    const CliResult r = RunAsyncdp(SmallAuditArgs(out, c.set, 16), dir);
    EXPECT_EQ(r.exit_code, 2) << c.set << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.key)) << c.set;
    EXPECT_THAT(r.err, HasSubstr(c.why)) << c.set;
    EXPECT_FALSE(std::filesystem::exists(out)) << c.set;
  }
}

// run_experiments.sh audit (the Python experiment layer): python/tests/test_experiments.py.

}  // namespace
}  // namespace asyncdp::testing
