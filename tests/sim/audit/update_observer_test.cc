// RunObserver::OnUpdate, the audit's white-box view: both runtimes report every update the server applies,
// exactly once, with the U the server applies (the final model is the initial one minus sum eta_i U).
#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "sim/experiment.h"
#include "sim/runtime/thread_runtime.h"
#include "sim/runtime/virtual_runtime.h"
#include "tests/sim/sim_test_util.h"

namespace asyncdp::sim {
namespace {

class UpdateLog final : public RunObserver {
 public:
  explicit UpdateLog(const Eigen::VectorXf& initial) : replay(initial.cast<double>()) {}
  void OnUpdate(const UpdateMessage& message, const RunClock& /*clock*/) override {
    ++seen[{message.client, message.local_round}];
    replay -= message.step_size * message.update.cast<double>();
  }
  std::map<std::pair<int64_t, int64_t>, int> seen;
  Eigen::VectorXd replay;
};

void ExpectEveryUpdateOnce(RuntimeKind kind) {
  TrainConfig c = testing::SmallA9aConfig(3, 100);
  testing::UseRounds(c, 6);
  c.protocol.runtime = kind;
  const Experiment e = BuildExperiment(c);
  auto clients = MakeClients(e);
  ServerProtocol server(c.clients.count, e.initial_model);
  UpdateLog log(e.initial_model);
  const RuntimeReport report = kind == RuntimeKind::kVirtual
                                   ? RunVirtual(e.protocol.runtime, e.protocol.faults, clients, server, log)
                                   : RunThreads(e.protocol.runtime, e.protocol.faults, clients, server, log);
  EXPECT_EQ(report.updates, 18);
  ASSERT_EQ(log.seen.size(), 18u);
  for (const auto& [key, count] : log.seen) EXPECT_EQ(count, 1) << key.first << "," << key.second;
  EXPECT_LT((log.replay - server.model().cast<double>()).cwiseAbs().maxCoeff(), 1e-4);
}

TEST(UpdateObserverTest, VirtualRuntimeReportsEveryUpdateOnce) {
  ExpectEveryUpdateOnce(RuntimeKind::kVirtual);
}
TEST(UpdateObserverTest, ThreadsRuntimeReportsEveryUpdateOnce) {
  ExpectEveryUpdateOnce(RuntimeKind::kThreads);
}

}  // namespace
}  // namespace asyncdp::sim
