// Protocol invariants on both runtimes, on real data (a9a).
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "core/accounting/accountant.h"
#include "tests/core/accounting/account_schedule.h"
#include "core/noise.h"
#include "core/sampling.h"
#include "sim/train.h"
#include "tests/sim/sim_test_util.h"

namespace asyncdp::sim {
namespace {

using testing::SmallA9aConfig;

class BothRuntimes : public ::testing::TestWithParam<std::string> {};

TEST_P(BothRuntimes, ObservedStalenessNeverExceedsTau) {
  for (int64_t tau : {0, 1, 2}) {
    TrainConfig c = SmallA9aConfig(4, 300);
    c.protocol.runtime = *EnumFromString<RuntimeKind>(GetParam());
    c.protocol.tau = tau;
    if (GetParam() == "virtual") {  // the virtual clock's models (the threads runtime refuses them)
      c.clients.speed = SpeedModel::kLognormal;  // heterogeneous clients make staleness actually happen
      c.clients.speed_sigma = 1.0;
      c.clients.latency = LatencyModel::kExponential;
    }
    c.clients.straggler_ids = {3};
    c.clients.straggler_factor = 3.0;
    const TrainResult r = RunTraining(c, {.progress = false});
    EXPECT_LE(r.summary["max_staleness"].get<int64_t>(), tau) << "tau = " << tau;
    EXPECT_FALSE(r.summary["stalled"].get<bool>());
    // Every client ran its whole plan (no budget, no faults).
    for (const auto& rounds : r.summary["rounds_per_client"]) {
      EXPECT_EQ(rounds.get<int64_t>(), r.experiment->plans[0].rounds());
    }
  }
}

// Adaptive clipping and user-level DP on the threads runtime and on the virtual clock: every client runs its
// whole plan, the accounting (a function of the public plan) is identical, and the clip trajectory is
// published by both.
TEST_P(BothRuntimes, AdaptiveClippingAndUserLevelDpAgreeWithTheVirtualClock) {
  for (int mode = 0; mode < 2; ++mode) {
    SCOPED_TRACE(mode);
    TrainConfig c = SmallA9aConfig(3, 300);
    if (mode == 0) {
      c.dp.clip_mode = ClipMode::kAdaptive;
      c.dp.clip_count_sigma = 2.0;
    } else {
      c.dp.unit = PrivacyUnit::kClient;
      c.dp.client_clip = 1.0;
    }
    TrainConfig reference_config = c;
    c.protocol.runtime = *EnumFromString<RuntimeKind>(GetParam());
    reference_config.protocol.runtime = RuntimeKind::kVirtual;
    const TrainResult r = RunTraining(c, {.progress = false});
    const TrainResult reference = RunTraining(reference_config, {.progress = false});
    EXPECT_FALSE(r.summary["truncated"].get<bool>());
    EXPECT_EQ(r.summary["rounds_per_client"], reference.summary["rounds_per_client"]);
    EXPECT_EQ(r.summary["epsilon"], reference.summary["epsilon"]);
    EXPECT_EQ(r.summary["privacy"]["epsilon"], reference.summary["privacy"]["epsilon"]);
    const bool adaptive = mode == 0;
    EXPECT_EQ(r.metrics_csv.find(",clip\n") != std::string::npos, adaptive);
    if (adaptive) {
      for (const MetricsRow& row : r.metrics) EXPECT_GT(row.clip, 0.0);
    } else {
      EXPECT_TRUE(r.summary["privacy"].contains("epsilon_record_level"));
    }
  }
}

TEST_P(BothRuntimes, UnboundedRuleStillTerminatesAndRecordsStaleness) {
  TrainConfig c = SmallA9aConfig(3, 300);
  c.protocol.runtime = *EnumFromString<RuntimeKind>(GetParam());
  c.protocol.delay_rule = DelayRuleKind::kUnbounded;
  c.clients.straggler_ids = {0};
  c.clients.straggler_factor = 8.0;
  const TrainResult r = RunTraining(c, {.progress = false});
  EXPECT_TRUE(r.summary["staleness_bound"].is_null());
  EXPECT_FALSE(r.summary["stalled"].get<bool>());
}

TEST_P(BothRuntimes, DroppedClientWithExcludeAfterDoesNotHang) {
  TrainConfig c = SmallA9aConfig(3, 300);
  c.protocol.runtime = *EnumFromString<RuntimeKind>(GetParam());
  c.clients.dropout_ids = {1};
  c.clients.dropout_round = 3;
  c.protocol.exclude_after = GetParam() == "threads" ? 0.2 : 1.0;  // wall vs virtual seconds
  const TrainResult r = RunTraining(c, {.progress = false});
  EXPECT_EQ(r.summary["excluded_clients"], nlohmann::json::array({1}));
  EXPECT_EQ(r.summary["rounds_per_client"][1].get<int64_t>(), 3);
  EXPECT_EQ(r.summary["rounds_per_client"][0].get<int64_t>(), r.experiment->plans[0].rounds());
  EXPECT_FALSE(r.summary["stalled"].get<bool>());
  EXPECT_FALSE(r.summary["truncated"].get<bool>());  // the dropout stopped by its rule: nobody is unfinished
  EXPECT_LE(r.summary["global_rounds"].get<int64_t>(), r.experiment->plans[0].rounds());
}

INSTANTIATE_TEST_SUITE_P(Runtimes, BothRuntimes, ::testing::Values("virtual", "threads"));

TEST(VirtualRuntime, SameSeedGivesIdenticalOutputsWithOneAndTwoWorkerThreads) {
  TrainConfig c = SmallA9aConfig(5, 400);
  c.clients.speed = SpeedModel::kLognormal;
  c.clients.latency = LatencyModel::kExponential;
  c.protocol.worker_threads = 1;
  const TrainResult one = RunTraining(c, {.progress = false});
  c.protocol.worker_threads = 2;
  const TrainResult two = RunTraining(c, {.progress = false});
  EXPECT_EQ(one.metrics_csv, two.metrics_csv);
  EXPECT_EQ(one.clients_csv, two.clients_csv);
  nlohmann::json a = one.summary, b = two.summary;
  for (const std::string& key : testing::kTimingSummaryKeys) {
    a.erase(key);
    b.erase(key);
  }
  a.erase("config");  // differs only in protocol.worker_threads
  b.erase("config");
  EXPECT_EQ(a.dump(), b.dump());
  EXPECT_TRUE(one.final_model == two.final_model);
}

TEST(VirtualRuntime, AutoWorkerThreadsSwitchingToThePoolMidRunChangesNothing) {
  // Rounds of ~2,000 examples take well over the 50 µs at which worker_threads = 0 starts the compute
  // pool (after a few inline rounds, on a multi-core machine): the switch must not change any output.
  TrainConfig c = SmallA9aConfig(3, 2500);
  c.data.eval_rows = 500;
  c.schedule.sample_size = 2000;
  testing::UseRounds(c, 12);
  c.clients.latency = LatencyModel::kExponential;
  c.protocol.worker_threads = 1;
  const TrainResult inline_only = RunTraining(c, {.progress = false});
  c.protocol.worker_threads = 0;
  const TrainResult automatic = RunTraining(c, {.progress = false});
  EXPECT_EQ(inline_only.metrics_csv, automatic.metrics_csv);
  EXPECT_EQ(inline_only.clients_csv, automatic.clients_csv);
  EXPECT_TRUE(inline_only.final_model == automatic.final_model);
  EXPECT_EQ(inline_only.summary["compute_threads"], 1);
  const int cores = static_cast<int>(std::min<unsigned>(3, std::max(1u, std::thread::hardware_concurrency())));
  EXPECT_EQ(automatic.summary["compute_threads"], cores);
  // The virtual runtime reads no worker clocks: no cpu_share, rather than a made-up one.
  EXPECT_TRUE(automatic.summary["cpu_share"].is_null());
}

TEST(VirtualRuntime, DifferentSeedsGiveDifferentRuns) {
  TrainConfig c = SmallA9aConfig(2, 300);
  const TrainResult a = RunTraining(c, {.progress = false});
  c.seed += 1;
  const TrainResult b = RunTraining(c, {.progress = false});
  EXPECT_FALSE(a.final_model == b.final_model);
}

// With τ = 0 and one client the framework is plain sequential DP-SGD: sample, clip, sum, add noise once,
// step. The virtual runtime must reproduce that loop bit for bit.
TEST(VirtualRuntime, SynchronousSingleClientEqualsSequentialDpSgdLoop) {
  TrainConfig c = SmallA9aConfig(1, 500);
  c.protocol.tau = 0;
  c.dp.sigma = 1.5;
  c.schedule.epochs = 2.0;
  const TrainResult r = RunTraining(c, {.progress = false});
  const Experiment& e = *r.experiment;

  Eigen::VectorXf w = e.initial_model;
  Eigen::VectorXf sum(w.size());
  auto sampler = MakeSampler(e.privacy.sampling(), e.data.shards[0].rows(), c.seed, 0);
  auto workspace = e.model->NewWorkspace(e.plans[0].max_sample_size());
  std::vector<int64_t> batch;
  const data::Dataset shard =
      e.data.shards[0].Copy();  // the shard as a copy: the client reads it through a view
  for (int64_t i = 0; i < e.plans[0].rounds(); ++i) {
    sampler->Sample(static_cast<uint32_t>(i), e.plans[0].sample_sizes[i], batch);
    e.model->ClippedGradientSum(std::span<const float>(w.data(), w.size()), shard, batch, c.dp.clip,
                                std::span<float>(sum.data(), sum.size()), *workspace);
    AddRoundNoise(StreamKey{c.seed, 0, static_cast<uint32_t>(i), StreamPurpose::kGradientNoise}, c.dp.clip,
                  c.dp.sigma, std::span<float>(sum.data(), sum.size()));
    w -= static_cast<float>(e.plans[0].step_sizes[i]) * sum;
  }
  ASSERT_EQ(w.size(), r.final_model.size());
  for (int64_t j = 0; j < w.size(); ++j) EXPECT_EQ(w[j], r.final_model[j]) << "parameter " << j;
}

TEST(VirtualRuntime, BudgetHaltStopsEveryClientWithinItsEpsilon) {
  // The halt round is planned before training by the accountant that reports it (pld by default, rdp too).
  for (const char* accountant : {"pld", "rdp"}) {
    TrainConfig c = SmallA9aConfig(3, 400);
    c.dp.sigma = 1.0;
    c.dp.epsilon = 1.2;  // less than the plan needs at sigma = 1
    c.dp.accountant = EnumFromString<RunAccountant>(accountant).value();
    c.schedule.epochs = 5.0;
    const TrainResult r = RunTraining(c, {.progress = false});
    for (size_t client = 0; client < r.summary["rounds_per_client"].size(); ++client) {
      const int64_t rounds = r.summary["rounds_per_client"][client].get<int64_t>();
      EXPECT_LT(rounds, r.experiment->plans[client].rounds());
      EXPECT_GT(rounds, 0);
      EXPECT_EQ(rounds, r.experiment->privacy.budget_rounds[client]);
    }
    EXPECT_LE(r.summary["epsilon"][accountant].get<double>(), 1.2 + 1e-9) << accountant;
    // One more round would have exceeded the budget.
    const Experiment& e = *r.experiment;
    const int64_t rounds = r.summary["rounds_per_client"][0].get<int64_t>();
    accounting::AccountantOptions options;
    options.sampling = e.privacy.sampling();
    EXPECT_GT(accounting::AccountSchedule(accounting::ParseAccountantKind(accountant, "x"),
                                          e.privacy.ClientSchedule(e.plans[0], rounds + 1), e.privacy.delta,
                                          options)
                  .epsilon,
              1.2);
    EXPECT_EQ(r.summary["privacy"]["halted_by"], accountant);
    EXPECT_FALSE(r.summary["stalled"].get<bool>());
  }
}

TEST(VirtualRuntime, TargetEpsilonCalibratesSigmaForTheWholePlanWithPldByDefault) {
  TrainConfig c = SmallA9aConfig(2, 400);
  c.dp.sigma = 0.0;
  c.dp.epsilon = 1.0;
  c.dp.halt_at_budget = false;
  const TrainResult r = RunTraining(c, {.progress = false});
  EXPECT_TRUE(r.summary["sigma_calibrated"].get<bool>());
  EXPECT_EQ(r.summary["privacy"]["calibrated_by"], "pld");
  const double eps = r.summary["epsilon"]["pld"].get<double>();
  EXPECT_LE(eps, 1.0 + 1e-9);
  EXPECT_GT(eps, 0.99);  // the smallest sigma: the budget is (almost) exactly used
  EXPECT_GT(r.summary["epsilon"]["rdp"].get<double>(), 1.0);  // RDP would have asked for more noise
  EXPECT_EQ(r.resolved_config.dp.sigma, r.summary["sigma"].get<double>());
  // Calibrating by RDP gives a larger sigma for the same target.
  c.dp.accountant = RunAccountant::kRdp;
  const TrainResult by_rdp = RunTraining(c, {.progress = false});
  EXPECT_GT(by_rdp.summary["sigma"].get<double>(), r.summary["sigma"].get<double>());
  EXPECT_LE(by_rdp.summary["epsilon"]["rdp"].get<double>(), 1.0 + 1e-9);
  EXPECT_EQ(by_rdp.summary["privacy"]["calibrated_by"], "rdp");
}

}  // namespace
}  // namespace asyncdp::sim

