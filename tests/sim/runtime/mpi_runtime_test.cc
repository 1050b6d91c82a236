// End-to-end tests of the MPI runtime (protocol.runtime = "mpi"): the built `asyncdp` binary under
// `mpirun --oversubscribe` on this machine (shared-memory transport), against the threads runtime on the
// same configuration. Registered only when CMake found MPI (tests/CMakeLists.txt).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/apps/cli_runner.h"
#include "tests/data/temp_files.h"
#include "tests/sim/runtime/invariant_oracle.h"
#include "tests/sim/runtime/mpi_test_support.h"
#include "tests/test_data.h"

namespace asyncdp::sim {
namespace {

namespace fs = std::filesystem;
using ::asyncdp::testing::TempDir;
using testing::CliResult;
using ::testing::HasSubstr;
using testing::Quoted;

TEST(MpiRuntimeTest, Table3Over3And4RanksMatchesThreadsRuntime) {
  ASSERT_FALSE(testing::SharedFile("datasets/libsvm/a9a.gz").empty());
  TempDir dir;
  const std::string threads_dir = dir.Path("threads");
  const CliResult threads = testing::RunCommand(
      Quoted(testing::AsyncdpBinary()) + " " + Table3(kOneEpoch + "--set protocol.runtime=\"threads\" --out " + Quoted(threads_dir)),
      dir);
  ASSERT_EQ(threads.exit_code, 0) << threads.err;
  const auto reference = Summary(threads_dir);
  for (int ranks : {3, 4}) {
    SCOPED_TRACE(ranks);
    const std::string out = dir.Path("mpi" + std::to_string(ranks));
    const CliResult run =
        testing::RunCommand(Mpirun(ranks) + Table3(kOneEpoch + "--set protocol.runtime=\"mpi\" --out " + Quoted(out)), dir);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto s = Summary(out);
    EXPECT_EQ(s["runtime"], "mpi");
    // Same protocol, different schedule of arrivals: accuracy within 1 point of the threads runtime.
    EXPECT_GT(s["test_accuracy"].get<double>(), 0.75);
    EXPECT_NEAR(s["test_accuracy"].get<double>(), reference["test_accuracy"].get<double>(), 0.01);
    // Identical accounting: every client ran its whole plan, as in the threads runtime.
    EXPECT_EQ(s["rounds_per_client"], reference["rounds_per_client"]);
    EXPECT_EQ(s["privacy"], reference["privacy"]);
    EXPECT_EQ(s["epsilon"], reference["epsilon"]);
    EXPECT_EQ(s["global_rounds"], reference["global_rounds"]);
    EXPECT_EQ(s["excluded_clients"].size(), 0u);
    // τ = 1 bounds the staleness of every round.
    EXPECT_LE(s["max_staleness"].get<int64_t>(), 1);
    // Outputs identical in format.
    EXPECT_EQ(FirstLine(out + "/clients.csv"), FirstLine(threads_dir + "/clients.csv"));
    EXPECT_EQ(FirstLine(out + "/metrics.csv"), FirstLine(threads_dir + "/metrics.csv"));
    EXPECT_TRUE(fs::exists(out + "/config.resolved.toml"));
    EXPECT_EQ(s.size(), reference.size());
  }
}

// Round-robin and work-balanced placement (clients of unequal data under a label-skewed partition): the same
// accounting and rounds as the threads runtime; the placement only decides where each client runs.
TEST(MpiRuntimeTest, RoundRobinAndBalancedPlacementMatchTheThreadsRuntime) {
  ASSERT_FALSE(testing::SharedFile("datasets/libsvm/a9a.gz").empty());
  TempDir dir;
  const std::string skewed = kOneEpoch + "--set clients.count=7 --set data.partition=\"dirichlet\" "
                                         "--set data.dirichlet_alpha=0.5 --set protocol.server_step=\"per_client\" ";
  const std::string threads_dir = dir.Path("threads");
  const CliResult threads = testing::RunCommand(
      Quoted(testing::AsyncdpBinary()) + " " + Table3(skewed + "--set protocol.runtime=\"threads\" --out " + Quoted(threads_dir)),
      dir);
  ASSERT_EQ(threads.exit_code, 0) << threads.err;
  const auto reference = Summary(threads_dir);
  for (const std::string placement : {"round_robin", "balanced"}) {
    SCOPED_TRACE(placement);
    const std::string out = dir.Path("mpi_" + placement);
    const CliResult run = testing::RunCommand(
        Mpirun(4) + Table3(skewed + "--set protocol.runtime=\"mpi\" --set protocol.mpi_placement=\"" + placement +
                           "\" --out " + Quoted(out), /*quiet=*/false),
        dir);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_THAT(run.err, HasSubstr("(" + placement + " placement)"));
    const auto s = Summary(out);
    EXPECT_EQ(s["rounds_per_client"], reference["rounds_per_client"]);
    EXPECT_EQ(s["privacy"], reference["privacy"]);
    EXPECT_EQ(s["truncated"], false);
    EXPECT_NEAR(s["test_accuracy"].get<double>(), reference["test_accuracy"].get<double>(), 0.02);
  }
}

// Adaptive clipping (the clip travels in every update) and user-level DP (the client clips and noises its whole
// update) over MPI: the same outcome and the same accounting as the threads runtime.
TEST(MpiRuntimeTest, AdaptiveClippingAndUserLevelDpMatchTheThreadsRuntime) {
  ASSERT_FALSE(testing::SharedFile("datasets/libsvm/a9a.gz").empty());
  TempDir dir;
  const std::string adaptive = "--set dp.clip_mode=\"adaptive\" --set dp.clip_count_sigma=2 ";
  const std::string user = "--set dp.unit=\"client\" --set dp.client_clip=1 --set dp.sigma=5 ";
  for (const std::string& mode : {adaptive, user}) {
    SCOPED_TRACE(mode);
    const std::string threads_dir = dir.Path("threads"), mpi_dir = dir.Path("mpi");
    fs::remove_all(threads_dir);
    fs::remove_all(mpi_dir);
    const CliResult threads = testing::RunCommand(
        Quoted(testing::AsyncdpBinary()) + " " +
            Table3(kOneEpoch + mode + "--set protocol.runtime=\"threads\" --out " + Quoted(threads_dir)),
        dir);
    ASSERT_EQ(threads.exit_code, 0) << threads.err;
    const CliResult mpi =
        testing::RunCommand(Mpirun(3) + Table3(kOneEpoch + mode + "--set protocol.runtime=\"mpi\" --out " + Quoted(mpi_dir)), dir);
    ASSERT_EQ(mpi.exit_code, 0) << mpi.err;
    const auto reference = Summary(threads_dir);
    const auto s = Summary(mpi_dir);
    EXPECT_FALSE(s["truncated"].get<bool>());
    EXPECT_EQ(s["rounds_per_client"], reference["rounds_per_client"]);
    EXPECT_EQ(s["epsilon"], reference["epsilon"]);
    EXPECT_EQ(s["privacy"], reference["privacy"]);
    EXPECT_EQ(FirstLine(mpi_dir + "/metrics.csv"), FirstLine(threads_dir + "/metrics.csv"));  // the clip column too
    EXPECT_NEAR(s["test_accuracy"].get<double>(), reference["test_accuracy"].get<double>(), 0.02);
  }
}

TEST(MpiRuntimeTest, StalenessNeverExceedsTauWithAStraggler) {
  TempDir dir;
  for (int tau : {0, 2}) {
    SCOPED_TRACE(tau);
    const std::string out = dir.Path("tau" + std::to_string(tau));
    // Client 0 computes 4x slower: the others run ahead as far as tau lets them.
    const CliResult run = testing::RunCommand(
        Mpirun(3) + Table3("--set protocol.runtime=\"mpi\" --set schedule.rounds=100 --set protocol.tau=" +
                           std::to_string(tau) + " --set 'clients.straggler_ids=[0]' --set clients.straggler_factor=4 " +
                           "--out " + Quoted(out)),
        dir);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto s = Summary(out);
    EXPECT_LE(s["max_staleness"].get<int64_t>(), tau);
    EXPECT_EQ(s["staleness_bound"].get<int64_t>(), tau);
    const std::string clients = testing::ReadFile(out + "/clients.csv");
    EXPECT_THAT(clients, HasSubstr("max_staleness"));
  }
}

TEST(MpiRuntimeTest, DropoutWithExcludeAfterCompletes) {
  TempDir dir;
  const std::string out = dir.Path("dropout");
  const CliResult run = testing::RunCommand(
      Mpirun(4) + Table3("--set protocol.runtime=\"mpi\" --set schedule.rounds=100 --set 'clients.dropout_ids=[1]' "
                         "--set clients.dropout_round=10 --set protocol.exclude_after=0.5 --out " + Quoted(out)),
      dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto s = Summary(out);
  EXPECT_EQ(s["excluded_clients"], nlohmann::json::array({1}));
  EXPECT_EQ(s["rounds_per_client"][1].get<int64_t>(), 10);
  EXPECT_GT(s["rounds_per_client"][0].get<int64_t>(), 10);
  EXPECT_THAT(testing::ReadFile(out + "/clients.csv"), HasSubstr(",dropped_out,1,"));
  EXPECT_GT(s["test_accuracy"].get<double>(), 0.70);
}

// The pid of the asyncdp process with MPI rank `rank` whose command line mentions `marker`, or 0.
pid_t FindRank(const std::string& marker, int rank) {
  const std::string wanted = "OMPI_COMM_WORLD_RANK=" + std::to_string(rank);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = testing::ReadFile(entry.path().string() + "/cmdline");
    if (cmdline.find(testing::AsyncdpBinary()) != 0 || cmdline.find(marker) == std::string::npos) continue;
    const std::string environ = testing::ReadFile(entry.path().string() + "/environ");
    std::istringstream vars(environ);
    for (std::string var; std::getline(vars, var, '\0');) {
      if (var == wanted) return static_cast<pid_t>(std::stol(name));
    }
  }
  return 0;
}

// Starts a long run over 4 ranks, sends `signal` to rank 2 once it computes, and checks the job ends with
// exit code != 0, a clear message (matching the regular expression `expected_message`) and no result
// directory, within the time-out.
// `train_args(out)`: the train command line (after the binary) of a run long enough to be interrupted, with
// protocol.runtime = "mpi", protocol.mpi_timeout = 2 and --out out.
void ExpectFailedRank(int signal, const std::string& expected_message,
                      const std::function<std::string(const std::string&)>& train_args) {
  TempDir dir;
  const std::string out = dir.Path("killed");
  const std::string command = Mpirun(4) + train_args(out) + " 2>" + Quoted(dir.Path("stderr.txt"));
  const auto start = std::chrono::steady_clock::now();
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  pid_t victim = 0;
  while (victim == 0 && std::chrono::steady_clock::now() - start < std::chrono::seconds(60)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    victim = FindRank(out, 2);
  }
  ASSERT_NE(victim, 0) << "rank 2 never started";
  // Every rank has loaded its data and the rounds are under way once rank 0 logs the start.
  while (testing::ReadFile(dir.Path("stderr.txt")).find("mpi: 4 ranks started") == std::string::npos &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(90)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto signalled = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(victim, signal), 0);
  char buffer[4096];
  while (std::fread(buffer, 1, sizeof(buffer), pipe) > 0) {
  }
  const int status = pclose(pipe);
  if (signal == SIGSTOP) kill(victim, SIGKILL);  // in case the job left it behind
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
  const std::string err = testing::ReadFile(dir.Path("stderr.txt"));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 0) << err;
  EXPECT_NE(WEXITSTATUS(status), 124) << "the run hung until timeout(1) stopped it\n" << err;
  EXPECT_LT(seconds, 30.0);
  EXPECT_THAT(err, ::testing::ContainsRegex(expected_message));
  EXPECT_FALSE(fs::exists(out));
  for (const auto& entry : fs::directory_iterator(dir.Path(""))) {
    EXPECT_THAT(entry.path().filename().string(), ::testing::Not(HasSubstr("partial"))) << "staging left behind";
  }
}

// A long Table 3 run over MPI.
std::string LongTable3(const std::string& out) {
  return Table3(
      "--set protocol.runtime=\"mpi\" --set schedule.epochs=500 --set protocol.mpi_timeout=2 --out " +
          Quoted(out),
      /*quiet=*/false);
}

TEST(MpiRuntimeTest, KilledClientRankEndsTheRunWithoutResults) {
  ExpectFailedRank(SIGKILL, "rank 2", LongTable3);
}

TEST(MpiRuntimeTest, StalledClientRankTimesOutWithAClearError) {
  // The server notices either the silent rank (heartbeats) or the client on it that holds up a global round,
  // whichever of its two time-outs fires first (under ASan the second one did): both name rank 2.
  ExpectFailedRank(SIGSTOP, "error: rank 0 \\(server\\): [^\n]*rank 2[^\n]* has sent nothing for",
                   LongTable3);
}

TEST(MpiRuntimeTest, StalledRankEndsACheckInRunWithAClearError) {
  // Check-ins over MPI: rank 0 waits for a step's updates; a rank that stays silent past protocol.mpi_timeout
  // ends the run with an error naming it and the step's clients it hosts, and nothing is published.
  ExpectFailedRank(
      SIGSTOP,
      "error: [^\n]*check-ins over MPI: rank 2 \\(clients? [0-9, ]+\\) did not return "
      "the updates of step [0-9]+ within 2 s",
      [](const std::string& out) {
        const std::string shared = testing::SharedDir();
        return "train --config " +
               Quoted(testing::SourceDir() + "/experiments/user_level_checkins_a9a.toml") + " --set " +
               Quoted("data.train=\"" + shared + "/datasets/libsvm/a9a.gz\"") + " --set " +
               Quoted("data.test=\"" + shared + "/datasets/libsvm/a9a.t.gz\"") +
               " --set checkin.variant=\"averaged\" --set checkin.batch_steps=1 --set checkin.steps=200 "
               "--set checkin.windows=100000 --set dp.epsilon=0 --set dp.sigma=2 "
               "--set protocol.runtime=\"mpi\" --set protocol.mpi_timeout=2 --out " +
               Quoted(out);
      });
}

TEST(MpiRuntimeTest, OneRankIsRefused) {
  TempDir dir;
  const CliResult run = testing::RunCommand(
      Mpirun(1) + Table3("--set protocol.runtime=\"mpi\" --out " + Quoted(dir.Path("one"))), dir);
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_THAT(run.err, HasSubstr("needs at least 2 ranks"));
  EXPECT_FALSE(fs::exists(dir.Path("one")));
}

// The runtime-invariant property test on MPI (the virtual and threads runtimes: runtime_invariants_test.cc):
// generated configurations over 3 ranks, each run checked from its outputs (events.csv, summary.json) by the
// oracle that shares no code with the server. ASYNCDP_MPI_INVARIANT_CASES sets the count (default 6).
TEST(MpiRuntimeTest, GeneratedConfigurationsKeepTheProtocolsInvariants) {
  const char* env = std::getenv("ASYNCDP_MPI_INVARIANT_CASES");
  const int cases = env != nullptr ? std::max(1, std::atoi(env)) : 6;
  TempDir dir;
  const std::string shared = testing::SharedDir();
  int truncated = 0;
  for (int i = 0; i < cases; ++i) {
    std::mt19937_64 rng(5000 + static_cast<uint64_t>(i));
    auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };
    invariants::RunFacts facts;
    facts.clients = uniform(2, 12);
    facts.planned_rounds = uniform(4, 20);
    facts.tau = std::array<int64_t, 3>{0, 1, 3}[static_cast<size_t>(uniform(0, 2))];
    std::string sets = " --set clients.count=" + std::to_string(facts.clients) +
                       " --set schedule.rounds=" + std::to_string(facts.planned_rounds) +
                       " --set protocol.tau=" + std::to_string(facts.tau) +
                       " --set data.rows_per_client=120 --set data.eval_rows=200 --set eval.points=1"
                       " --set eval.train_rows=0 --set schedule.sample_size=4 --set output.trace=true"
                       " --set protocol.allow_truncation=true --set seed=" + std::to_string(i + 1);
    bool exclusion = chance(0.5);
    if (chance(0.3)) {
      sets += " --set clients.straggler_ids=[" + std::to_string(uniform(0, facts.clients - 1)) +
              "] --set clients.straggler_factor=" + std::to_string(uniform(2, 5));
    }
    if (chance(0.3)) {
      sets += " --set clients.delay_ids=[" + std::to_string(uniform(0, facts.clients - 1)) +
              "] --set clients.delay_extra=0.00" + std::to_string(uniform(1, 9));
    }
    if (chance(0.3)) {
      facts.dropout_ids = {uniform(0, facts.clients - 1)};
      facts.dropout_round = uniform(1, facts.planned_rounds);
      sets += " --set clients.dropout_ids=[" + std::to_string(facts.dropout_ids[0]) +
              "] --set clients.dropout_round=" + std::to_string(facts.dropout_round);
      exclusion = true;
    }
    if (exclusion) sets += " --set protocol.exclude_after=0.0" + std::to_string(uniform(1, 9));
    SCOPED_TRACE(sets);
    const std::string out = dir.Path("case" + std::to_string(i));
    const CliResult run = testing::RunCommand(
        Mpirun(3) + Table3(sets + " --set protocol.runtime=\"mpi\" --out " + Quoted(out)), dir);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto summary = Summary(out);
    truncated += summary["truncated"].get<bool>() ? 1 : 0;
    for (const std::string& what : invariants::CheckRunInvariants(testing::ReadFile(out + "/events.csv"), summary, facts)) {
      ADD_FAILURE() << what;
    }
  }
  std::printf("mpi runtime invariants: %d cases, %d truncated (reported)\n", cases, truncated);
}

