// The threads runtime on a bounded worker pool (issue 17: clients are tasks, not OS threads; issue 14: no
// abort at many clients, no run kept alive by an excluded client's delay). Real data (a9a), fixed seeds.
// Expected: 10⁴ clients complete on two workers; an excluded client with a 1000 s message delay or a 10⁶
// straggler factor is cut off and the run ends in seconds; the protocol's ordering invariants hold with
// many clients on few workers, checked by an observer that shares no code with the server; a refused
// thread start is a ThreadStartError (exit 2 in the CLI) before any round runs.
#include <gtest/gtest.h>

#include <chrono>
#include <system_error>
#include <vector>

#include "sim/experiment.h"
#include "sim/protocol/server.h"
#include "sim/runtime/thread_runtime.h"
#include "sim/train.h"
#include "tests/sim/sim_test_util.h"

namespace asyncdp::sim {
namespace {

using testing::SmallA9aConfig;

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(ThreadRuntime, TenThousandClientsCompleteOnTwoWorkers) {
  TrainConfig c = SmallA9aConfig(10000, 3);  // 30,000 of a9a's 32,561 rows
  c.protocol.runtime = RuntimeKind::kThreads;
  c.protocol.worker_threads = 2;
  c.dp.delta = 1e-5;
  c.schedule.sample_size = 1;
  testing::UseRounds(c, 3);
  c.eval.points = 1;
  c.eval.train_rows = 0;
  const TrainResult r = RunTraining(c, {.progress = false});
  EXPECT_FALSE(r.summary["stalled"].get<bool>());
  EXPECT_EQ(r.summary["compute_threads"].get<int>(), 2);
  // The workers' CPU time over 2 × run_seconds: each worker's clock runs inside the run's wall interval, so
  // the share is in (0, 1] (a little slack for the clocks' granularity).
  ASSERT_TRUE(r.summary["cpu_share"].is_number());
  EXPECT_GT(r.summary["cpu_share"].get<double>(), 0.0);
  EXPECT_LE(r.summary["cpu_share"].get<double>(), 1.01);
  EXPECT_DOUBLE_EQ(r.summary["cpu_share"].get<double>(),
                   r.runtime.worker_cpu_seconds / (2.0 * r.runtime.wall_seconds));
  EXPECT_EQ(r.runtime.updates, 10000 * 3);
  EXPECT_EQ(r.summary["global_rounds"].get<int64_t>(), 3);
  for (const auto& rounds : r.summary["rounds_per_client"]) ASSERT_EQ(rounds.get<int64_t>(), 3);
  EXPECT_LE(r.summary["max_staleness"].get<int64_t>(), 1);
}

// Client 2 is excluded while it holds up the broadcast; what it does afterwards must not keep the run alive.
void ExpectCutOffPromptly(TrainConfig c) {
  c.protocol.exclude_after = 0.05;
  testing::UseRounds(c, 20);
  c.eval.points = 1;
  // The virtual runtime applies the same cut-off on its clock (it used to wait out the delay in virtual time
  // and report a complete run): the outcome is the same.
  for (const RuntimeKind runtime : {RuntimeKind::kThreads, RuntimeKind::kVirtual}) {
    SCOPED_TRACE(ToString(runtime));
    c.protocol.runtime = runtime;
    const auto start = std::chrono::steady_clock::now();
    const TrainResult r = RunTraining(c, {.progress = false});
    EXPECT_LT(SecondsSince(start), 20.0);  // it used to wait for the whole delay (1000 s, or ~days)
    ASSERT_GE(r.summary["excluded_clients"].size(), 1u);
    EXPECT_EQ(r.summary["excluded_clients"][0].get<int64_t>(), 2);
    EXPECT_FALSE(r.summary["stalled"].get<bool>());  // cut off by exclusion, not a stall
    EXPECT_TRUE(r.summary["truncated"].get<bool>());
    ASSERT_EQ(r.summary["unfinished"].size(), 1u);
    EXPECT_EQ(r.summary["unfinished"][0]["client"].get<int64_t>(), 2);
    EXPECT_EQ(r.summary["unfinished"][0]["reason"], "cut_off_after_exclusion");
    EXPECT_EQ(r.summary["rounds_per_client"][0].get<int64_t>(), 20);
    EXPECT_EQ(r.summary["rounds_per_client"][1].get<int64_t>(), 20);
    EXPECT_LT(r.runtime.updates, 3 * 20);  // the excluded client's late updates were never applied
  }
}

TEST(ThreadRuntime, AnExcludedClientWithAThousandSecondDelayDoesNotKeepTheRunAlive) {
  TrainConfig c = SmallA9aConfig(3, 300);
  c.clients.delay_ids = {2};
  c.clients.delay_extra = 1000.0;
  ExpectCutOffPromptly(c);
}

TEST(ThreadRuntime, AnExcludedStragglerDoesNotKeepTheRunAlive) {
  TrainConfig c = SmallA9aConfig(3, 300);
  c.clients.straggler_ids = {2};
  c.clients.straggler_factor = 1e6;  // ~seconds to days per round
  ExpectCutOffPromptly(c);
}

// Independent record of what reaches the server: each client's rounds arrive in order, and v̂_k is formed
// only once every client's rounds 0..k−1 are in (no faults, so every client blocks until its plan is done).
class OrderChecker final : public RunObserver {
 public:
  explicit OrderChecker(size_t clients) : delivered_(clients, 0) {}
  void OnUpdate(const UpdateMessage& message, const RunClock& /*clock*/) override {
    int64_t& delivered = delivered_[static_cast<size_t>(message.client)];
    if (message.local_round != delivered) ++out_of_order_;
    ++delivered;
  }
  void OnGlobalRound(const ServerProtocol& server, const RunClock& /*clock*/) override {
    const int64_t k = server.global_round();
    if (k <= last_round_) ++not_increasing_;
    last_round_ = k;
    for (int64_t delivered : delivered_) {
      if (delivered < k) ++premature_;
    }
  }
  int64_t out_of_order_ = 0, premature_ = 0, not_increasing_ = 0;

