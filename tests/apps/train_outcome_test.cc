// End-to-end: how an `asyncdp train` run ends — the runtimes' agreement on a run with dropped-out clients
// and on one with an excluded client cut off, and a truncated run's report and exit code (docs/design.md, "End of a run").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/apps/cli_runner.h"
#include "tests/apps/small_table3.h"

namespace asyncdp::testing {
namespace {

using ::testing::HasSubstr;

// Every client but one drops out and protocol.exclude_after is 10^6 s. Nothing can happen before the
// exclusion but the wait, so the threads runtime skips it (its liveness clock jumps, as the virtual clock
// does): the run ends within seconds, not in 11 days and not as a stall, with the virtual runtime's outcome.
// It used to end as "stalled" (exit 4) whenever the exclusion was due more than 2 s after the last message,
// while the virtual and MPI runtimes excluded the silent clients and went on.
TEST(TrainCommand, ADroppedOutClientIsExcludedAtOnceOnThreadsWithTheVirtualRuntimesOutcome) {
  TempDir dir;
  const std::string dropouts =
      " --set protocol.exclude_after=1e6 --set clients.dropout_ids=[0,1,2,3] --set clients.dropout_round=20";
  const auto start = std::chrono::steady_clock::now();
  const CliResult r =
      RunAsyncdp(SmallTable3Args(dir.Path("threads"), 300) + dropouts + " --set protocol.runtime=threads", dir);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const CliResult v = RunAsyncdp(SmallTable3Args(dir.Path("virtual"), 300) + dropouts, dir);
  ASSERT_EQ(v.exit_code, 0) << v.err;
  const auto threads = nlohmann::json::parse(ReadFile(dir.Path("threads") + "/summary.json"));
  const auto virtual_clock = nlohmann::json::parse(ReadFile(dir.Path("virtual") + "/summary.json"));
  for (const char* key : {"truncated", "stalled", "unfinished", "rounds_per_client", "excluded_clients", "epsilon"}) {
    EXPECT_EQ(threads[key], virtual_clock[key]) << key;
  }
  EXPECT_FALSE(threads["truncated"].get<bool>());
  EXPECT_EQ(threads["rounds_per_client"], nlohmann::json::array({20, 20, 20, 20, 300}));
  EXPECT_EQ(threads["excluded_clients"], nlohmann::json::array({0, 1, 2, 3}));
}

// A truncated run never passes for success: client 2's messages take 1,000 s, so it is excluded and, once
// everything else is done and it has stayed silent for exclude_after more, cut off (docs/design.md, "End of
// a run"). The run ends promptly, names the client and why, and exits 4 — or 0 with
// protocol.allow_truncation, still saying truncated.
TEST(TrainCommand, ATruncatedThreadsRunEndsQuicklyNamesTheClientsAndExitsFour) {
  TempDir dir;
  const std::string cut_off =
      " --set protocol.runtime=threads --set protocol.exclude_after=0.05 "
      "--set clients.delay_ids=[2] --set clients.delay_extra=1000";
  const auto start = std::chrono::steady_clock::now();
  const CliResult r = RunAsyncdp(SmallTable3Args(dir.Path("cut"), 300) + cut_off, dir);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_THAT(r.err, HasSubstr("client 2 (cut_off_after_exclusion"));
  EXPECT_THAT(r.err, HasSubstr("truncated"));
  const auto summary = nlohmann::json::parse(ReadFile(dir.Path("cut") + "/summary.json"));
  EXPECT_TRUE(summary["truncated"].get<bool>());
  EXPECT_FALSE(summary["stalled"].get<bool>());
  EXPECT_EQ(summary["unfinished_clients"], nlohmann::json::array({2}));
  EXPECT_EQ(summary["unfinished"][0]["reason"], "cut_off_after_exclusion");
  EXPECT_THAT(ReadFile(dir.Path("cut") + "/clients.csv"), HasSubstr(",cut_off_after_exclusion,"));
  const CliResult allowed = RunAsyncdp(
      SmallTable3Args(dir.Path("allowed"), 300) + cut_off + " --set protocol.allow_truncation=true", dir);
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_TRUE(nlohmann::json::parse(ReadFile(dir.Path("allowed") + "/summary.json"))["truncated"].get<bool>());
}

// Client 2's messages take 1,000 s: it is excluded, goes on computing (a message delay does not hold the
// client up), and once everything else is done it is cut off after exclude_after more silence. The virtual
// runtime used to drain its event queue instead — wait 1,000 virtual seconds for the messages and report a
// complete run — where threads and MPI report client 2 cut off (exit 4). Now all three apply the same rule.
TEST(TrainCommand, AnExcludedClientWithMessagesInFlightIsCutOffOnVirtualAsOnThreads) {
  TempDir dir;
  const std::string cut_off =
      " --set protocol.exclude_after=0.3 --set clients.delay_ids=[2] --set clients.delay_extra=1000";
  const CliResult t =
      RunAsyncdp(SmallTable3Args(dir.Path("threads"), 300) + cut_off + " --set protocol.runtime=threads", dir);
  EXPECT_EQ(t.exit_code, 4) << t.err;
  const CliResult v = RunAsyncdp(SmallTable3Args(dir.Path("virtual"), 300) + cut_off, dir);
  EXPECT_EQ(v.exit_code, 4) << v.err;
  EXPECT_THAT(v.err, HasSubstr("client 2 (cut_off_after_exclusion"));
  const auto threads = nlohmann::json::parse(ReadFile(dir.Path("threads") + "/summary.json"));
  const auto virtual_clock = nlohmann::json::parse(ReadFile(dir.Path("virtual") + "/summary.json"));
  // Not excluded_clients: in wall time a loaded machine (a sanitizer build) can exclude another laggard for
  // a moment too, which its stop notice re-admits.
  for (const char* key : {"truncated", "stalled", "unfinished", "rounds_per_client", "epsilon"}) {
    EXPECT_EQ(threads[key], virtual_clock[key]) << key;
  }
  EXPECT_EQ(virtual_clock["excluded_clients"], nlohmann::json::array({2}));
  EXPECT_EQ(virtual_clock["unfinished"], nlohmann::json::parse(R"([{"client": 2, "reason": "cut_off_after_exclusion",
      "rounds": 300, "applied_rounds": 0, "planned_rounds": 300}])"));
  EXPECT_LT(virtual_clock["virtual_seconds"].get<double>(), 10.0);  // ended at the cut-off, not at 1,000 s
}

}  // namespace
}  // namespace asyncdp::testing
