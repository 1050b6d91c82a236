// End-to-end tests of the MPI runtime (protocol.runtime = "mpi"): the built `asyncdp` binary under
// `mpirun --oversubscribe` on this machine (shared-memory transport), against the threads runtime on the
// same configuration. Registered only when CMake found MPI (tests/CMakeLists.txt).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/apps/cli_runner.h"
#include "tests/data/temp_files.h"
#include "tests/sim/runtime/invariant_oracle.h"
#include "tests/test_data.h"

namespace asyncdp::sim {
namespace {

namespace fs = std::filesystem;
using ::asyncdp::testing::TempDir;
using testing::CliResult;
using ::testing::HasSubstr;
using testing::Quoted;

// The Table 3 strongly convex configuration with its data paths made absolute.
std::string Table3(const std::string& extra = "", bool quiet = true) {
  const std::string shared = testing::SharedDir();
  return std::string("train ") + (quiet ? "--quiet " : "") + "--config " + Quoted(testing::SourceDir() + "/experiments/table3_strongly_convex.toml") +
         " --set " + Quoted("data.train=\"" + shared + "/datasets/libsvm/a9a.gz\"") + " --set " +
         Quoted("data.test=\"" + shared + "/datasets/libsvm/a9a.t.gz\"") + " " + extra;
}

// Adds " value" to the environment variable name once (sanitizer option lists are space-separated).
void AppendEnv(const char* name, const std::string& value) {
  const char* current = std::getenv(name);
  const std::string old = current ? current : "";
  if (old.find(value) != std::string::npos) return;
  setenv(name, (old.empty() ? value : old + " " + value).c_str(), 1);
}

// mpirun as root inside CI containers needs these; the test sets them itself.
std::string Mpirun(int ranks) {
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  // Under the asan/tsan presets the ranks are instrumented. Open MPI's uninstrumented threads would be
  // reported as races: the suppression file names only Open MPI's libraries, so a race in asyncdp's own
  // threads still fails the run (scripts/sanitizers/openmpi.tsan.supp). Its start-up allocations are
  // reported as leaks from "<unknown module>" (the mca_* components are unloaded before the leak check),
  // which no suppression can name: leak checking is off in the ranks (address and UB errors still abort
  // them; the rest of the suite checks leaks, the threads runtime included). Later options win.
  AppendEnv("ASAN_OPTIONS", "detect_leaks=0");
  AppendEnv("TSAN_OPTIONS", "suppressions=" + testing::SourceDir() + "/scripts/sanitizers/openmpi.tsan.supp");
  return std::string("timeout 120 ") + ASYNCDP_MPIEXEC + " --oversubscribe --allow-run-as-root -np " +
         std::to_string(ranks) + " " + Quoted(testing::AsyncdpBinary()) + " ";
}

nlohmann::json Summary(const std::string& dir) {
  return nlohmann::json::parse(testing::ReadFile(dir + "/summary.json"));
}

std::string FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Table 3 shortened to one epoch (K = N_c, 250 rounds per client) to keep the test to seconds: on an
// oversubscribed machine a global round over MPI waits for several processes to be scheduled.
const std::string kOneEpoch = "--set schedule.epochs=1 ";

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
void ExpectFailedRank(int signal, const std::string& expected_message) {
  TempDir dir;
  const std::string out = dir.Path("killed");
  const std::string command =
      Mpirun(4) + Table3("--set protocol.runtime=\"mpi\" --set schedule.epochs=500 --set protocol.mpi_timeout=2 "
                         "--out " + Quoted(out), /*quiet=*/false) +
      " 2>" + Quoted(dir.Path("stderr.txt"));
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

TEST(MpiRuntimeTest, KilledClientRankEndsTheRunWithoutResults) {
  ExpectFailedRank(SIGKILL, "rank 2");
}

TEST(MpiRuntimeTest, StalledClientRankTimesOutWithAClearError) {
  // The server notices either the silent rank (heartbeats) or the client on it that holds up a global round,
  // whichever of its two time-outs fires first (under ASan the second one did): both name rank 2.
  ExpectFailedRank(SIGSTOP, "error: rank 0 \\(server\\): [^\n]*rank 2[^\n]* has sent nothing for");
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

// A mode that does not run on MPI (random check-ins) stops on every rank, with one message (rank 0's).
TEST(MpiRuntimeTest, AModeWithoutMpiSupportStopsEveryRankWithOneMessage) {
  TempDir dir;
  const CliResult run = testing::RunCommand(
      Mpirun(3) + Table3("--set protocol.participation=\"check_in\" --set clients.count=2000 "
                         "--set protocol.runtime=\"mpi\" --out " + Quoted(dir.Path("checkin"))),
      dir);
  EXPECT_NE(run.exit_code, 0);
  const std::string needle = "protocol.runtime: is set to \"mpi\" but this run does not read it";
  size_t count = 0;
  for (size_t at = run.err.find(needle); at != std::string::npos; at = run.err.find(needle, at + 1)) ++count;
  EXPECT_EQ(count, 1u) << run.err;
  EXPECT_FALSE(fs::exists(dir.Path("checkin")));
}

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

size_t Occurrences(const std::string& text, const std::string& needle);

// The lines of a CSV file.
std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
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
  // Balanced placement is decided from the planned work before the phases are planned: refused.
  const CliResult balanced = testing::RunCommand(
      Mpirun(3) + base + "--set protocol.runtime=\"mpi\" --set protocol.mpi_placement=\"balanced\" --out " +
          Quoted(dir.Path("balanced")),
      dir);
  EXPECT_NE(balanced.exit_code, 0);
  EXPECT_THAT(balanced.err,
              HasSubstr("protocol.mpi_placement: \"balanced\" places clients by their planned work"));
}

// Counts the occurrences of `needle` in `text`.
size_t Occurrences(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

// A run that does not split over ranks, started by mpirun, would run whole in every rank and write the same
// --out once per rank: refused on every rank (exit 2), one message, no output directory.
TEST(MpiRuntimeTest, ARunThatDoesNotSplitOverRanksIsRefusedUnderMpirun) {
  TempDir dir;
  struct Case {
    std::string name, args, message;
  };
  const std::vector<Case> cases = {
      {"virtual", "--set protocol.runtime=\"virtual\"",
       "protocol.runtime = \"virtual\" runs the whole simulation in each rank"},
      {"threads", "--set protocol.runtime=\"threads\"",
       "protocol.runtime = \"threads\" runs the whole simulation in each rank"},
      {"checkin", "--set protocol.participation=\"check_in\" --set clients.count=2000",
       "random check-ins run in one process"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string out = dir.Path(c.name);
    const CliResult run = testing::RunCommand(Mpirun(2) + Table3(c.args + " --out " + Quoted(out)), dir);
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_EQ(Occurrences(run.err, c.message), 1u) << run.err;
    EXPECT_FALSE(fs::exists(out));
  }
  // Every other command runs in one process.
  const CliResult calc = testing::RunCommand(Mpirun(2) + "calc --help", dir);
  EXPECT_EQ(calc.exit_code, 2) << calc.err;
  EXPECT_EQ(Occurrences(calc.err, "`asyncdp calc` runs in one process, but this is one of 2 MPI ranks"), 1u)
      << calc.err;
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