// staleness_exponent = 1 weights each update by its lag, which MPI now carries (computed_at): at tau = 0
// every update is on time, so MPI trains as the threads runtime does.
TEST(MpiRuntimeTest, UpdatesCarryTheirComputedAtRound) {
  TempDir dir;
  const std::string sets = kOneEpoch + "--set protocol.tau=0 --set dp.enabled=false --set protocol.staleness_exponent=1 ";
  const std::string out = dir.Path("mpi");
  const CliResult run = testing::RunCommand(Mpirun(3) + Table3(sets + "--set protocol.runtime=\"mpi\" --out " + Quoted(out)), dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto s = Summary(out);
  EXPECT_EQ(s["max_update_lag"].get<int64_t>(), 0);
  EXPECT_GT(s["test_accuracy"].get<double>(), 0.78);  // the majority class is 0.764
}

// Random check-ins over MPI: rank 0 draws the check-ins, adds the noise and applies the updates; the ranks
// hosting each step's clients compute their updates, which rank 0 sums in client order, so the run equals
// the threads runtime's bit for bit (metrics.csv and the final accuracy), at the record level (one record per
// client, one chosen per step) and the user level (averaged steps of several clients, balanced placement).
// Only rank 0 writes.
TEST(MpiRuntimeTest, CheckInsOverMpiEqualTheThreadsRuntime) {
  TempDir dir;
  const std::string shared = testing::SharedDir();
  const std::string data = " --set " + Quoted("data.train=\"" + shared + "/datasets/libsvm/a9a.gz\"") +
                           " --set " + Quoted("data.test=\"" + shared + "/datasets/libsvm/a9a.t.gz\"") + " ";
  struct Case {
    std::string name, args, mpi_args;
  };
  const std::vector<Case> cases = {
      {"record_level",
       "--config " + Quoted(testing::SourceDir() + "/experiments/checkins_a9a.toml") + data +
           "--set clients.count=2000 --set checkin.steps=2000 --set data.eval_rows=400 ",
       ""},
      {"user_level_averaged",
       "--config " + Quoted(testing::SourceDir() + "/experiments/user_level_checkins_a9a.toml") + data +
           "--set checkin.variant=\"averaged\" --set checkin.steps=20 --set checkin.windows=20 "
           "--set checkin.batch_steps=1 --set dp.epsilon=0 --set dp.sigma=2 --set data.eval_rows=400 ",
       "--set protocol.mpi_placement=\"balanced\" "},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string threads_dir = dir.Path(c.name + "_threads"), mpi_dir = dir.Path(c.name + "_mpi");
    const CliResult threads =
        testing::RunCommand(Quoted(testing::AsyncdpBinary()) + " train --quiet " + c.args +
                                "--set protocol.runtime=\"threads\" --out " + Quoted(threads_dir),
                            dir);
    ASSERT_EQ(threads.exit_code, 0) << threads.err;
    const CliResult run = testing::RunCommand(Mpirun(3) + "train --quiet " + c.args + c.mpi_args +
                                                  "--set protocol.runtime=\"mpi\" --out " + Quoted(mpi_dir),
                                              dir);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto s = Summary(mpi_dir), t = Summary(threads_dir);
    EXPECT_EQ(s["runtime"], "mpi");
    EXPECT_EQ(s["test_accuracy"], t["test_accuracy"]);
    // The runtimes agree on the outcome too: complete, in the fields asynchronous rounds use.
    for (const char* field : {"steps_run", "truncated", "stalled", "unfinished_clients", "unfinished"}) {
      EXPECT_EQ(s[field], t[field]) << field;
    }
    EXPECT_FALSE(s["truncated"].get<bool>());
    EXPECT_EQ(s["privacy"], t["privacy"]);
    EXPECT_EQ(Lines(mpi_dir + "/metrics.csv"), Lines(threads_dir + "/metrics.csv"));
  }
}

// A run that does not split over ranks, started by mpirun, would run whole in every rank and write the same
// --out once per rank: refused on every rank (exit 2), one message, no output directory.
TEST(MpiRuntimeTest, ARunThatDoesNotSplitOverRanksIsRefusedUnderMpirun) {
  TempDir dir;
  struct Case {
    std::string name, args, message;
    std::string config = "table3_strongly_convex.toml";
  };
  const std::vector<Case> cases = {
      {"virtual", "--set protocol.runtime=\"virtual\"",
       "protocol.runtime = \"virtual\" runs the whole simulation in each rank"},
      {"threads", "--set protocol.runtime=\"threads\"",
       "protocol.runtime = \"threads\" runs the whole simulation in each rank"},
      {"checkin", "--set protocol.runtime=\"virtual\" --set clients.count=2000",
       "protocol.runtime = \"virtual\" runs the whole simulation in each rank", "checkins_a9a.toml"},
      // Every rank would print the resolved configuration.
      {"print_config", "--set protocol.runtime=\"mpi\" --print-config",
       "--print-config resolves the configuration without running it"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string out = dir.Path(c.name);
    // --print-config writes nothing: it refuses --out.
    const std::string out_flag = c.name == "print_config" ? "" : " --out " + Quoted(out);
    const CliResult run = testing::RunCommand(Mpirun(2) + TrainA9a(c.config, c.args + out_flag), dir);
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_EQ(Occurrences(run.err, c.message), 1u) << run.err;
    EXPECT_FALSE(fs::exists(out));
  }
  // Every other command runs in one process.
  const CliResult calc = testing::RunCommand(Mpirun(2) + "calc --help", dir);
  EXPECT_EQ(calc.exit_code, 2) << calc.err;
  EXPECT_EQ(Occurrences(calc.err, "`asyncdp calc` runs in one process, but this is one of 2 MPI ranks"), 1u)
      << calc.err;
  // A command-line error is said once too, not once per rank.
  const CliResult flags = testing::RunCommand(Mpirun(2) + "train --config-doc --set seed=1", dir);
  EXPECT_EQ(flags.exit_code, 2) << flags.err;
  EXPECT_EQ(Occurrences(flags.err, "excludes"), 1u) << flags.err;
}

// Image data (IDX) are read whole on every rank; the ranks still host only their clients and the run
// completes (a placement check once aborted LeNet over MPI).
TEST(MpiRuntimeTest, ImageDataRunsOverMpi) {
  TempDir dir;
  const std::string out = dir.Path("lenet");
  const CliResult run = testing::RunCommand(
      Mpirun(3) + "train --quiet --config " + Quoted(testing::SourceDir() + "/experiments/quick_lenet.toml") +
          " --set clients.count=2 --set data.rows_per_client=40 --set schedule.sample_size=8 --set schedule.rounds=2"
          " --set eval.points=1"
          " --set data.eval_rows=200 --set protocol.runtime=\"mpi\" --out " + Quoted(out),
      dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto s = Summary(out);
  EXPECT_FALSE(s["truncated"].get<bool>());
  EXPECT_EQ(s["rounds_per_client"][0].get<int64_t>(), 2);
}

}  // namespace
}  // namespace asyncdp::sim
