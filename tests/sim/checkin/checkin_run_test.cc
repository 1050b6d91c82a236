// Check-in runs end to end on a9a (one record per client): the counts the summary reports, the privacy
// statement of each variant, and that DP-SGD with check-ins learns.
#include "sim/checkin/checkin_run.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "sim/checkin/checkin_plan.h"
#include "sim/checkin/checkin_privacy.h"
#include "sim/config_io.h"
#include "sim/train.h"
#include "tests/sim/sim_test_util.h"

namespace asyncdp::sim {
namespace {

TrainConfig CheckInA9a(const std::string& variant) {
  TrainConfig c;
  testing::UseA9a(c);
  c.data.eval_rows = 4000;
  c.model.kind = "logistic";
  c.clients.count = 20000;
  c.protocol.participation = Participation::kCheckIn;
  c.checkin.variant = EnumFromString<checkin::Variant>(variant).value();
  c.checkin.steps = 4000;
  c.checkin.windows = 2;
  c.checkin.p0 = 0.5;
  c.checkin.batch_steps = 32;
  c.dp.clip = 1.0;
  c.dp.sigma = 2.0;
  c.schedule.step_rule = StepSizeSchedule::kConstant;
  c.schedule.eta0 = 0.1;
  c.eval.points = 1;
  c.seed = 5;
  c.output.diagnostics = true;  // the realised check-in counts (not private) checked below
  return c;
}

TEST(CheckInRun, FixedWindowCountsPrivacyAndAccuracy) {
  const TrainResult r = RunTraining(CheckInA9a("fixed_window"), {.progress = false});
  const auto& c = r.summary["diagnostics"]["checkin"];
  const auto& plan = r.summary["checkin"];
  const int64_t steps = 2 * 4000;
  // One update per step: used + dummy = steps; every check-in is used or discarded.
  EXPECT_EQ(c["records_used"].get<int64_t>() + c["dummy_updates"].get<int64_t>(), steps);
  EXPECT_EQ(c["dummy_updates"].get<int64_t>(), c["empty_steps"].get<int64_t>());
  EXPECT_EQ(c["records_used"].get<int64_t>() + c["discarded_check_ins"].get<int64_t>(),
            c["participating_clients"].get<int64_t>());
  EXPECT_EQ(c["model_updates"].get<int64_t>(), steps / 32);
  EXPECT_EQ(plan["model_updates"].get<int64_t>(), steps / 32);  // public under the one-client rule
  EXPECT_LE(std::abs(c["empty_steps"].get<double>() - plan["expected_empty_steps"].get<double>()),
            4.0 * plan["empty_steps_sd"].get<double>());
  // The outcome, in the fields asynchronous rounds report: every step taken, nobody left unfinished.
  EXPECT_EQ(r.summary["steps_run"].get<int64_t>(), steps);
  EXPECT_FALSE(r.summary["truncated"].get<bool>());
  EXPECT_FALSE(r.summary["stalled"].get<bool>());
  EXPECT_TRUE(r.summary["unfinished_clients"].empty());
  EXPECT_TRUE(r.summary["unfinished"].empty());
  EXPECT_FALSE(r.runtime.truncated);
  // Privacy: random allocation of the sigma/2 randomizer over m = 4000, E = 2, p0 = 0.5.
  const auto& p = r.summary["privacy"];
  EXPECT_EQ(p["bound"], "upper_bound");
  EXPECT_DOUBLE_EQ(p["accounted_as"]["sigma"].get<double>(), 1.0);
  EXPECT_EQ(p["accounted_as"]["windows"].get<int64_t>(), 2);
  const checkin::CheckInOptions o = checkin::ResolveCheckInOptions(CheckInA9a("fixed_window"));
  EXPECT_DOUBLE_EQ(p["epsilon"]["random_allocation"].get<double>(),
                   checkin::AccountCheckIns(o, 2.0, 1.0 / 20000).epsilon);
  EXPECT_EQ(r.summary["epsilon"], p["epsilon"]);
  // It learns: below the initial loss ln 2 and above the majority class of a9a.t (76.4%).
  EXPECT_LT(r.summary["test_loss"].get<double>(), 0.6);
  EXPECT_GT(r.summary["test_accuracy"].get<double>(), 0.77);
}

TEST(CheckInRun, AveragedUpdatesReportNoBound) {
  TrainConfig config = CheckInA9a("averaged");
  config.dp.sigma = 1.0;  // many more (averaged) updates than the fixed window: less noise, smaller steps
  config.schedule.eta0 = 0.02;
  const TrainResult r = RunTraining(config, {.progress = false});
  const auto& c = r.summary["diagnostics"]["checkin"];
  EXPECT_FALSE(r.summary["checkin"].contains("model_updates"));  // realised under the average rule
  EXPECT_EQ(c["dummy_updates"].get<int64_t>(), 0);
  EXPECT_EQ(c["discarded_check_ins"].get<int64_t>(), 0);
  EXPECT_EQ(c["records_used"].get<int64_t>(), c["participating_clients"].get<int64_t>());
  EXPECT_EQ(c["model_updates"].get<int64_t>(), 2 * 4000 - c["empty_steps"].get<int64_t>());
  EXPECT_TRUE(r.summary["privacy"]["epsilon"]["random_allocation"].is_null());
  EXPECT_EQ(r.summary["privacy"]["bound"], "no_bound");
  EXPECT_LT(r.summary["test_loss"].get<double>(), 0.69);
  EXPECT_GT(r.summary["test_accuracy"].get<double>(), 0.78);
  // A target epsilon cannot be met without a theorem.
  TrainConfig calibrate = CheckInA9a("averaged");
  calibrate.dp.sigma = 0.0;
  calibrate.dp.epsilon = 1.0;
  EXPECT_THROW(RunTraining(calibrate, {.progress = false}), ConfigError);
}

// The realised check-ins are the randomness the allocation bound assumes secret: by default no output shows
// them (who checked in, which steps were empty); output.diagnostics releases them, labelled.
TEST(CheckInRun, RealisedCheckInsAreReleasedOnlyAsDiagnostics) {
  TrainConfig config = CheckInA9a("fixed_window");
  config.output.diagnostics = false;
  config.checkin.p0 = 0.3;
  const TrainResult r = RunTraining(config, {.progress = false});
  EXPECT_FALSE(r.summary.contains("diagnostics"));
  for (const char* realised : {"participating_clients", "empty_steps", "dummy_updates", "discarded_check_ins",
                               "records_used", "client_updates_used"}) {
    EXPECT_FALSE(r.summary["checkin"].contains(realised)) << realised;
  }
  EXPECT_EQ(r.clients_csv.substr(0, r.clients_csv.find('\n')), "client,records");
  EXPECT_EQ(r.metrics_csv.find("empty"), std::string::npos);
  EXPECT_EQ(r.metrics_csv.find("discarded"), std::string::npos);
}

TEST(CheckInRun, SlidingWindowIsAccountedWithItsWindowLength) {
  TrainConfig config = CheckInA9a("sliding_window");
  config.checkin.windows = 1;
  config.checkin.window_length = 500;
  config.checkin.steps = 15000;
  const TrainResult r = RunTraining(config, {.progress = false});
  const auto& p = r.summary["privacy"];
  EXPECT_EQ(p["accounted_as"]["steps"].get<int64_t>(), 500);
  EXPECT_EQ(p["accounted_as"]["windows"].get<int64_t>(), 1);
  EXPECT_GT(r.summary["diagnostics"]["checkin"]["discarded_out_of_range"].get<int64_t>(), 0);
  EXPECT_EQ(r.summary["checkin"]["warmup"].get<int64_t>(), 499);
}

TEST(CheckInRun, CalibratedSigmaMeetsTheTarget) {
  TrainConfig config = CheckInA9a("fixed_window");
  config.checkin.windows = 1;
  config.checkin.steps = 1000;
  config.dp.sigma = 0.0;
  config.dp.epsilon = 0.02;  // sigma near 5: each accounting takes ~0.2 s (sigma < 1 takes seconds)
  config.eval.points = 0;
  const TrainResult r = RunTraining(config, {.progress = false});
  EXPECT_TRUE(r.summary["privacy"]["sigma_calibrated"].get<bool>());
  EXPECT_LE(r.summary["privacy"]["epsilon"]["random_allocation"].get<double>(), 0.02);
  EXPECT_GT(r.summary["privacy"]["epsilon"]["random_allocation"].get<double>(), 0.018);
}

// protocol.runtime = "threads": each step's checked-in clients compute on worker threads and the server sums
// their updates in client order, so the run does not depend on the thread count. At the user level that is
// the virtual runtime's arithmetic (bit-identical); at the record level an averaged step sums per client
// instead of one batched sum, equal up to float rounding (ijcnn1's real-valued features can make the grouping
// visible; a9a's binary ones do not).
TEST(CheckInRun, ThreadsRuntimeDoesNotDependOnTheThreadCount) {
  struct Case {
    std::string name;
    bool user_level;
    std::string variant;
  };
  for (const Case& k : std::vector<Case>{{"user-level fixed window", true, "fixed_window"},
                                         {"user-level averaged", true, "averaged"},
                                         {"record-level averaged", false, "averaged"}}) {
    SCOPED_TRACE(k.name);
    TrainConfig c = CheckInA9a(k.variant);
    c.data.train = asyncdp::testing::SharedFile("datasets/libsvm/ijcnn1.gz");
    c.data.test = asyncdp::testing::SharedFile("datasets/libsvm/ijcnn1.t.gz");
    c.data.features = 22;
    c.data.eval_rows = 2000;
    c.output.diagnostics = false;
    c.clients.count = k.user_level ? 200 : 4000;
    c.checkin.steps = k.user_level ? 50 : 200;
    c.checkin.batch_steps = 1;
    c.checkin.windows = 1;
    if (k.user_level) {
      c.dp.unit = PrivacyUnit::kClient;
      c.dp.client_clip = 2.0;
      c.data.rows_per_client = 40;
    }
    const TrainResult virtual_run = RunTraining(c, {.progress = false});
    c.protocol.runtime = RuntimeKind::kThreads;
    std::vector<Eigen::VectorXf> models;
    for (int threads : {1, 2, 3}) {
      c.protocol.worker_threads = threads;
      const TrainResult r = RunTraining(c, {.progress = false});
      EXPECT_EQ(r.summary["runtime"], "threads");
      EXPECT_EQ(r.summary["privacy"], virtual_run.summary["privacy"]);
      models.push_back(r.final_model);
    }
    EXPECT_EQ(models[0], models[1]);
    EXPECT_EQ(models[0], models[2]);
    if (k.user_level) {
      EXPECT_EQ(models[0], virtual_run.final_model);
    } else {
      // Another grouping of the same sum: equal up to float rounding. Whether the last bits differ depends on
      // the build (the release build's batched kernel fuses multiply-adds; the ASan build's did not).
      EXPECT_LT((models[0] - virtual_run.final_model).norm(), 1e-4 * virtual_run.final_model.norm());
    }
  }
}

// Check-ins honour protocol.runtime: virtual and threads run them here, mpi needs mpirun (tested in
// tests/sim/runtime/mpi_runtime_test.cc) and says so, and worker threads on the virtual runtime (which
// computes on the server's thread) are refused rather than ignored.
TEST(CheckInRun, RuntimeKeysAreHonouredOrRefused) {
  TrainConfig c = CheckInA9a("fixed_window");
  c.protocol.runtime = RuntimeKind::kMpi;
  try {
    RunTraining(c, {.progress = false});
    FAIL() << "mpi without mpirun accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), "protocol.runtime");
    EXPECT_NE(std::string(e.what()).find("mpirun"), std::string::npos) << e.what();
  }
  c.protocol.runtime = RuntimeKind::kVirtual;
  c.protocol.worker_threads = 2;
  try {
    ValidateConfig(c);
    FAIL() << "worker_threads accepted on the virtual runtime";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where(), "protocol.worker_threads");
  }
  c.protocol.runtime = RuntimeKind::kThreads;
  EXPECT_NO_THROW(ValidateConfig(c));
}

TEST(CheckInRun, RejectsBadSettings) {
  TrainConfig config = CheckInA9a("fixed_window");
  config.checkin.p0 = 1.5;
  EXPECT_THROW(RunTraining(config, {.progress = false}), ConfigError);
  config = CheckInA9a("fixed_window");
  config.checkin.batch_steps = 0;
  EXPECT_THROW(RunTraining(config, {.progress = false}), ConfigError);
  config = CheckInA9a("fixed_window");
  config.clients.count = 40000;  // a9a has 32,561 training rows
  EXPECT_THROW(RunTraining(config, {.progress = false}), ConfigError);
  config = CheckInA9a("fixed_window");
  config.checkin.step_rule = checkin::StepRuleChoice::kAverage;
  EXPECT_THROW(RunTraining(config, {.progress = false}), ConfigError);
}

}  // namespace
}  // namespace asyncdp::sim
