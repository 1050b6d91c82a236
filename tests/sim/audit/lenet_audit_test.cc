// The audit of a CNN (issue 11: "a small MLP or LeNet"): LeNet-5 on Fashion-MNIST images with the Dirac
// gradient canary wrapper (models/dirac_canary.h wraps any Model), both as a multi-run `asyncdp audit` and
// as the one-run audit attached to a training run. Tiny shards and few rounds keep each within seconds.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "sim/audit/audit.h"
#include "sim/audit/train_audit.h"
#include "sim/train.h"
#include "tests/sim/audit/audit_test_util.h"
#include "tests/test_data.h"

namespace asyncdp::sim::audit {
namespace {

using testing::Reported;

// LeNet-5 on the 10,000 Fashion-MNIST test images (20% held out), 3 clients of `rows` images, T full-batch
// rounds at sigma (mu = sqrt(T) / sigma for the Dirac canary).
TrainConfig LeNetRun(const std::string& sampling, int64_t rows, int64_t rounds, double sigma) {
  TrainConfig c;
  c.data.train = asyncdp::testing::FashionMnistFile("t10k-images-idx3-ubyte.gz");
  c.data.rows_per_client = rows;
  c.data.eval_rows = 200;
  c.model.kind = "lenet";
  c.clients.count = 3;
  c.dp.clip = 1.0;
  c.dp.sigma = sigma;
  c.dp.delta = 1e-5;
  c.dp.sampling = EnumFromString<SamplingModel>(sampling).value();
  c.schedule.sample_size = rows;  // full batches
  sim::testing::UseRounds(c, rounds);
  c.schedule.step_rule = StepSizeSchedule::kConstant;
  c.schedule.eta0 = 0.01;
  c.eval.points = 1;
  c.eval.train_rows = 0;
  c.seed = 3;
  return c;
}

TEST(LeNetAuditTest, MultiRunDiracCanaryIsConsistent) {
  AuditOptions o;
  o.runs = 150;
  o.jobs = 2;
  const AuditReport r = RunAudit(LeNetRun("poisson", 16, 3, std::sqrt(3.0)), o);
  EXPECT_FALSE(r.violation) << VerdictLine(r);
  EXPECT_EQ(r.rounds, 3);
  EXPECT_LE(r.eps_lower, Reported(r, "pld")) << VerdictLine(r);
  EXPECT_LE(r.eps_lower, Reported(r, "rdp")) << VerdictLine(r);
  // mu = 1: the full-batch Dirac canary is the Gaussian worst case, and the CNN does not hide it.
  EXPECT_NEAR(r.multi.gdp_fit.mu_hat, 1.0, 0.3);
}

// Replace-one full batches: each planted canary takes the place of one of client 0's 200 images.
TEST(LeNetAuditTest, OneRunAuditOfATrainingRunIsConsistent) {
  TrainConfig c = LeNetRun("fixed_size_without_replacement", 200, 3, 1.0);
  c.audit.canaries = 200;
  const TrainResult r = RunTraining(c, {.progress = false});
  const nlohmann::json& a = r.summary.at("audit");
  EXPECT_EQ(a["verdict"], "consistent") << a["verdict_line"];
  const double lower = a["eps_lower"]["epsilon"].get<double>();
  EXPECT_LE(lower, a["reported"]["pld"]["epsilon"].get<double>());
  EXPECT_LE(lower, a["reported"]["rdp"]["epsilon"].get<double>());
  EXPECT_GT(lower, 0.0) << a["verdict_line"];  // mu = sqrt(3): 200 canaries see it
  EXPECT_EQ(a["audited"]["records"], 200);
  EXPECT_EQ(a["audited"]["records_replaced_by_canaries"], a["one_run"]["planted"]);
}

}  // namespace
}  // namespace asyncdp::sim::audit