namespace asyncdp::sim {
namespace {

TEST(Metrics, OneRowPerEvaluationAndNoDuplicateFinalRow) {
  TrainConfig c = testing::SmallA9aConfig(2, 300);
  c.eval.points = 5;
  const TrainResult r = RunTraining(c, {.progress = false});
  ASSERT_GE(r.metrics.size(), 2u);
  for (size_t j = 1; j < r.metrics.size(); ++j) {
    EXPECT_LT(r.metrics[j - 1].gradients, r.metrics[j].gradients);  // strictly new work in every row
    EXPECT_LE(r.metrics[j - 1].epsilon, r.metrics[j].epsilon);      // ε so far never decreases
  }
  EXPECT_EQ(r.metrics.back().global_round, r.summary["global_rounds"].get<int64_t>());
}

TEST(Metrics, ZeroPointsEvaluatesOnlyAtTheEnd) {
  TrainConfig c = testing::SmallA9aConfig(2, 300);
  c.eval.points = 0;
  const TrainResult r = RunTraining(c, {.progress = false});
  ASSERT_EQ(r.metrics.size(), 1u);
  EXPECT_EQ(r.metrics[0].global_round, r.summary["global_rounds"].get<int64_t>());
  EXPECT_EQ(r.summary["test_accuracy"].get<double>(), r.metrics[0].test_accuracy);
}

}  // namespace
}  // namespace asyncdp::sim

namespace asyncdp::sim {
namespace {

// The budget halt must account the sampler actually used: with shuffling (no amplification; each epoch is
// charged as a full-batch release) the reported ε must still respect the budget.
TEST(VirtualRuntime, BudgetHaltWithShufflingRespectsTheReportedEpsilon) {
  TrainConfig c = testing::SmallA9aConfig(2, 300);
  c.dp.sampling = SamplingModel::kShuffle;
  c.dp.sigma = 4.0;
  c.dp.epsilon = 2.0;
  c.schedule.epochs = 6.0;
  const TrainResult r = RunTraining(c, {.progress = false});
  EXPECT_LE(r.summary["epsilon"]["pld"].get<double>(), 2.0 + 1e-9);
  EXPECT_LT(r.summary["rounds_per_client"][0].get<int64_t>(), r.experiment->plans[0].rounds());
  EXPECT_EQ(r.summary["privacy"]["neighbours"], "replace_one");
}

}  // namespace
}  // namespace asyncdp::sim
