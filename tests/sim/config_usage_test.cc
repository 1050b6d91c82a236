// No setting silently ignored (sim/config_usage.h): every registry key, set to a value other than its
// default, in every mode — asynchronous rounds on each runtime, check-ins, the proactive framework, a
// training audit, diagnostics on — is either read by the run or refused naming the key; and each key the
// rules call unread really is: changing it leaves the outputs bit-identical (the check skips the refusal).
#include "sim/config_usage.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "models/factory.h"
#include "sim/config_fields.h"
#include "sim/config_io.h"
#include "sim/round_plan.h"
#include "sim/train.h"
#include "tests/sim/config_change.h"
#include "tests/sim/sim_test_util.h"

namespace asyncdp::sim {
namespace {

using ::asyncdp::testing::SetOtherValue;
using ::asyncdp::testing::WithoutTimings;
using ::testing::HasSubstr;
using testing::SmallA9aConfig;

struct Mode {
  std::string name;
  TrainConfig config;
};

TrainConfig CheckIns() {
  TrainConfig c;
  testing::UseA9a(c);
  c.data.eval_rows = 500;
  c.model.kind = "logistic";
  c.clients.count = 2000;
  c.protocol.participation = Participation::kCheckIn;
  c.checkin.steps = 200;
  c.checkin.batch_steps = 4;
  c.dp.clip = 1.0;
  c.dp.sigma = 2.0;
  c.eval.points = 1;
  return c;
}

std::vector<Mode> Modes() {
  std::vector<Mode> modes;
  TrainConfig base = SmallA9aConfig(3, 300);
  testing::UseRounds(base, 6);
  modes.push_back({"async virtual", base});
  for (const char* runtime : {"threads", "mpi"}) {
    TrainConfig c = base;
    c.protocol.runtime = *EnumFromString<RuntimeKind>(runtime);
    modes.push_back({std::string("async ") + runtime, c});
  }
  // The threads runtime with one synchronous client (tau = 0): it computes each round on the broadcast
  // model, which holds all of its updates, so everything but the wall clock is deterministic. (With tau = 1
  // it may compute ahead and then take a broadcast without its newest update: over MPI 1 run in 20
  // differed. With more clients, arrival order moves the bits.)
  TrainConfig one_client = SmallA9aConfig(1, 300);
  testing::UseRounds(one_client, 6);
  one_client.protocol.runtime = RuntimeKind::kThreads;
  one_client.protocol.tau = 0;
  modes.push_back({"async threads, one client", one_client});
  modes.push_back({"check-ins", CheckIns()});
  TrainConfig proactive = SmallA9aConfig(5, 2000);
  testing::LeaveScheduleToPhases(proactive);
  proactive.targets.accuracy = 0.8;
  proactive.targets.epsilon = 2.0;
  modes.push_back({"proactive", proactive});
  TrainConfig audited = base;
  audited.audit.canaries = 20;
  modes.push_back({"training audit", audited});
  TrainConfig non_private = base;
  non_private.dp.enabled = false;
  non_private.dp.sigma = 0.0;
  modes.push_back({"non-private", non_private});
  TrainConfig diagnostics = base;
  diagnostics.output.diagnostics = true;
  diagnostics.eval.train_rows = 100;
  modes.push_back({"diagnostics", diagnostics});
  return modes;
}

TEST(ConfigUsage, EveryKeyInEveryModeIsReadOrRefusedByName) {
  int refused = 0, read = 0;
  for (const Mode& mode : Modes()) {
    SCOPED_TRACE(mode.name);
    ASSERT_NO_THROW(RefuseUnusedKeys(mode.config));  // each base reads what it sets
    TrainConfig probe = mode.config;
    const size_t keys = ConfigFields(probe).size();
    for (size_t i = 0; i < keys; ++i) {
      TrainConfig changed = mode.config;
      auto fields = ConfigFields(changed);
      ConfigField& field = fields[i];
      if (!SetOtherValue(field)) continue;
      SCOPED_TRACE(field.key + " = " + FieldValueText(field));
      const auto reason = UnusedKeyReason(field.key, changed);
      try {
        RefuseUnusedKeys(changed);
        EXPECT_FALSE(reason.has_value()) << "unused (" << *reason << ") but not refused";
        ++read;
      } catch (const ConfigError& e) {
        const std::string message = e.what();
        if (reason) {
          EXPECT_THAT(message, HasSubstr(field.key));
          EXPECT_THAT(message, HasSubstr("does not read it"));
          ++refused;
        } else {
          // The change made another key unused (e.g. output.diagnostics = false leaves eval.train_rows
          // unread): that key is named, never this one.
          EXPECT_EQ(message.find(field.key + ":"), std::string::npos) << message;
        }
      }
    }
  }
  EXPECT_GT(refused, 50);
  EXPECT_GT(read, 200);
}

// What a run reports, apart from timings and the echo of its configuration: changing a key the run reads
// must change it (AKeyCalledReadChangesTheRunOrSaysWhyNot).
std::string Outputs(const TrainResult& r) {
  std::ostringstream model;
  for (const float v : r.final_model) model << v << ' ';
  return ::asyncdp::testing::OutputsWithoutTimings(r.metrics_csv, r.clients_csv, r.summary) + "\n" +
         model.str();
}

// The rules' claim checked against the runs: a key called unread in a deterministic mode changes nothing.
TEST(ConfigUsage, AKeyCalledUnreadChangesNoOutput) {
  int checked = 0;
  for (const Mode& mode : Modes()) {
    if (mode.name != "async virtual" && mode.name != "async threads, one client" &&
        mode.name != "check-ins" && mode.name != "non-private") {
      continue;
    }
    SCOPED_TRACE(mode.name);
    const TrainResult baseline = RunTraining(mode.config, {.progress = false});
    TrainConfig probe = mode.config;
    const size_t keys = ConfigFields(probe).size();
    for (size_t i = 0; i < keys; ++i) {
      TrainConfig changed = mode.config;
      auto fields = ConfigFields(changed);
      ConfigField& field = fields[i];
      if (!SetOtherValue(field) || !UnusedKeyReason(field.key, changed)) continue;
      SCOPED_TRACE(field.key + " = " + FieldValueText(field));
      TrainResult result;
      try {
        result = RunTraining(changed, {.progress = false, .refuse_unused_keys = false});
      } catch (const InputError&) {
        continue;  // refused by another check as well
      }
      ++checked;
      EXPECT_EQ(WithoutTimings(result.metrics_csv), WithoutTimings(baseline.metrics_csv));
      EXPECT_EQ(WithoutTimings(result.clients_csv), WithoutTimings(baseline.clients_csv));
      EXPECT_TRUE(result.final_model == baseline.final_model);
    }
  }
  EXPECT_GT(checked, 40);
}

// The other direction of "no setting silently ignored": a key the rules call read (no UnusedKeyReason)
// changes what the run reports — or it is listed here with the reason it has no effect in this small run.
// model.l2_lambda on an svm was called read and silently dropped; this is the test that catches that.
TEST(ConfigUsage, AKeyCalledReadChangesTheRunOrSaysWhyNot) {
  // Per mode: keys that are read but change nothing in the base run, and why. The training audit and
  // diagnostics modes are the asynchronous base run with canaries or diagnostics added.
  const std::map<std::string, std::string> async_base = {
      {"data.format", "\"auto\" already reads the LIBSVM files as LIBSVM"},
      {"data.features", "another column count is refused or pads columns no row uses"},
      {"protocol.allow_truncation", "the run completes: nothing to accept"},
      {"protocol.exclude_after", "no client is silent"},
      {"dp.halt_at_budget", "no budget halt is due in 6 rounds"},
      {"output.trace", "the event trace is a file of its own (events.csv), not part of these outputs"},
      {"protocol.worker_threads", "the virtual runtime's results do not depend on its compute threads"},
      {"dp.sigma_schedule", "the one-entry schedule [1] multiplies sigma by 1"},
      {"eval.points", "5 points over 6 rounds evaluate the same rounds as 4 (every second one)"}};
  std::map<std::string, std::string> one_client = async_base;
  // What one synchronous client on the threads runtime leaves unchanged (its MPI twin lists the same:
  // tests/sim/runtime/mpi_config_usage_test.cc).
  one_client.insert(
      {{"data.partition", "one client holds the same rows under either split"},
       {"protocol.server_step", "per_client's w = 1/n is 1 for one client"},
       {"protocol.staleness_exponent", "a synchronous client's updates are never stale: (1 + 0)^(-a) = 1"},
       {"protocol.tau", "tau = 1 lets a lone client compute ahead, on a local model equal to the broadcast"},
       {"protocol.delay_rule",
        "unbounded lets a lone client compute ahead, on a local model equal to the broadcast"},
       {"clients.delay_ids", "a synchronous lone client's delayed messages move only the wall clock"},
       {"clients.straggler_ids", "a lone straggler's slower rounds move only the wall clock"}});
  one_client["protocol.worker_threads"] = "the threads runtime runs one client on one worker thread";
  const std::map<std::string, std::map<std::string, std::string>> no_effect_here = {
      {"async virtual", async_base},
      {"async threads, one client", one_client},
      {"training audit", async_base},
      {"diagnostics", async_base},
      {"check-ins",
       {{"data.format", "\"auto\" already reads the LIBSVM files as LIBSVM"},
        {"data.features", "another column count is refused or pads columns no row uses"},
        {"protocol.allow_truncation", "the run completes: nothing to accept"},
        {"checkin.step_rule", "\"auto\" is one_client for the fixed window"}}},
      // The proactive framework silently ignored dp.sigma, dp.halt_at_budget = false, schedule.epochs and
      // (E.1 sizing) schedule.sample_size until this mode was added here; they are refused now.
      {"proactive",
       {{"data.format", "\"auto\" already reads the LIBSVM files as LIBSVM"},
        {"protocol.worker_threads", "the virtual runtime's results do not depend on its compute threads"},
        {"protocol.allow_truncation", "the run completes: nothing to accept"},
        {"output.trace", "the event trace is a file of its own (events.csv), not part of these outputs"}}},
      {"non-private",
       {{"data.format", "\"auto\" already reads the LIBSVM files as LIBSVM"},
        {"data.features", "another column count is refused or pads columns no row uses"},
        {"protocol.allow_truncation", "the run completes: nothing to accept"},
        {"protocol.exclude_after", "no client is silent"},
        {"output.trace", "the event trace is a file of its own (events.csv), not part of these outputs"},
        {"protocol.worker_threads", "the virtual runtime's results do not depend on its compute threads"},
        {"eval.points", "5 points over 6 rounds evaluate the same rounds as 4 (every second one)"}}},
  };
  int checked = 0;
  for (const Mode& mode : Modes()) {
    if (!no_effect_here.contains(mode.name)) continue;
    SCOPED_TRACE(mode.name);
    const auto& listed = no_effect_here.at(mode.name);
    const std::string baseline = Outputs(RunTraining(mode.config, {.progress = false}));
    TrainConfig probe = mode.config;
    const size_t keys = ConfigFields(probe).size();
    for (size_t i = 0; i < keys; ++i) {
      TrainConfig changed = mode.config;
      auto fields = ConfigFields(changed);
      ConfigField& field = fields[i];
      if (!SetOtherValue(field) || UnusedKeyReason(field.key, changed)) continue;
      SCOPED_TRACE(field.key + " = " + FieldValueText(field));
      std::string outputs;
      try {
        outputs = Outputs(RunTraining(changed, {.progress = false}));
      } catch (const InputError&) {
        continue;  // refused with a message: not silent
      }
      ++checked;
      if (outputs == baseline) {
        EXPECT_TRUE(listed.contains(field.key)) << field.key << " is called read but changed nothing";
      }
    }
  }
  EXPECT_GT(checked, 60);
}

// The cases of the issue, one by one.
TEST(ConfigUsage, TheIssuesIgnoredSettingsAreRefused) {
  auto expect_refused = [](TrainConfig c, const std::string& key, const std::string& what) {
    try {
      RunTraining(c, {.progress = false});
      ADD_FAILURE() << key << " was accepted";
    } catch (const InputError& e) {
      EXPECT_THAT(e.what(), HasSubstr(key));
      EXPECT_THAT(e.what(), HasSubstr(what));
    }
  };
  // The latency and speed models shape only the virtual clock.
  TrainConfig threads = SmallA9aConfig(3, 300);
  threads.protocol.runtime = RuntimeKind::kThreads;
  threads.clients.latency = LatencyModel::kExponential;
  expect_refused(threads, "clients.latency", "virtual clock");
  // Check-ins ignored the runtime and the sampler. They now run on every runtime; worker threads on the
  // virtual runtime (computed on the server's thread) and a sampler of their own are refused.
  TrainConfig checkin = CheckIns();
  checkin.protocol.worker_threads = 2;
  expect_refused(checkin, "protocol.worker_threads", "server's own thread");
  checkin = CheckIns();
  checkin.dp.sampling = SamplingModel::kFixedSizeWithoutReplacement;
  expect_refused(checkin, "dp.sampling", "check_in");
  // Record-level check-ins give client j row j: a partition is not read (user-level check-ins read it).
  checkin = CheckIns();
  checkin.data.rows_per_client = 10;
  expect_refused(checkin, "data.rows_per_client", "one record");
  checkin.dp.unit = PrivacyUnit::kClient;
  checkin.dp.client_clip = 1.0;
  EXPECT_NO_THROW(RefuseUnusedKeys(checkin));
  // Check-ins with 5 clients: δ = 1/n = 0.2 is void.
  checkin = CheckIns();
  checkin.clients.count = 5;
  expect_refused(checkin, "dp.delta", "δ ≥ 0.1");
  // A sliding window's warm-up past every window: every update pure noise.
  checkin = CheckIns();
  checkin.checkin.variant = checkin::Variant::kSlidingWindow;
  checkin.checkin.window_length = 10;
  checkin.checkin.warmup = 5000;
  expect_refused(checkin, "checkin.warmup", "past every client's window");
  // 50 σ-schedule entries on a 20-round plan.
  TrainConfig schedule = SmallA9aConfig(3, 300);
  testing::UseRounds(schedule, 20);
  schedule.dp.sigma_schedule.assign(50, 1.0);
  expect_refused(schedule, "dp.sigma_schedule", "50 entries");
  // One held-out row: accuracy checks of 0 or 1.
  TrainConfig holdout = SmallA9aConfig(5, 2000);
  testing::LeaveScheduleToPhases(holdout);
  holdout.targets.accuracy = 0.8;
  holdout.targets.epsilon = 2.0;
  holdout.targets.holdout_fraction = 0.001;
  expect_refused(holdout, "targets.holdout_fraction", "at least 20");
  // The proactive framework plans its phases' rounds, σ_j and (E.1) sample sizes and always halts at
  // ε_target: what the asynchronous schedule would say instead was silently ignored.
  auto proactive = [] {
    TrainConfig c = SmallA9aConfig(5, 2000);
    testing::LeaveScheduleToPhases(c);
    c.targets.accuracy = 0.8;
    c.targets.epsilon = 2.0;
    return c;
  };
  TrainConfig phases = proactive();
  phases.dp.sigma = 3.0;
  expect_refused(phases, "dp.sigma", "plans sigma per phase");
  phases = proactive();
  phases.dp.halt_at_budget = false;
  expect_refused(phases, "dp.halt_at_budget", "epsilon_target");
  phases = proactive();
  phases.schedule.epochs = 2.0;
  expect_refused(phases, "schedule.epochs", "proactive.phase_epochs");
  phases = proactive();
  phases.schedule.rounds = 7;
  expect_refused(phases, "schedule.rounds", "proactive.phase_epochs");
  phases = proactive();
  phases.schedule.sample_size = 50;
  expect_refused(phases, "schedule.sample_size", "\"e1\" chooses");
  phases.proactive.phase_sizing = PhaseSizing::kCalibrated;  // calibrated phases run at schedule.sample_size
  phases.proactive.phase_sigmas = {2.0, 1.0};
  EXPECT_NO_THROW(RefuseUnusedKeys(phases));
  phases = proactive();
  phases.dp.sigma_schedule = {1.0, 2.0};
  // Named by its own key (the message named dp.epsilon once), by the usage rules like dp.sigma.
  expect_refused(phases, "dp.sigma_schedule: is set to", "plans sigma per phase");
  phases = proactive();
  phases.dp.epsilon = 1.0;
  expect_refused(phases, "dp.epsilon: is set to 1", "within the budget targets.epsilon");
  // Audit keys without an audit.
  TrainConfig audit = SmallA9aConfig(3, 300);
  audit.audit.test_noise_scale = 0.1;
  expect_refused(audit, "audit.test_noise_scale", "audit.canaries = 0");
  // Diagnostics-only keys without diagnostics.
  TrainConfig gradient_norm = SmallA9aConfig(3, 300);
  gradient_norm.eval.gradient_norm = true;
  expect_refused(gradient_norm, "eval.gradient_norm", "output.diagnostics");
}

// Which model reads which model.* key is the registry's statement (models::ReadsOf), not a list of names in
// the configuration code: model.l2_lambda on an svm was silently dropped before; it is now its ridge penalty.
TEST(ConfigUsage, WhatAModelReadsIsTheRegistrysStatement) {
  TrainConfig svm = SmallA9aConfig(3, 300);
  svm.model.kind = "svm";
  ASSERT_NO_THROW(RefuseUnusedKeys(svm));
  const TrainResult plain = RunTraining(svm, {.progress = false});
  svm.model.l2_lambda = 0.5;
  ASSERT_NO_THROW(RefuseUnusedKeys(svm));
  const TrainResult ridge = RunTraining(svm, {.progress = false});
  EXPECT_FALSE(ridge.final_model == plain.final_model);
  EXPECT_LT(ridge.final_model.norm(), plain.final_model.norm());  // the penalty shrinks the weights
  EXPECT_THAT(ToToml(plain.resolved_config), HasSubstr("\nl2_lambda = 0\n"));  // 0 = none, not 1/N

  TrainConfig logistic = SmallA9aConfig(3, 300);
  logistic.model.kind = "logistic";
  logistic.model.l2_lambda = 0.5;
  try {
    RefuseUnusedKeys(logistic);
    ADD_FAILURE() << "model.l2_lambda accepted for logistic";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("model.l2_lambda"));
    EXPECT_THAT(e.what(), HasSubstr("no L2 regulariser"));
  }
  TrainConfig l2 = SmallA9aConfig(3, 300);
  l2.model.kind = "logistic_l2";
  const TrainResult paper = RunTraining(l2, {.progress = false});
  EXPECT_GT(paper.resolved_config.model.l2_lambda, 0.0);  // 1/N_c

