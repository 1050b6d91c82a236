// End-to-end tests of features over the MPI runtime (mpirun as in mpi_runtime_test.cc): the one-run audit
// of a training run and the proactive framework's phases, each against the threads runtime.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/apps/cli_runner.h"
#include "tests/data/temp_files.h"
#include "tests/sim/runtime/mpi_test_support.h"
#include "tests/test_data.h"

namespace asyncdp::sim {
namespace {

namespace fs = std::filesystem;
using ::asyncdp::testing::TempDir;
using testing::CliResult;
using ::testing::HasSubstr;

// The one-run audit of a training run (audit.canaries, Dirac canaries) over MPI: the audited client's rank
// plants the canaries, rank 0 (the server) records its updates. The canaries' scores are projections of the
// client's updates on their own parameters, which no other record touches and which are seeded per round, so
// the whole audit block (scores' verdict, eps_lower, guesses, f-DP estimates, reported epsilons) equals the
// threads runtime's: under Poisson sampling, where the canaries add to N_c and every rank must plan the grown
// client alike, and under fixed-size sampling with an injected fault (VIOLATION, exit 3). Mislabelled
// canaries run too (rank 0 reads the audited client's records to score them).
TEST(MpiRuntimeTest, TrainingRunAuditMatchesTheThreadsRuntime) {
  TempDir dir;
  const std::string shared = testing::SharedDir();
  const std::string base =
      "train --quiet --config " + Quoted(testing::SourceDir() + "/experiments/audit_logistic.toml") +
      " --set " + Quoted("data.train=\"" + shared + "/datasets/libsvm/a9a.gz\"") + " --set " +
      Quoted("data.test=\"" + shared + "/datasets/libsvm/a9a.t.gz\"") + " --set audit.canaries=400 ";
  struct Case {
    std::string name, args;
    int exit_code;
    std::string verdict;
  };
  const std::vector<Case> cases = {
      {"poisson", "", 0, "consistent"},
      {"fault",
       "--set dp.sampling=\"fixed_size_without_replacement\" --set dp.sigma=16 --set "
       "audit.test_noise_scale=0.05",
       3, "VIOLATION"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string threads_dir = dir.Path(c.name + "_threads");
    const CliResult threads =
        testing::RunCommand(Quoted(testing::AsyncdpBinary()) + " " + base + c.args +
                                " --set protocol.runtime=\"threads\" --out " + Quoted(threads_dir),
                            dir);
    ASSERT_EQ(threads.exit_code, c.exit_code) << threads.err;
    const std::string mpi_dir = dir.Path(c.name + "_mpi");
    const CliResult mpi = testing::RunCommand(
        Mpirun(3) + base + c.args + " --set protocol.runtime=\"mpi\" --out " + Quoted(mpi_dir), dir);
    ASSERT_EQ(mpi.exit_code, c.exit_code) << mpi.err;
    const auto expected = Summary(threads_dir)["audit"];
    const auto got = Summary(mpi_dir)["audit"];
    EXPECT_EQ(got["verdict"], c.verdict);
    EXPECT_GT(got["one_run"]["planted"].get<int64_t>(), 0);
    EXPECT_EQ(got, expected);
  }
  // Mislabelled canaries: relabelled copies of the audited client's records, which rank 0 reads too, scored
  // on the final model. The model depends on the order of arrivals, so only what does not is compared.
  const std::string mislabelled =
      " --set audit.canary=\"mislabelled\" --set dp.sampling=\"fixed_size_without_replacement\"";
  const CliResult threads = testing::RunCommand(Quoted(testing::AsyncdpBinary()) + " " + base + mislabelled +
                                                    " --set protocol.runtime=\"threads\" --out " +
                                                    Quoted(dir.Path("mislabelled_threads")),
                                                dir);
  ASSERT_EQ(threads.exit_code, 0) << threads.err;
  const CliResult mpi =
      testing::RunCommand(Mpirun(3) + base + mislabelled + " --set protocol.runtime=\"mpi\" --out " +
                              Quoted(dir.Path("mislabelled_mpi")),
                          dir);
  ASSERT_EQ(mpi.exit_code, 0) << mpi.err;
  const auto expected = Summary(dir.Path("mislabelled_threads"))["audit"];
  const auto got = Summary(dir.Path("mislabelled_mpi"))["audit"];
  EXPECT_EQ(got["canary"], expected["canary"]);
  EXPECT_EQ(got["audited"], expected["audited"]);
  EXPECT_EQ(got["reported"], expected["reported"]);
  EXPECT_EQ(got["one_run"]["planted"], expected["one_run"]["planted"]);
  EXPECT_EQ(got["one_run"]["canaries"], 400);
  EXPECT_EQ(got["verdict"], "consistent");
}

// The proactive framework over MPI (experiments/proactive_flow.toml: five clients with accuracy targets and
// budgets, client 4's too small to join; output.diagnostics on): pause, settle and re-join notices travel to
// rank 0, the phase records are gathered there, and the run ends with every client stopped at or below target
// or paused at it. The guarantee (each client's admitted plan) equals the threads runtime's; which checks
// pass depends on the order of arrivals, so the events may differ.
TEST(MpiRuntimeTest, ProactivePhasesRunOverMpi) {
  TempDir dir;
  const std::string shared = testing::SharedDir();
  const std::string base =
      "train --quiet --config " + Quoted(testing::SourceDir() + "/experiments/proactive_flow.toml") +
      " --set " + Quoted("data.train=\"" + shared + "/datasets/libsvm/a9a.gz\"") + " --set " +
      Quoted("data.test=\"" + shared + "/datasets/libsvm/a9a.t.gz\"") + " --set output.diagnostics=true ";
  const std::string threads_dir = dir.Path("threads");
  const CliResult threads =
      testing::RunCommand(Quoted(testing::AsyncdpBinary()) + " " + base +
                              "--set protocol.runtime=\"threads\" --out " + Quoted(threads_dir),
                          dir);
  ASSERT_EQ(threads.exit_code, 0) << threads.err;
  const std::string out = dir.Path("mpi");
  const CliResult run =
      testing::RunCommand(Mpirun(3) + base + "--set protocol.runtime=\"mpi\" --out " + Quoted(out), dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // One voice: the planning warning about client 4 comes from rank 0 only.
  EXPECT_EQ(Occurrences(run.err, "client 4: its budget epsilon_target = 0.2 cannot reach its target"), 1u)
      << run.err;
  const auto s = Summary(out);
  const auto reference = Summary(threads_dir);
  EXPECT_EQ(s["runtime"], "mpi");
  EXPECT_FALSE(s["stalled"].get<bool>());
  EXPECT_FALSE(s["truncated"].get<bool>());
  EXPECT_EQ(s["privacy"], reference["privacy"]);
  const auto& clients = s["proactive"]["clients"];
  ASSERT_EQ(clients.size(), 5u);
  int64_t pauses = 0;
  for (size_t c = 0; c < clients.size(); ++c) {
    SCOPED_TRACE(c);
    const auto& mine = clients[c];
    const auto& theirs = reference["proactive"]["clients"][c];
    for (const char* key : {"admitted", "admitted_rounds", "epsilon_rdp", "epsilon_pld", "within_target"}) {
      EXPECT_EQ(mine[key], theirs[key]) << key;
    }
    pauses += mine["pauses"].get<int64_t>();
    // The final model's accuracy on the client's held-out rows, which rank 0 reads for it: close to the
    // test accuracy (a model scored on rows it did not read would predict one class: 0.76 on a9a).
    EXPECT_NEAR(mine["diag_holdout_accuracy_final_model"].get<double>(), s["test_accuracy"].get<double>(),
                0.05);
    EXPECT_EQ(mine["pauses"].get<int64_t>(),
              static_cast<int64_t>(mine["paused_at_end"].get<bool>()) + mine["rejoins"].get<int64_t>());
  }
  EXPECT_FALSE(clients[4]["admitted"].get<bool>());
  EXPECT_GE(pauses, 1);  // client 0's target (0.76) is met at its first check
  // Every client ended for a reason of the framework; none was left running.
  const auto rows = Lines(out + "/clients.csv");
  ASSERT_EQ(rows.size(), 6u);
  for (size_t i = 1; i < rows.size(); ++i) {
    EXPECT_THAT(rows[i], ::testing::AnyOf(HasSubstr(",target_reached,"), HasSubstr(",target_missed,"),
                                          HasSubstr(",paused_at_target,"), HasSubstr(",not_admitted,")))
        << rows[i];
  }
  EXPECT_EQ(rows[0], Lines(threads_dir + "/clients.csv")[0]);
  EXPECT_EQ(Lines(out + "/phases.csv").size(), Lines(threads_dir + "/phases.csv").size());
  EXPECT_EQ(Lines(out + "/phases.csv")[0], Lines(threads_dir + "/phases.csv")[0]);
  // A client that drops out mid-phase (silent from its round 2; excluded after 0.5 s): every runtime ends the
  // run the same way and says so in clients.csv (dropped_out, excluded) and summary.json (excluded_clients).
  const std::string dropout =
      " --set clients.dropout_ids=[1] --set clients.dropout_round=2 --set protocol.exclude_after=0.5";
  for (const std::string runtime : {"virtual", "threads", "mpi"}) {
    SCOPED_TRACE(runtime);
    const std::string where = dir.Path("dropout_" + runtime);
    const std::string command =
        base + dropout + " --set protocol.runtime=\"" + runtime + "\" --out " + Quoted(where);
    const CliResult r = testing::RunCommand(
        runtime == "mpi" ? Mpirun(3) + command : Quoted(testing::AsyncdpBinary()) + " " + command, dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto summary = Summary(where);
    EXPECT_EQ(summary["excluded_clients"], nlohmann::json::array({1}));
    EXPECT_FALSE(summary["stalled"].get<bool>());
    const auto lines = Lines(where + "/clients.csv");
    ASSERT_EQ(lines.size(), 6u);
    EXPECT_THAT(lines[2], HasSubstr(",dropped_out,1,"));
    EXPECT_THAT(lines[5], HasSubstr(",not_admitted,0,"));
  }
  // Balanced placement weighs the phases' planned work, which every rank plans from N_c (the labels) before
  // reading features; the labels-only plans must place the clients as the final ones do (FinishHosting
  // checks). With client 0 not admitted (work 0) the phases place the clients differently from async-round
  // plans, whose work is equal ({0, 2, 4} | {1, 3}): placing by those made this run abort at that check
  // (tried). The guarantee is the threads runtime's.
  const std::string skewed =
      base + "--set " + Quoted("targets.client_epsilon=[0.2, 2.0, 2.0, 2.0, 2.0]") + " ";
  const std::string skewed_threads = dir.Path("skewed_threads"), balanced_dir = dir.Path("balanced");
  const CliResult skewed_reference =
      testing::RunCommand(Quoted(testing::AsyncdpBinary()) + " " + skewed +
                              "--set protocol.runtime=\"threads\" --out " + Quoted(skewed_threads),
                          dir);
  ASSERT_EQ(skewed_reference.exit_code, 0) << skewed_reference.err;
  const CliResult balanced = testing::RunCommand(
      Mpirun(3) + skewed + "--set protocol.runtime=\"mpi\" --set protocol.mpi_placement=\"balanced\" --out " +
          Quoted(balanced_dir),
      dir);
  ASSERT_EQ(balanced.exit_code, 0) << balanced.err;
  const auto b = Summary(balanced_dir), t = Summary(skewed_threads);
  EXPECT_FALSE(b["stalled"].get<bool>());
  EXPECT_EQ(b["privacy"], t["privacy"]);
  EXPECT_FALSE(b["proactive"]["clients"][0]["admitted"].get<bool>());
  for (size_t c = 0; c < 5; ++c) {
    SCOPED_TRACE(c);
    for (const char* key : {"admitted", "admitted_rounds", "epsilon_rdp", "epsilon_pld", "within_target"}) {
      EXPECT_EQ(b["proactive"]["clients"][c][key], t["proactive"]["clients"][c][key]) << key;
    }
  }
}

}  // namespace
}  // namespace asyncdp::sim