 private:
  std::vector<int64_t> delivered_;
  int64_t last_round_ = 0;
};

TEST(ThreadRuntime, ProtocolInvariantsHoldWithManyClientsOnFewWorkers) {
  for (int workers : {1, 2, 3}) {
    for (int64_t tau : {0, 1, 3}) {
      TrainConfig c = SmallA9aConfig(400, 20);
      c.protocol.runtime = RuntimeKind::kThreads;
      c.protocol.worker_threads = workers;
      c.protocol.tau = tau;
      c.dp.delta = 1e-5;
      c.schedule.sample_size = 2;
      testing::UseRounds(c, 8);
      c.eval.points = 2;
      c.eval.train_rows = 0;
      OrderChecker checker(400);
      const TrainResult r = RunTraining(c, {.progress = false, .observer = &checker});
      SCOPED_TRACE(::testing::Message() << "workers " << workers << ", tau " << tau);
      EXPECT_EQ(checker.out_of_order_, 0);
      EXPECT_EQ(checker.premature_, 0);
      EXPECT_EQ(checker.not_increasing_, 0);
      EXPECT_LE(r.summary["max_staleness"].get<int64_t>(), tau);
      EXPECT_EQ(r.summary["global_rounds"].get<int64_t>(), 8);
      EXPECT_EQ(r.runtime.updates, 400 * 8);
      EXPECT_EQ(r.summary["compute_threads"].get<int>(), workers);
      EXPECT_FALSE(r.summary["stalled"].get<bool>());
    }
  }
}

TEST(ThreadRuntime, ARefusedThreadStartIsAnInputErrorBeforeAnyRoundRuns) {
  TrainConfig c = SmallA9aConfig(5, 300);
  c.protocol.runtime = RuntimeKind::kThreads;
  c.protocol.worker_threads = 4;
  Experiment e = BuildExperiment(c);
  auto clients = MakeClients(e);
  ServerProtocol server(5, e.initial_model);
  RunObserver nobody;
  int started = 0;
  const ThreadStarter refuse_second = [&](std::function<void()> body) {
    if (++started == 2) throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
    return std::thread(std::move(body));
  };
  try {
    RunThreads(e.protocol.runtime, e.protocol.faults, clients, server, nobody, refuse_second);
    FAIL() << "expected ThreadStartError";
  } catch (const ThreadStartError& error) {
    EXPECT_EQ(error.where(), "protocol.worker_threads");
    EXPECT_NE(error.message().find("worker thread 3 of 4"), std::string::npos) << error.what();
  }
  for (const auto& client : clients) EXPECT_EQ(client->local_round(), 0);
  EXPECT_EQ(server.updates_applied(), 0);
}

// The stalled-run scenario (every client waits forever) is in exclusion_test.cc, on both runtimes.

TEST(ThreadRuntime, WorkerCountDefaultsToTheCoresAndNeverExceedsTheClients) {
  RuntimeOptions o;
  o.worker_threads = 0;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  EXPECT_EQ(ThreadRuntimeWorkers(o, 1000), cores);
  EXPECT_EQ(ThreadRuntimeWorkers(o, 1), 1);
  o.worker_threads = 8;
  EXPECT_EQ(ThreadRuntimeWorkers(o, 3), 3);
  EXPECT_EQ(ThreadRuntimeWorkers(o, 100), 8);
}

}  // namespace
}  // namespace asyncdp::sim
