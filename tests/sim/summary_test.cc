// The summary fields every participation policy shares (sim/summary.h): a diverged model reports no
// accuracy, and the outcome and headline values are written as docs/design.md ("Released fields") lists them.
#include "sim/summary.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "sim/headline_epsilon.h"

namespace asyncdp::sim {
namespace {

MetricsRow Evaluated(double loss, double accuracy) {
  MetricsRow row;
  row.test_loss = loss;
  row.test_accuracy = accuracy;
  return row;
}

TEST(SummaryAccuracy, FiniteModelReportsItsAccuracy) {
  const SummaryAccuracy a = AccuracyOf(Eigen::VectorXf::Ones(3), Evaluated(0.4, 0.8));
  EXPECT_FALSE(a.diverged);
  EXPECT_EQ(a.test_accuracy, 0.8);
  EXPECT_EQ(a.test_loss, 0.4);
}

TEST(SummaryAccuracy, NonFiniteParameterOrLossIsDivergedWithNoAccuracy) {
  Eigen::VectorXf nan_model = Eigen::VectorXf::Ones(3);
  nan_model[1] = std::numeric_limits<float>::quiet_NaN();
  Eigen::VectorXf inf_model = Eigen::VectorXf::Ones(3);
  inf_model[2] = std::numeric_limits<float>::infinity();
  // NaN compares false, so a NaN model can score an "accuracy" (here 0.5): none is reported.
  for (const SummaryAccuracy& a :
       {AccuracyOf(nan_model, Evaluated(0.4, 0.5)), AccuracyOf(inf_model, Evaluated(0.4, 0.5)),
        AccuracyOf(Eigen::VectorXf::Ones(3), Evaluated(std::nan(""), 0.5))}) {
    EXPECT_TRUE(a.diverged);
    EXPECT_FALSE(a.test_accuracy.has_value());
    EXPECT_FALSE(a.test_loss.has_value());
  }
}

SummaryCore Core() {
  SummaryCore core;
  core.accuracy = AccuracyOf(Eigen::VectorXf::Ones(2), Evaluated(0.3, 0.9));
  core.privacy = {{"accountant", "pld"}};
  core.epsilon = {{.accountant = "pld", .epsilon = 1.5, .lower_bound = false},
                  {.accountant = "pld_lower", .epsilon = 1.4, .lower_bound = true},
                  {.accountant = "proactive", .epsilon = std::nullopt, .lower_bound = false}};
  core.delta = 1e-5;
  core.sigma = 1.2;
  core.clip = 0.5;
  core.wall_seconds = 2.0;
  core.runtime = RuntimeKind::kThreads;
  core.seed = 7;
  core.model_kind = "logistic";
  core.parameters = 124;
  core.config_toml = "seed = 7\n";
  return core;
}

TEST(CommonSummaryJson, WritesTheSharedFields) {
  const nlohmann::json s = CommonSummaryJson(Core());
  EXPECT_FALSE(s["diverged"].get<bool>());
  EXPECT_EQ(s["test_accuracy"].get<double>(), 0.9);
  // The headline is written once, from the typed values, in both places.
  EXPECT_EQ(s["epsilon"], nlohmann::json({{"pld", 1.5}, {"pld_lower", 1.4}, {"proactive", nullptr}}));
  EXPECT_EQ(s["epsilon"], s["privacy"]["epsilon"]);
  EXPECT_EQ(s["privacy"]["accountant"], "pld");
  EXPECT_EQ(s["sigma"].get<double>(), 1.2);
  EXPECT_FALSE(s["sigma_calibrated"].get<bool>());
  EXPECT_FALSE(s.contains("client_clip"));  // record-level DP
  EXPECT_FALSE(s.contains("cancelled"));
  EXPECT_FALSE(s["truncated"].get<bool>());
  EXPECT_TRUE(s["unfinished"].empty());
  EXPECT_TRUE(s["virtual_seconds"].is_null());  // a wall clock
  EXPECT_EQ(s["runtime"], "threads");
  EXPECT_EQ(s["seed"].get<uint64_t>(), 7u);
  EXPECT_EQ(s["model"]["parameters"].get<int64_t>(), 124);
  EXPECT_TRUE(s.contains("noise_generator_version"));
  EXPECT_TRUE(s.contains("asyncdp_version"));
}

TEST(CommonSummaryJson, DivergedAndCutShortRuns) {
  SummaryCore core = Core();
  core.accuracy =
      AccuracyOf(Eigen::VectorXf::Constant(2, std::numeric_limits<float>::infinity()), Evaluated(0.3, 0.9));
  core.client_clip = 2.0;
  core.virtual_seconds = 12.5;
  core.outcome = {.truncated = true,
                  .cancelled = true,
                  .unfinished = {{.client = 3,
                                  .reason = UnfinishedReason::kCancelled,
                                  .rounds = 4,
                                  .planned_rounds = 9,
                                  .applied_rounds = 4}}};
  const nlohmann::json s = CommonSummaryJson(core);
  EXPECT_TRUE(s["diverged"].get<bool>());
  EXPECT_TRUE(s["test_accuracy"].is_null());
  EXPECT_TRUE(s["test_loss"].is_null());
  EXPECT_EQ(s["client_clip"].get<double>(), 2.0);
  EXPECT_EQ(s["virtual_seconds"].get<double>(), 12.5);
  EXPECT_TRUE(s["truncated"].get<bool>());
  EXPECT_TRUE(s["cancelled"].get<bool>());
  EXPECT_EQ(s["unfinished_clients"], nlohmann::json::array({3}));
  EXPECT_EQ(s["unfinished"][0]["reason"], "cancelled");
  EXPECT_EQ(s["unfinished"][0]["planned_rounds"].get<int64_t>(), 9);
}

TEST(HeadlineEpsilon, OneValuePerAccountantWhateverThePolicy) {
  const std::vector<HeadlineEpsilon> accountants = {
      {.accountant = "rdp", .epsilon = 2.25, .lower_bound = false},
      {.accountant = "pld", .epsilon = 1.875, .lower_bound = false},
      {.accountant = "pld_lower", .epsilon = 1.75, .lower_bound = true},
      {.accountant = "proactive", .epsilon = std::nullopt, .lower_bound = false}};
  EXPECT_EQ(HeadlineJson(accountants),
            nlohmann::json({{"rdp", 2.25}, {"pld", 1.875}, {"pld_lower", 1.75}, {"proactive", nullptr}}));
  // The log line states the upper bounds only; a lower bound is no guarantee.
  EXPECT_EQ(HeadlineText(accountants), "rdp 2.25 / pld 1.875 / proactive none");

  // A check-in run's one bound is keyed by its accountant too, so summary["epsilon"] has one shape.
  const std::vector<HeadlineEpsilon> checkins = {
      {.accountant = "random_allocation", .epsilon = 0.5, .lower_bound = false}};
  EXPECT_EQ(HeadlineJson(checkins), nlohmann::json({{"random_allocation", 0.5}}));
  EXPECT_EQ(HeadlineText(checkins), "random_allocation 0.5");
  const std::vector<HeadlineEpsilon> unbounded = {
      {.accountant = "random_allocation", .epsilon = std::nullopt, .lower_bound = false}};
  EXPECT_EQ(HeadlineJson(unbounded), nlohmann::json({{"random_allocation", nullptr}}));
  EXPECT_EQ(HeadlineText(unbounded), "random_allocation none");
}

TEST(HeadlineEpsilon, NonFiniteIsNoBound) {
  EXPECT_EQ(FiniteOrNone(1.5), 1.5);
  EXPECT_FALSE(FiniteOrNone(std::numeric_limits<double>::infinity()).has_value());
  EXPECT_FALSE(FiniteOrNone(std::nan("")).has_value());
}

}  // namespace
}  // namespace asyncdp::sim
