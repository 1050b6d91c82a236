// The one-run audit attached to a training run (audit.canaries = m; sim/audit/train_audit.h): honest runs
// are consistent with every accountant, the accountants account the data the run trained on (canaries
// included), deliberately under-reported noise is flagged as VIOLATION, and audit.canaries = 0 leaves the
// run untouched. Sizes keep each test within a second or two.
#include "sim/audit/train_audit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/error.h"
#include "sim/audit/audit.h"
#include "sim/experiment.h"
#include "sim/train.h"
#include "tests/sim/audit/audit_test_util.h"

namespace asyncdp::sim::audit {
namespace {

// The audit tests' configuration; client 0 carries m Dirac canaries, one evaluation, seed 7.
TrainConfig AuditedRun(const std::string& sampling, int64_t rows, int64_t sample_size, int64_t rounds,
                       double sigma, int64_t canaries) {
  TrainConfig c = testing::AuditConfig(sampling, rows, sample_size, rounds, sigma);
  c.eval.points = 1;
  c.audit.canaries = canaries;
  c.seed = 7;
  return c;
}

const nlohmann::json& Audit(const TrainResult& r) { return r.summary.at("audit"); }

void ExpectConsistent(const TrainResult& r) {
  const nlohmann::json& a = Audit(r);
  EXPECT_EQ(a["verdict"], "consistent") << a["verdict_line"];
  const double lower = a["eps_lower"]["epsilon"].get<double>();
  EXPECT_GE(lower, 0.0);
  for (const char* accountant : {"pld", "rdp"}) {
    ASSERT_TRUE(a["reported"][accountant]["epsilon"].is_number()) << accountant;
    EXPECT_LE(lower, a["reported"][accountant]["epsilon"].get<double>()) << accountant;
  }
}

// Poisson sampling: the planted canaries are added to client 0's 100 records, so its plan is made from the
// grown N_0 (q_0 = s / N_0 = 100 / N_0, while the other clients run full batches), and its epsilon is
// accounted at that q_0 — below the other clients', hence below the summary's maximum.
TEST(TrainAuditTest, DiracPoissonIsConsistentAndAccountsTheGrownDataSet) {
  const TrainResult r = RunTraining(AuditedRun("poisson", 100, 100, 8, 1.0, 400));
  ExpectConsistent(r);
  const nlohmann::json& a = Audit(r);
  const int64_t planted = a["one_run"]["planted"].get<int64_t>();
  EXPECT_GT(planted, 150);
  EXPECT_LT(planted, 250);
  EXPECT_EQ(a["audited"]["records_without_canaries"], 100);
  EXPECT_EQ(a["audited"]["records"], 100 + planted);
  EXPECT_EQ(r.experiment->data.shards[0].rows(), 100 + planted);
  EXPECT_EQ(r.experiment->plans[0].n_records, 100 + planted);
  EXPECT_NEAR(r.experiment->plans[0].rate(0), 100.0 / static_cast<double>(100 + planted), 1e-12);
  EXPECT_EQ(r.experiment->plans[1].n_records, 100);
  EXPECT_LT(a["reported"]["pld"]["epsilon"].get<double>(), r.summary["privacy"]["epsilon"]["pld"].get<double>());
  EXPECT_EQ(a["audited"]["neighbours"], "add_remove");
  EXPECT_GT(a["eps_lower"]["epsilon"].get<double>(), 0.0) << a["verdict_line"];
  EXPECT_TRUE(a["fault_injection"].is_null());
  EXPECT_NE(a["assumptions"].dump().find("part of this run's training data"), std::string::npos);
  // Every client's model gained the m canary parameters; accuracy is still the base model's.
  EXPECT_EQ(r.final_model.size(), 124 + 400);
  EXPECT_GT(r.summary["test_accuracy"].get<double>(), 0.6);
}

// Full batches of a replace-one sampler (each planted canary replaces one of the 300 records, q = 1 for
// every client): the white-box Dirac canaries are the Gaussian worst case, mu = sqrt(T) / sigma = 2, and one
// run with 300 canaries proves a clearly positive lower bound. The reported epsilon is every client's.
TEST(TrainAuditTest, DiracFullBatchIsConsistentAndResolved) {
  const TrainResult r = RunTraining(AuditedRun("fixed_size_without_replacement", 300, 300, 4, 1.0, 300));
  ExpectConsistent(r);
  const nlohmann::json& a = Audit(r);
  EXPECT_EQ(a["audited"]["records"], 300);
  EXPECT_EQ(a["audited"]["records_replaced_by_canaries"], a["one_run"]["planted"]);
  EXPECT_NEAR(a["reported"]["pld"]["epsilon"].get<double>(), r.summary["privacy"]["epsilon"]["pld"].get<double>(),
              1e-9);
  EXPECT_GT(a["eps_lower"]["epsilon"].get<double>(), 0.5) << a["verdict_line"];
  EXPECT_GT(a["one_run"]["correct"].get<int64_t>(), a["one_run"]["guesses"].get<int64_t>() * 3 / 4);
}

TEST(TrainAuditTest, SubsampledSamplersAreConsistent) {
  for (const std::string sampling : {"poisson", "fixed_size_without_replacement", "shuffle"}) {
    SCOPED_TRACE(sampling);
    const TrainResult r = RunTraining(AuditedRun(sampling, 200, 50, 8, 1.0, 100));
    ExpectConsistent(r);
    const nlohmann::json& a = Audit(r);
    const int64_t planted = a["one_run"]["planted"].get<int64_t>();
    if (sampling == "poisson") {
      EXPECT_EQ(a["audited"]["records"], 200 + planted);
      EXPECT_EQ(a["audited"]["neighbours"], "add_remove");
    } else {
      // Replace-one: each planted canary took the place of one record; N_c is unchanged.
      EXPECT_EQ(a["audited"]["records"], 200);
      EXPECT_EQ(a["audited"]["records_replaced_by_canaries"], planted);
      EXPECT_EQ(a["audited"]["neighbours"], "replace_one");
    }
  }
}

// The threads runtime runs the same audit: a Dirac canary's projection is C times its batch count plus the
// round's seeded noise, whatever model the client computed at, so the verdict and bound are the virtual
// runtime's exactly.
TEST(TrainAuditTest, ThreadsRuntimeGivesTheSameAudit) {
  TrainConfig c = AuditedRun("fixed_size_without_replacement", 200, 50, 6, 1.0, 100);
  const TrainResult virtual_run = RunTraining(c);
  c.protocol.runtime = RuntimeKind::kThreads;
  const TrainResult threads_run = RunTraining(c);
  EXPECT_EQ(Audit(threads_run)["eps_lower"], Audit(virtual_run)["eps_lower"]);
  EXPECT_EQ(Audit(threads_run)["one_run"], Audit(virtual_run)["one_run"]);
  ExpectConsistent(threads_run);
}

// Input-space canaries: relabelled copies of the client's own records, scored by the final model's loss.
TEST(TrainAuditTest, MislabelledCanariesAreConsistent) {
  TrainConfig c = AuditedRun("poisson", 300, 30, 20, 1.0, 100);
  c.audit.canary = TrainCanary::kMislabelled;
  c.schedule.eta0 = 1.0;
  const TrainResult r = RunTraining(c);
  ExpectConsistent(r);
  const nlohmann::json& a = Audit(r);
  EXPECT_EQ(a["audited"]["records"], 300 + a["one_run"]["planted"].get<int64_t>());
  EXPECT_NE(a["threat_model"].get<std::string>().find("final global model"), std::string::npos);
  EXPECT_EQ(r.final_model.size(), 124);  // no canary parameters
}

// `asyncdp audit --mode one-run --canary mislabelled` runs the same training-run audit.
TEST(TrainAuditTest, OneRunAuditCommandTakesMislabelledCanaries) {
  AuditOptions o;
  o.mode = AuditMode::kOneRun;
  o.canary = CanaryKind::kMislabelled;
  o.view = AuditView::kFinalModel;
  o.canaries = 100;
  TrainConfig c = AuditedRun("shuffle", 300, 30, 20, 1.0, 0);
  const AuditReport r = RunAudit(c, o);
  EXPECT_FALSE(r.violation) << VerdictLine(r);
  EXPECT_EQ(r.canary_scores.size(), 100u);
  EXPECT_EQ(r.included.size(), 100u);
  EXPECT_EQ(r.client_records, 300);  // shuffle: replace-one, the canaries took the place of records
  EXPECT_EQ(r.statistic, "loss");
  EXPECT_EQ(r.trainings, 1);
  for (const auto& e : r.reported) {
    if (e.bound == accounting::BoundKind::kUpperBound && e.available) {
      EXPECT_LE(r.eps_lower, e.epsilon) << accounting::ToString(e.accountant);
    }
  }
  const nlohmann::json j = AuditJson(r);
  EXPECT_EQ(j["one_run"]["canaries"], 100);
  EXPECT_NE(j["canary"].get<std::string>().find("m distinct records"), std::string::npos);
  // Opposite canaries stay multi-run only.
  o.canary = CanaryKind::kOpposite;
  EXPECT_THROW(RunAudit(c, o), ConfigError);
}

// The deliberately wrong accountant through the train path: the audited client adds 0.05 sigma while
// sigma = 8 is accounted. The one-run bound cannot exceed ~ln(r / ln(1 / beta)) with r guesses, so the
// fault must make the canaries almost perfectly separable for one run to refute it.
TEST(TrainAuditTest, UnderReportedNoiseIsAViolation) {
  TrainConfig c = AuditedRun("poisson", 100, 100, 4, 8.0, 400);
  const TrainResult honest = RunTraining(c);
  EXPECT_EQ(Audit(honest)["verdict"], "consistent") << Audit(honest)["verdict_line"];
  c.audit.test_noise_scale = 0.05;
  const TrainResult faulty = RunTraining(c);
  const nlohmann::json& a = Audit(faulty);
  EXPECT_EQ(a["verdict"], "VIOLATION") << a["verdict_line"];
  EXPECT_GT(a["eps_lower"]["epsilon"].get<double>(), a["reported"]["pld"]["epsilon"].get<double>());
  EXPECT_EQ(a["fault_injection"]["noise_scale"], 0.05);
  EXPECT_NE(a["verdict_line"].get<std::string>().find("VIOLATION"), std::string::npos);
}

// audit.canaries = 0 (the default) changes nothing, whatever the other audit.* keys say.
TEST(TrainAuditTest, NoCanariesLeavesTheRunUnchanged) {
  TrainConfig plain = AuditedRun("poisson", 100, 20, 6, 1.0, 0);
  TrainConfig other = plain;
  other.audit.client = 2;
  other.audit.canary = TrainCanary::kMislabelled;
  other.audit.confidence = 0.9;
  const TrainResult a = RunTraining(plain);
  EXPECT_FALSE(a.summary.contains("audit"));
  EXPECT_EQ(a.experiment->train_canaries, nullptr);
  EXPECT_EQ(a.final_model.size(), 124);
  // Audit keys without canaries would be ignored: the run refuses them, naming the key (no setting is
  // silently ignored, sim/config_usage.cc).
  try {
    RunTraining(other);
    ADD_FAILURE() << "audit keys without audit.canaries were accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("audit.client"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("audit.canaries = 0"), std::string::npos) << e.what();
  }
  // And a run with canaries trains on other data (the audit is really attached).
  TrainConfig audited = plain;
  audited.audit.canaries = 20;
  const TrainResult c = RunTraining(audited);
  EXPECT_NE(c.experiment->data.shards[0].rows(), 100);
}

TEST(TrainAuditTest, BadAuditKeysAreConfigErrors) {
  auto expect_error = [](TrainConfig c, const std::string& key) {
    try {
      RunTraining(c);
      ADD_FAILURE() << "no error for " << key;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  TrainConfig c = AuditedRun("poisson", 50, 10, 2, 1.0, 5);
  expect_error(c, "audit.canaries");  // too few to say anything
  c.audit.canaries = 20;
  c.audit.client = 3;
  expect_error(c, "audit.client");
  c.audit.client = 0;
  c.dp.sampling = SamplingModel::kFixedSizeWithoutReplacement;
  c.audit.canaries = 60;  // more than the 50 records a replace-one audit can replace
  expect_error(c, "audit.canaries");
  c.dp.sampling = SamplingModel::kPoisson;
  c.audit.canary = TrainCanary::kMislabelled;  // 60 distinct records of 50
  expect_error(c, "audit.canaries");
  c.audit.canaries = 20;
  c.dp.enabled = false;
  expect_error(c, "dp.enabled");
}

}  // namespace
}  // namespace asyncdp::sim::audit
