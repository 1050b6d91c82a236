// No setting silently ignored over MPI (the in-process twin is tests/sim/config_usage_test.cc): every key
// the rules call read in an MPI run, changed to another valid value, changes what the run reports — or it
// is listed with the reason it has no effect in this small run. Each rank parses the configuration and
// loads only its own clients' rows, so a key read in process can still be dropped on the way to a rank.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "sim/config_fields.h"
#include "sim/config_io.h"
#include "sim/config_usage.h"
#include "tests/apps/cli_runner.h"
#include "tests/data/temp_files.h"
#include "tests/sim/config_change.h"
#include "tests/sim/runtime/mpi_test_support.h"

namespace asyncdp::sim {
namespace {

using ::asyncdp::testing::TempDir;
using testing::CliResult;
using testing::Quoted;

// What an MPI run in `dir` reports, apart from timings and the echo of its configuration.
std::string MpiOutputs(const std::string& dir) {
  return ::asyncdp::testing::OutputsWithoutTimings(testing::ReadFile(dir + "/metrics.csv"),
                                                   testing::ReadFile(dir + "/clients.csv"), Summary(dir));
}

TEST(MpiRuntimeTest, AKeyCalledReadChangesAnMpiRunOrSaysWhyNot) {
  ASSERT_FALSE(testing::SharedFile("datasets/libsvm/a9a.gz").empty());
  // One client on rank 1, synchronous (tau = 0): it computes each round on the broadcast model, which holds
  // all of its updates, so all but the wall clock is deterministic. (With tau = 1 it may compute ahead and
  // then take a broadcast without its newest update: 1 run in 20 differed. With more clients, arrival
  // order moves the bits.)
  const std::string shared = testing::SharedDir() + "/datasets/libsvm/";
  const TrainConfig base = ParseConfigText(
      "seed = 11\n[data]\ntrain = \"" + shared + "a9a.gz\"\ntest = \"" + shared +
          "a9a.t.gz\"\nrows_per_client = 300\neval_rows = 2000\n[model]\nkind = \"logistic_l2\"\n"
          "[clients]\ncount = 1\n[dp]\nclip = 0.1\nsigma = 2.0\n[schedule]\nsample_size = 10\nrounds = 6\n"
          "[protocol]\nruntime = \"mpi\"\ntau = 0\n[eval]\npoints = 4\n",
      "base.toml");
  const std::map<std::string, std::string> no_effect_here = {
      {"data.format", "\"auto\" already reads the LIBSVM files as LIBSVM"},
      {"data.features", "another column count is refused or pads columns no row uses"},
      {"data.partition", "one client holds the same rows under either split"},
      {"protocol.allow_truncation", "the run completes: nothing to accept"},
      {"protocol.exclude_after", "no client is silent"},
      {"protocol.server_step", "per_client's w = 1/n is 1 for one client"},
      {"protocol.staleness_exponent", "a synchronous client's updates are never stale: (1 + 0)^(-a) = 1"},
      {"protocol.tau", "tau = 1 lets a lone client compute ahead, on a local model equal to the broadcast"},
      {"protocol.delay_rule",
       "unbounded lets a lone client compute ahead, on a local model equal to the broadcast"},
      {"protocol.worker_threads", "one client runs on one worker thread"},
      {"protocol.mpi_placement", "one client is on rank 1 under every placement"},
      {"protocol.mpi_timeout", "no rank is silent for a second"},
      {"clients.delay_ids", "a synchronous lone client's delayed messages move only the wall clock"},
      {"clients.straggler_ids", "a lone straggler's slower rounds move only the wall clock"},
      {"dp.halt_at_budget", "no budget halt is due in 6 rounds"},
      {"output.trace", "the event trace is a file of its own (events.csv), not part of these outputs"},
      {"dp.sigma_schedule", "the one-entry schedule [1] multiplies sigma by 1"},
      {"eval.points", "5 points over 6 rounds evaluate the same rounds as 4 (every second one)"}};
  // Each run in a directory of its own, three at a time: an mpirun of this size spends most of its 0.45 s
  // starting ranks, not computing (the test is RUN_SERIAL: it has the machine).
  // Mpirun() sets environment variables: called here, before any thread, not inside the runs.
  const std::string mpirun = Mpirun(2);
  const auto run = [mpirun](const TrainConfig& config, const TempDir& dir) -> CliResult {
    const std::string path = dir.Path("config.toml");
    std::ofstream(path) << ToToml(config);
    return testing::RunCommand(mpirun + "train --quiet --config " + Quoted(path) + " --out " +
                                   Quoted(dir.Path("out")) + " >/dev/null",
                               dir);
  };
  TempDir base_dir;
  const CliResult first = run(base, base_dir);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string baseline = MpiOutputs(base_dir.Path("out"));
  struct Probe {
    std::string key, value;
    TrainConfig config;
    std::unique_ptr<TempDir> dir = std::make_unique<TempDir>();
    std::future<CliResult> result;
  };
  std::vector<Probe> probes;
  TrainConfig fields_of = base;
  const size_t keys = ConfigFields(fields_of).size();
  for (size_t i = 0; i < keys; ++i) {
    TrainConfig changed = base;
    auto fields = ConfigFields(changed);
    ConfigField& field = fields[i];
    if (!::asyncdp::testing::SetOtherValue(field) || UnusedKeyReason(field.key, changed)) continue;
    try {
      ValidateConfig(changed);
    } catch (const InputError&) {
      continue;  // refused with a message: not silent (and no mpirun needed to say so)
    }
    Probe& probe = probes.emplace_back();
    probe.key = field.key;
    probe.value = FieldValueText(field);
    probe.config = changed;
  }
  constexpr size_t kConcurrent = 3;
  for (size_t i = 0; i < probes.size(); ++i) {
    if (i >= kConcurrent) probes[i - kConcurrent].result.wait();
    probes[i].result =
        std::async(std::launch::async, run, std::cref(probes[i].config), std::cref(*probes[i].dir));
  }
  int checked = 0;
  for (Probe& probe : probes) {
    SCOPED_TRACE(probe.key + " = " + probe.value);
    const CliResult result = probe.result.get();
    if (result.exit_code == 2) continue;  // refused with a message (e.g. by the data loader)
    ASSERT_EQ(result.exit_code, 0) << result.err;
    ++checked;
    if (MpiOutputs(probe.dir->Path("out")) == baseline) {
      EXPECT_TRUE(no_effect_here.contains(probe.key)) << probe.key << " is called read but changed nothing";
    }
  }
  EXPECT_GT(checked, 25);
}

}  // namespace
}  // namespace asyncdp::sim
