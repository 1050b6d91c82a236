// The privacy side of a run end to end: per-accountant maxima over clients with unequal shards and a
// dropout, the running epsilon over out-of-order rounds, secure noise, and what the outputs contain.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/accounting/accountant.h"
#include "core/error.h"
#include "sim/config_io.h"
#include "sim/metrics.h"
#include "sim/train.h"
#include "tests/core/accounting/account_schedule.h"
#include "tests/sim/sim_test_util.h"

namespace asyncdp::sim {
namespace {

using testing::SmallA9aConfig;

// Issue 10 acceptance: unequal shards (Dirichlet label skew) and a client that drops out early; for every
// accountant the summary reports the largest epsilon over clients and the client attaining it.
TEST(RunPrivacy, UnequalShardsAndADropoutReportTheTrueMaximumPerAccountant) {
  TrainConfig c = SmallA9aConfig(4, 0);
  c.data.partition = data::PartitionScheme::kDirichlet;
  c.data.dirichlet_alpha = 0.2;
  c.data.rows_per_client = 3000;
  c.schedule.sample_size = 20;
  c.schedule.epochs = 0.5;
  c.dp.sigma = 1.0;
  c.clients.dropout_ids = {0};
  c.clients.dropout_round = 2;
  c.protocol.exclude_after = 1.0;
  const TrainResult r = RunTraining(c, {.progress = false});
  const Experiment& e = *r.experiment;
  std::set<int64_t> sizes;
  for (const auto& shard : e.data.shards) sizes.insert(shard.rows());
  ASSERT_GE(sizes.size(), 3u) << "the partition should give unequal shards";
  ASSERT_EQ(r.summary["rounds_per_client"][0].get<int64_t>(), 2);
  accounting::AccountantOptions options;
  options.sampling = e.privacy.sampling();
  for (auto kind : accounting::kMechanismAccountants) {
    const std::string name(accounting::ToString(kind));
    double largest = 0.0;
    int64_t who = -1;
    for (size_t client = 0; client < e.plans.size(); ++client) {
      const int64_t rounds = r.summary["rounds_per_client"][client].get<int64_t>();
      const double eps = accounting::AccountSchedule(kind, e.privacy.ClientSchedule(e.plans[client], rounds),
                                                     e.privacy.delta, options)
                             .epsilon;
      if (eps > largest) {
        largest = eps;
        who = static_cast<int64_t>(client);
      }
    }
    EXPECT_DOUBLE_EQ(r.summary["epsilon"][name].get<double>(), largest) << name;
    EXPECT_EQ(r.summary["privacy"]["worst_client"][name].get<int64_t>(), who) << name;
  }
  // The proactive closed form was checked for every client that ran a round.
  EXPECT_FALSE(r.summary["privacy"]["proactive"]["valid"].get<bool>());  // shards below N = 10000
}

// The running epsilon counts every round already applied to the global model, including rounds that
// arrived ahead of a client's contiguous prefix.
// End to end: a DP configuration switched off with one override reports no noise multiplier, in the
// typed summary, summary.json and its privacy section; the resolved configuration keeps the σ it was
// given, marked as not read, so switching DP back on repeats the private run.
TEST(RunPrivacy, ANonPrivateRunReportsNoNoiseMultiplier) {
  TrainConfig c = SmallA9aConfig(2, 200);
  c.dp.sigma = 19.3;
  c.given.NoteBase("dp.sigma");          // written in the configuration file ...
  ApplyOverride(c, "dp.enabled=false");  // ... and switched off with --set
  const TrainResult r = RunTraining(c, {.progress = false});
  EXPECT_EQ(r.summary_core.sigma, 0.0);
  EXPECT_EQ(r.summary.at("sigma").get<double>(), 0.0);
  EXPECT_EQ(r.resolved_config.dp.sigma, 19.3);
}

TEST(RunPrivacy, RunningEpsilonCountsOutOfOrderRounds) {
  TrainConfig c = SmallA9aConfig(2, 300);
  const Experiment e = BuildExperiment(c);
  MetricsRecorder metrics(e);
  ServerProtocol server(2, e.initial_model);
  server.OnUpdate(UpdateMessage{0, 1, 0.0, Eigen::VectorXf::Zero(e.initial_model.size())});  // round 1 before 0
  metrics.OnFinish(server, RunClock{});
  accounting::AccountantOptions options;
  options.sampling = e.privacy.sampling();
  const double one_round =
      accounting::AccountSchedule(accounting::AccountantKind::kPld,
                                  {{e.plans[0].rate(1), e.privacy.sigma, 1}}, e.privacy.delta, options)
          .epsilon;
  ASSERT_EQ(metrics.rows().size(), 1u);
  EXPECT_GT(one_round, 0.0);
  // The running epsilon composes the part on the whole plan's grid (core/accounting/running_epsilon.h): the
  // one round's epsilon to the discretisation's second order, not zero rounds' 0.
  EXPECT_NEAR(metrics.rows()[0].epsilon, one_round, 1e-6 * one_round);
}

TEST(RunPrivacy, SecureNoiseRunsIsAccountedByRdpAndIsNotReproducible) {
  TrainConfig c = SmallA9aConfig(2, 300);
  c.dp.secure_noise = true;
  EXPECT_THROW(RunTraining(c, {.progress = false}), ConfigError);  // pld cannot account it
  c.dp.accountant = RunAccountant::kRdp;
  const TrainResult a = RunTraining(c, {.progress = false});
  const TrainResult b = RunTraining(c, {.progress = false});
  EXPECT_FALSE(a.final_model == b.final_model);  // OS entropy, not the seed
  EXPECT_TRUE(a.summary["epsilon"]["pld"].is_null());
  EXPECT_TRUE(a.summary["epsilon"]["gdp"].is_null());
  const double rdp = a.summary["epsilon"]["rdp"].get<double>();
  const double accounted = a.summary["privacy"]["accounted_noise_multiplier"].get<double>();
  EXPECT_LT(accounted, c.dp.sigma);
  EXPECT_GT(accounted, c.dp.sigma * (1 - 1.1e-3));
  c.dp.secure_noise = false;
  const TrainResult plain = RunTraining(c, {.progress = false});
  EXPECT_GE(rdp, plain.summary["epsilon"]["rdp"].get<double>());  // the lattice and the add-direction bound
  EXPECT_NE(a.summary["privacy"]["assumptions"]["rdp"].get<std::string>().find("discrete Gaussian"), std::string::npos);
  // Calibration in secure mode meets the target with the accounted (effective) multiplier.
  c.dp.secure_noise = true;
  c.dp.sigma = 0.0;
  c.dp.epsilon = 2.0;
  c.dp.halt_at_budget = false;
  const TrainResult calibrated = RunTraining(c, {.progress = false});
  EXPECT_LE(calibrated.summary["epsilon"]["rdp"].get<double>(), 2.0 + 1e-9);
  EXPECT_GT(calibrated.summary["epsilon"]["rdp"].get<double>(), 1.99);
}

TEST(RunPrivacy, DiagnosticsAreOffByDefaultSeparatedAndOptIn) {
  TrainConfig c = SmallA9aConfig(2, 300);
  EXPECT_FALSE(c.output.diagnostics);  // private by default
  const TrainResult without = RunTraining(c, {.progress = false});
  c.output.diagnostics = true;
  const TrainResult with = RunTraining(c, {.progress = false});
  ASSERT_TRUE(with.summary.contains("diagnostics"));
  EXPECT_EQ(with.summary["diagnostics"]["realised_grads_per_client"].size(), 2u);
  EXPECT_FALSE(with.summary.contains("train_loss"));
  EXPECT_NE(with.metrics_csv.find("diag_train_loss"), std::string::npos);
  EXPECT_FALSE(without.summary.contains("diagnostics"));
  EXPECT_EQ(without.metrics_csv.find("diag"), std::string::npos);
  EXPECT_EQ(without.clients_csv.find("diag"), std::string::npos);
  // Same run otherwise: diagnostics are outputs, never inputs to training.
  EXPECT_TRUE(with.final_model == without.final_model);
  EXPECT_EQ(with.summary["planned_grads_per_client"], without.summary["planned_grads_per_client"]);
}

// Relation (6) is a guarantee only where Theorem 3.1 or B.4 holds: the case (Table 3 with σ = 3,
// s = 2000, K = 200,000) fails their conditions and its ε(6) = 2.509 sat below the PLD *lower* bound 4.025.
// It is now null, with the failed conditions beside it.
TEST(RunPrivacy, TheProactiveClosedFormIsNullWhereItsTheoremFails) {
  TrainConfig c;
  testing::UseA9a(c);
  c.model.kind = "logistic_l2";
  c.dp.clip = 0.1;
  c.dp.sigma = 3.0;
  c.schedule.sample_size = 2000;
  c.schedule.iterations = 200000;
  c.eval.points = 1;
  const TrainResult r = RunTraining(c, {.progress = false});
  const auto& privacy = r.summary["privacy"];
  EXPECT_FALSE(privacy["proactive"]["valid"].get<bool>());
  EXPECT_TRUE(r.summary["epsilon"]["proactive"].is_null());
  EXPECT_TRUE(privacy["epsilon"]["proactive"].is_null());
  EXPECT_FALSE(privacy["proactive"]["invalid_clients"].empty());
  ASSERT_TRUE(privacy["proactive"].contains("conditions"));
  bool some_condition_fails = false;
  for (const auto& [id, condition] : privacy["proactive"]["conditions"].items()) {
    some_condition_fails = some_condition_fails || !condition["holds"].get<bool>();
  }
  EXPECT_TRUE(some_condition_fails);
  EXPECT_GT(r.summary["epsilon"]["pld_lower"].get<double>(), 3.0);
}

}  // namespace
}  // namespace asyncdp::sim