  // A registered model declares what it reads; one registered without a declaration reads everything.
  const auto factory = [](const models::ModelOptions&, int64_t, int, const data::ImageShape&) {
    return std::unique_ptr<models::Model>();
  };
  models::RegisterModel("config_usage_test_declared", factory, models::ModelReads{});
  models::RegisterModel("config_usage_test_undeclared", factory);
  TrainConfig plugin = SmallA9aConfig(3, 300);
  plugin.model.hidden = {64};
  plugin.model.kind = "config_usage_test_declared";
  EXPECT_THROW(RefuseUnusedKeys(plugin), ConfigError);
  plugin.model.kind = "config_usage_test_undeclared";
  EXPECT_NO_THROW(RefuseUnusedKeys(plugin));
}

// A key the user wrote is refused when the run does not read it even when the value written is the
// default: `dp.sampling = "poisson"` in a check-in run was accepted although check-ins never sample that way.
TEST(ConfigUsage, AKeyWrittenAtItsDefaultIsStillRefusedWhenUnread) {
  const TrainConfig defaults;
  TrainConfig checkin = CheckIns();
  ASSERT_EQ(checkin.dp.sampling, defaults.dp.sampling);
  ASSERT_NO_THROW(RefuseUnusedKeys(checkin));  // not written: fine
  ApplyOverride(checkin, "dp.sampling=" + std::string(ToString(defaults.dp.sampling)));
  try {
    RefuseUnusedKeys(checkin);
    ADD_FAILURE() << "dp.sampling at its default was accepted in a check-in run";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("dp.sampling"));
    EXPECT_THAT(e.what(), HasSubstr("(its default)"));
    EXPECT_THAT(e.what(), HasSubstr("check_in"));
  }
  // The same from a TOML file, and a key that is read may be written at its default.
  const std::string toml =
      "[protocol]\nparticipation = \"check_in\"\n[dp]\nsigma = 2.0\nclip = 1.0\n"
      "[data]\ntrain = \"x\"\n[schedule]\nepochs = 1\n";
  const TrainConfig parsed = ParseConfigText(toml, "test.toml");
  EXPECT_TRUE(IsGivenKey(parsed, "schedule.epochs"));
  EXPECT_FALSE(IsGivenKey(parsed, "dp.sampling"));
  EXPECT_THROW(RefuseUnusedKeys(parsed), ConfigError);  // schedule.epochs = 1 (the default) is not read
  TrainConfig read = SmallA9aConfig(3, 300);
  ApplyOverride(read, "dp.sampling=" + std::string(ToString(defaults.dp.sampling)));
  ApplyOverride(read, "protocol.runtime=virtual");
  EXPECT_NO_THROW(RefuseUnusedKeys(read));
}

