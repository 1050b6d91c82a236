// A check-in run honours the run options every participation policy is given (TrainOptions: the
// embedding's observer and cancellation, sim/train_result.h) and reports its end in the fields asynchronous
// rounds use (sim/summary.h): observers see every step, a cancelled run stops after the current step and
// says so (cancelled, truncated, every client unfinished). The common fields themselves: summary_test.cc.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <string>

#include "sim/train.h"
#include "tests/sim/sim_test_util.h"

namespace asyncdp::sim {
namespace {

TrainConfig SmallCheckIns() {
  TrainConfig c;
  testing::UseA9a(c);
  c.data.eval_rows = 2000;
  c.model.kind = "logistic";
  c.clients.count = 5000;
  c.protocol.participation = Participation::kCheckIn;
  c.checkin.steps = 1000;
  c.checkin.windows = 2;
  c.checkin.p0 = 0.5;
  c.checkin.batch_steps = 10;
  c.dp.clip = 1.0;
  c.dp.sigma = 2.0;
  c.schedule.step_rule = StepSizeSchedule::kConstant;
  c.schedule.eta0 = 0.1;
  c.eval.points = 3;
  c.seed = 3;
  return c;
}

// Counts the check-in events; sets *cancel once `cancel_at` steps are taken (0: never).
class StepCounter final : public RunObserver {
 public:
  explicit StepCounter(int64_t cancel_at = 0, std::atomic<bool>* cancel = nullptr)
      : cancel_at_(cancel_at), cancel_(cancel) {}
  void OnCheckInStep(int64_t taken, int64_t total, const RunClock& clock) override {
    EXPECT_EQ(taken, last_ + 1);
    EXPECT_EQ(clock.time, static_cast<double>(taken));
    last_ = taken;
    total_ = total;
    ++steps_;
    if (cancel_ != nullptr && taken == cancel_at_) cancel_->store(true);
  }
  void OnCheckInFinish(int64_t taken, const RunClock& /*clock*/) override {
    ++finishes_;
    finished_at_ = taken;
  }
  int64_t steps_ = 0, last_ = 0, total_ = 0, finishes_ = 0, finished_at_ = -1;

 private:
  int64_t cancel_at_;
  std::atomic<bool>* cancel_;
};

TEST(CheckInOutcome, ObserversSeeEveryStep) {
  StepCounter counter;
  const TrainResult r = RunTraining(SmallCheckIns(), {.progress = false, .observer = &counter});
  EXPECT_EQ(counter.steps_, 2000);
  EXPECT_EQ(counter.total_, 2000);
  EXPECT_EQ(counter.finishes_, 1);
  EXPECT_EQ(counter.finished_at_, 2000);
  EXPECT_FALSE(r.summary.contains("cancelled"));
  EXPECT_FALSE(r.summary["truncated"].get<bool>());
  EXPECT_FALSE(r.summary["privacy"].contains("note"));
  EXPECT_EQ(r.summary["virtual_seconds"].get<double>(), 2000.0);
  EXPECT_GE(r.summary["accounting_seconds"].get<double>(), 0.0);
  EXPECT_FALSE(r.summary["diverged"].get<bool>());
}

// On the virtual and the threads runtime alike (the threads runtime computes each step's clients on a pool).
class CheckInCancel : public ::testing::TestWithParam<RuntimeKind> {};

TEST_P(CheckInCancel, StopsAfterTheCurrentStepAndSaysSo) {
  TrainConfig c = SmallCheckIns();
  c.protocol.runtime = GetParam();
  if (GetParam() == RuntimeKind::kThreads) c.protocol.worker_threads = 2;
  const TrainResult full = RunTraining(c, {.progress = false});
  std::atomic<bool> cancel{false};
  StepCounter counter(1300, &cancel);  // in the second window
  const TrainResult r = RunTraining(c, {.progress = false, .observer = &counter, .cancel = &cancel});
  EXPECT_EQ(counter.steps_, 1300);
  EXPECT_EQ(counter.finished_at_, 1300);
  EXPECT_EQ(r.summary["steps_run"].get<int64_t>(), 1300);
  EXPECT_EQ(r.summary["virtual_seconds"].get<double>(), 1300.0);
  EXPECT_TRUE(r.summary["cancelled"].get<bool>());
  EXPECT_TRUE(r.summary["truncated"].get<bool>());
  EXPECT_FALSE(r.summary["stalled"].get<bool>());
  EXPECT_TRUE(r.runtime.cancelled);
  EXPECT_TRUE(r.runtime.truncated);
  // Every client is unfinished (which ones had a check-in still to come is the check-ins' secret), with
  // the windows completed: the first of two.
  ASSERT_EQ(r.summary["unfinished"].size(), 5000u);
  ASSERT_EQ(r.summary["unfinished_clients"].size(), 5000u);
  for (const auto& u : r.summary["unfinished"]) {
    EXPECT_EQ(u["reason"], "cancelled");
    EXPECT_EQ(u["rounds"].get<int64_t>(), 1);
    EXPECT_EQ(u["applied_rounds"].get<int64_t>(), 1);
    EXPECT_EQ(u["planned_rounds"].get<int64_t>(), 2);
  }
  // The whole plan's epsilon bounds the steps taken; the summary says why it is reported.
  EXPECT_EQ(r.summary["epsilon"], full.summary["epsilon"]);
  EXPECT_TRUE(r.summary["privacy"].contains("note"));
  // The last evaluation is at the step the run stopped.
  EXPECT_EQ(r.metrics.back().global_round, 1300);
  EXPECT_EQ(full.metrics.back().global_round, 2000);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, CheckInCancel,
                         ::testing::Values(RuntimeKind::kVirtual, RuntimeKind::kThreads));

TEST(CheckInOutcome, CancelledBeforeTheFirstStep) {
  std::atomic<bool> cancel{true};
  const TrainResult r = RunTraining(SmallCheckIns(), {.progress = false, .cancel = &cancel});
  EXPECT_EQ(r.summary["steps_run"].get<int64_t>(), 0);
  EXPECT_TRUE(r.summary["cancelled"].get<bool>());
  for (const auto& u : r.summary["unfinished"]) EXPECT_EQ(u["rounds"].get<int64_t>(), 0);
  ASSERT_EQ(r.metrics.size(), 1u);  // the untrained model's evaluation, once
  EXPECT_EQ(r.metrics[0].global_round, 0);
}

}  // namespace
}  // namespace asyncdp::sim
