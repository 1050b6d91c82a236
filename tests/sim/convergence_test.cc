// Convergence of the asynchronous framework on real data, at small budgets.
#include <gtest/gtest.h>

#include "sim/train.h"
#include "tests/sim/sim_test_util.h"

namespace asyncdp::sim {
namespace {

// Non-private logistic regression on a9a: 5 clients, τ = 1 (the paper's rule), evaluated on a9a.t.
// Averaged rounds (divide_round_update_by_sample_size) with a large clip make this plain asynchronous SGD.
TrainConfig NonPrivateA9a(const std::string& runtime) {
  TrainConfig c;
  testing::UseA9a(c);
  c.model.kind = "logistic";
  c.clients.count = 5;
  c.protocol.runtime = *EnumFromString<RuntimeKind>(runtime);
  c.protocol.tau = 1;
  c.dp.enabled = false;
  c.dp.clip = 1000.0;
  c.schedule.sample_size = 64;
  c.schedule.epochs = 4.0;
  c.schedule.step_rule = StepSizeSchedule::kInverseSqrt;
  c.schedule.eta0 = 0.25;
  c.schedule.beta = 0.01;
  c.schedule.divide_round_update_by_sample_size = true;
  c.eval.points = 2;
  c.seed = 3;
  return c;
}

TEST(Convergence, NonPrivateLogisticRegressionOnA9aVirtualRuntime) {
  const TrainResult r = RunTraining(NonPrivateA9a("virtual"), {.progress = false});
  EXPECT_GE(r.summary["test_accuracy"].get<double>(), 0.84);
  EXPECT_LE(r.summary["max_staleness"].get<int64_t>(), 1);
}

TEST(Convergence, NonPrivateLogisticRegressionOnA9aThreadRuntime) {
  const TrainResult r = RunTraining(NonPrivateA9a("threads"), {.progress = false});
  EXPECT_GE(r.summary["test_accuracy"].get<double>(), 0.84);
  EXPECT_LE(r.summary["max_staleness"].get<int64_t>(), 1);
}

// Under DP (σ = 4, C = 0.1) the model must still clearly beat the majority class (76.4% of a9a.t) and
// report a finite ε from every accountant.
TEST(Convergence, PrivateStronglyConvexBeatsMajorityClass) {
  TrainConfig c = NonPrivateA9a("virtual");
  c.model.kind = "logistic_l2";
  c.dp.enabled = true;
  c.dp.clip = 0.1;
  c.dp.sigma = 4.0;
  c.schedule.sample_size = 26;
  c.schedule.divide_round_update_by_sample_size = false;
  c.schedule.eta0 = 0.1;
  c.schedule.step_rule = StepSizeSchedule::kInverseLinear;
  c.schedule.beta = 0.001;
  c.schedule.epochs = 2.0;
  const TrainResult r = RunTraining(c, {.progress = false});
  EXPECT_GE(r.summary["test_accuracy"].get<double>(), 0.79);
  for (const char* key : {"rdp", "pld", "gdp"}) {
    EXPECT_TRUE(r.summary["epsilon"][key].is_number()) << key;
  }
  EXPECT_LE(r.summary["epsilon"]["pld"].get<double>(), r.summary["epsilon"]["rdp"].get<double>());
}

}  // namespace
}  // namespace asyncdp::sim

namespace asyncdp::sim {
namespace {

// Non-private LeNet-5 on Fashion-MNIST (60k/10k, Debian's dataset-fashion-mnist): 5 clients, τ = 1,
// 3 epochs of each client's 12k shard, averaged rounds of 16 at a constant step 0.03. Deterministic
// (virtual runtime, fixed seed); measured 85.9% when written.
TEST(Convergence, NonPrivateLeNetOnFashionMnist) {
  TrainConfig c;
  c.data.train = asyncdp::testing::FashionMnistFile("train-images-idx3-ubyte.gz");
  c.data.test = asyncdp::testing::FashionMnistFile("t10k-images-idx3-ubyte.gz");
  c.model.kind = "lenet";
  c.clients.count = 5;
  c.protocol.tau = 1;
  c.dp.enabled = false;
  c.dp.clip = 1000.0;
  c.schedule.sample_size = 16;
  c.schedule.epochs = 3.0;
  c.schedule.step_rule = StepSizeSchedule::kConstant;
  c.schedule.eta0 = 0.03;
  c.schedule.divide_round_update_by_sample_size = true;
  c.eval.points = 1;
  c.eval.train_rows = 0;
  c.seed = 1;
  const TrainResult r = RunTraining(c, {.progress = false});
  EXPECT_GE(r.summary["test_accuracy"].get<double>(), 0.85);
  EXPECT_LE(r.summary["max_staleness"].get<int64_t>(), 1);
}

}  // namespace
}  // namespace asyncdp::sim