// A client's training length is decided by the first positive of schedule.rounds (T), schedule.iterations
// (K) and schedule.epochs (K = epochs N_c); the keys after it are not read. In one file they are refused;
// a file's epochs under an override of rounds (`--set schedule.rounds=N`, the one-knob switch) is a warning.
TEST(ConfigUsage, OnlyTheKeyThatDecidesTheTrainingLengthMayBeWritten) {
  const std::string head = "[data]\ntrain = \"x\"\n[schedule]\n";
  auto refused_key = [](const TrainConfig& c) -> std::string {
    try {
      RefuseUnusedKeys(c);
      return "";
    } catch (const ConfigError& e) {
      return e.what();
    }
  };
  EXPECT_THAT(refused_key(ParseConfigText(head + "rounds = 3\nepochs = 2\n", "t.toml")),
              HasSubstr("schedule.epochs"));
  EXPECT_THAT(refused_key(ParseConfigText(head + "rounds = 3\niterations = 500\n", "t.toml")),
              HasSubstr("schedule.iterations"));
  EXPECT_THAT(refused_key(ParseConfigText(head + "iterations = 500\nepochs = 2\n", "t.toml")),
              HasSubstr("schedule.iterations > 0 fixes K"));
  // 0 iterations says "K from the other keys", which agrees with any T.
  EXPECT_EQ(refused_key(ParseConfigText(head + "rounds = 3\niterations = 0\n", "t.toml")), "");
  EXPECT_EQ(refused_key(ParseConfigText(head + "rounds = 3\n", "t.toml")), "");
  EXPECT_EQ(refused_key(ParseConfigText(head + "epochs = 2\n", "t.toml")), "");

  // The override layer: a file's epochs left unread by --set schedule.rounds is a warning naming it ...
  TrainConfig switched = ParseConfigText(head + "epochs = 2\n", "t.toml");
  ApplyOverride(switched, "schedule.rounds=4");
  EXPECT_EQ(refused_key(switched), "");
  const std::vector<std::string> warnings = UnreadKeyWarnings(switched);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("schedule.epochs = 2"));
  // ... and both written as overrides contradict each other: refused.
  ApplyOverride(switched, "schedule.epochs=1");
  EXPECT_THAT(refused_key(switched), HasSubstr("schedule.epochs"));
  EXPECT_EQ(MakeRoundPlan(ParseConfigText(head + "rounds = 3\n", "t.toml").schedule, 100).rounds(), 3);
}

// A resolved configuration lists every key, mostly at defaults, the unread ones as comments: re-running it
// works (every key in it counts as written) and gives the same configuration back.
TEST(ConfigUsage, AResolvedConfigurationRunsAgain) {
  for (const Mode& mode : Modes()) {
    if (mode.name == "async mpi") continue;
    SCOPED_TRACE(mode.name);
    const TrainResult first = RunTraining(mode.config, {.progress = false});
    const std::string text = ToToml(first.resolved_config);
    const TrainConfig again = ParseConfigText(text, "config.resolved.toml");
    EXPECT_NO_THROW(ValidateConfig(again));
    EXPECT_EQ(ToToml(again), text);
    EXPECT_THAT(text, HasSubstr("  # not read: "));  // every mode leaves some key unread
  }
}

}  // namespace
}  // namespace asyncdp::sim
