// End-to-end: how an MPI run ends beside the other two runtimes, on the same configuration — an excluded
// client with messages in flight is cut off, a dropped-out client with a huge exclude_after is excluded at
// once (docs/design.md, "End of a run"). The built `asyncdp` under `mpirun --oversubscribe`, and the same
// binary for virtual and threads. Registered only when CMake found MPI (tests/CMakeLists.txt).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/apps/cli_runner.h"
#include "tests/data/temp_files.h"
#include "tests/sim/runtime/mpi_test_support.h"

namespace asyncdp::sim {
namespace {

using ::asyncdp::testing::TempDir;
using testing::CliResult;

// A client drops out and exclude_after is 10^6 s: nothing can happen before the exclusion but the wait. Every
// client rank says so when it is idle holding the newest model (kIdle), and rank 0 skips the idle time as the
// threads runtime and the virtual clock do: the run ends within seconds with their outcome. It used to wait
// the 10^6 s (11 days) in real time, twice: for the exclusion, then for the cut-off at the end.
TEST(MpiRuntimeTest, ADroppedOutClientWithAHugeExcludeAfterIsExcludedAtOnceWithTheOtherRuntimesOutcome) {
  TempDir dir;
  const std::string dropout =
      "--set schedule.rounds=300 --set protocol.exclude_after=1e6 --set 'clients.dropout_ids=[1]' "
      "--set clients.dropout_round=5 ";
  std::vector<nlohmann::json> summaries;
  for (const std::string runtime : {"virtual", "threads", "mpi"}) {
    SCOPED_TRACE(runtime);
    const std::string out = dir.Path(runtime);
    const std::string run = Table3(dropout + "--set protocol.runtime=" + runtime + " --out " + Quoted(out));
    const auto start = std::chrono::steady_clock::now();
    const CliResult r = testing::RunCommand(
        (runtime == "mpi" ? Mpirun(4) : Quoted(testing::AsyncdpBinary()) + " ") + run, dir);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 60.0);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    summaries.push_back(Summary(out));
  }
  EXPECT_EQ(summaries[0]["rounds_per_client"], nlohmann::json::array({300, 5, 300, 300, 300}));
  EXPECT_EQ(summaries[0]["excluded_clients"], nlohmann::json::array({1}));
  for (const char* key : {"truncated", "stalled", "unfinished", "rounds_per_client", "excluded_clients", "epsilon"}) {
    EXPECT_EQ(summaries[1][key], summaries[0][key]) << "threads, " << key;
    EXPECT_EQ(summaries[2][key], summaries[0][key]) << "mpi, " << key;
  }
}

// Client 2's messages take 1,000 s, so it is excluded; a message delay is latency, not a pause, so it goes on
// computing while they are in flight, and once everything else is done it is cut off after exclude_after more
// silence — the same outcome on the three runtimes. The MPI client used to sleep through each delay before
// it sent: it had run 1 round where the threads and virtual runtimes ran all 300.
TEST(MpiRuntimeTest, AnExcludedClientWithMessagesInFlightGoesOnAndIsCutOffAsOnThreadsAndVirtual) {
  TempDir dir;
  const std::string cut_off =
      "--set schedule.rounds=300 --set protocol.exclude_after=0.3 --set 'clients.delay_ids=[2]' "
      "--set clients.delay_extra=1000 ";
  std::vector<nlohmann::json> summaries;
  for (const std::string runtime : {"virtual", "threads", "mpi"}) {
    SCOPED_TRACE(runtime);
    const std::string out = dir.Path(runtime);
    const std::string run = Table3(cut_off + "--set protocol.runtime=" + runtime + " --out " + Quoted(out));
    const CliResult r = testing::RunCommand(
        (runtime == "mpi" ? Mpirun(3) : Quoted(testing::AsyncdpBinary()) + " ") + run, dir);
    EXPECT_EQ(r.exit_code, 4) << r.err;
    summaries.push_back(Summary(out));
  }
  EXPECT_EQ(summaries[0]["unfinished"], nlohmann::json::parse(R"([{"client": 2, "reason": "cut_off_after_exclusion",
      "rounds": 300, "applied_rounds": 0, "planned_rounds": 300}])"));
  for (const char* key : {"truncated", "stalled", "unfinished", "rounds_per_client", "epsilon"}) {
    EXPECT_EQ(summaries[1][key], summaries[0][key]) << "threads, " << key;
    EXPECT_EQ(summaries[2][key], summaries[0][key]) << "mpi, " << key;
  }
  // In wall time a loaded machine (a sanitizer build) can exclude another laggard for a moment too, which
  // its stop notice re-admits; client 2 is excluded on every runtime.
  for (const auto& s : summaries) {
    const auto& ids = s["excluded_clients"];
    EXPECT_NE(std::find(ids.begin(), ids.end(), nlohmann::json(2)), ids.end()) << ids;
  }
}

}  // namespace
}  // namespace asyncdp::sim
