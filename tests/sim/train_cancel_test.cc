// TrainOptions::cancel (RuntimeOptions::cancel): an embedding (the Python module's Ctrl-C) stops a run
// early. Expected: both runtimes end promptly without hanging, the summary says "cancelled", every client
// stopped short of its plan, and the reported epsilon covers exactly the rounds that ran (never more
// privacy claimed than the full run's accounting would give for them).
#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "sim/train.h"
#include "tests/sim/sim_test_util.h"

namespace asyncdp::sim {
namespace {

// Requests the stop once the server has formed global round `at`.
class CancelAt final : public RunObserver {
 public:
  CancelAt(int64_t at, std::atomic<bool>& flag) : at_(at), flag_(flag) {}
  void OnGlobalRound(const ServerProtocol& server, const RunClock& /*clock*/) override {
    if (server.global_round() >= at_) flag_.store(true);
  }

 private:
  int64_t at_;
  std::atomic<bool>& flag_;
};

class RuntimeCancelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RuntimeCancelTest, StopsEarlyAndAccountsTheRoundsThatRan) {
  TrainConfig c = testing::SmallA9aConfig(3, 400);
  c.protocol.runtime = *EnumFromString<RuntimeKind>(GetParam());
  c.schedule.epochs = 20.0;  // 800 rounds per client if nothing stops it
  const TrainResult full = RunTraining(c, {.progress = false});
  ASSERT_FALSE(full.summary.contains("cancelled"));
  const int64_t planned = full.summary["rounds_per_client"][0].get<int64_t>();

  std::atomic<bool> cancel{false};
  CancelAt observer(5, cancel);
  const TrainResult stopped = RunTraining(c, {.progress = false, .observer = &observer, .cancel = &cancel});
  EXPECT_TRUE(stopped.summary["cancelled"].get<bool>());
  EXPECT_TRUE(stopped.runtime.cancelled);
  EXPECT_FALSE(stopped.runtime.stalled);
  for (const auto& rounds : stopped.summary["rounds_per_client"]) EXPECT_LT(rounds.get<int64_t>(), planned / 2);
  EXPECT_LT(stopped.summary["global_rounds"].get<int64_t>(), full.summary["global_rounds"].get<int64_t>() / 2);
  EXPECT_LT(stopped.summary["epsilon"]["pld"].get<double>(), full.summary["epsilon"]["pld"].get<double>());
}

INSTANTIATE_TEST_SUITE_P(Runtimes, RuntimeCancelTest, ::testing::Values("virtual", "threads"));

}  // namespace
}  // namespace asyncdp::sim
