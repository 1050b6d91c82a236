// The utility graph library (sim/utility_graph.h): the grid parser, option validation, the noisy-copy
// statistics on a hand-made problem, and one small end-to-end graph on a9a.
#include "sim/utility_graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "models/factory.h"
#include "sim/config_io.h"
#include "sim/config_usage.h"
#include "tests/sim/config_change.h"
#include "tests/sim/key_probe.h"
#include "tests/sim/sim_test_util.h"

namespace asyncdp::sim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// 200 dense rows in 2-D: x = (±1, 0.1·j mod 1), label 1 iff x_0 > 0. The logistic model with w = (4, 0),
// b = 0 classifies every row correctly.
data::Dataset SeparableData() {
  data::Dataset d;
  d.source = "separable";
  d.format = data::DataFormat::kSynthetic;
  d.is_sparse = false;
  d.dense = data::DenseMatrix(200, 2);
  for (int r = 0; r < 200; ++r) {
    const bool positive = r % 2 == 0;
    d.dense(r, 0) = positive ? 1.0f : -1.0f;
    d.dense(r, 1) = static_cast<float>((r % 10) / 10.0);
    d.labels.push_back(positive ? 1 : 0);
  }
  d.class_names = {"0", "1"};
  return d;
}

struct Separable {
  data::Dataset data = SeparableData();
  std::unique_ptr<models::Model> model = models::MakeModel(models::ModelOptions{}, 2, 2);
  std::vector<float> w_star;
  Separable() {
    w_star.assign(static_cast<size_t>(model->NumParams()), 0.0f);
    w_star[0] = 4.0f;  // weight of x_0; the remaining weight and the bias stay 0
  }
};

TEST(ParseNumberGrid, ExpandsEllipsisRangesAndLists) {
  EXPECT_THAT(ParseNumberGrid("0,2,...,10", "--sigmas"), ElementsAre(0, 2, 4, 6, 8, 10));
  EXPECT_THAT(ParseNumberGrid("0,2,\u2026,6", "--sigmas"), ElementsAre(0, 2, 4, 6));
  EXPECT_THAT(ParseNumberGrid("0:1:0.25", "--sigmas"), ElementsAre(0, 0.25, 0.5, 0.75, 1));
  EXPECT_THAT(ParseNumberGrid("0.025, 0.05,0.1", "--clips"), ElementsAre(0.025, 0.05, 0.1));
  EXPECT_THAT(ParseNumberGrid("1,3,...,7,20", "--sigmas"), ElementsAre(1, 3, 5, 7, 20));
  const std::vector<double> decimal = ParseNumberGrid("0.1,0.2,...,0.7", "--clips");
  ASSERT_EQ(decimal.size(), 7u);
  EXPECT_DOUBLE_EQ(decimal.back(), 0.7);
}

TEST(ParseNumberGrid, RejectsMalformedGridsNamingTheOption) {
  for (const char* bad :
       {"", "a", "1,,2", "...,4", "0,...,4", "0,2,...", "0,2,...,5", "1:0:1", "0:4", "0:4:0", "1e999"}) {
    try {
      ParseNumberGrid(bad, "--sigmas");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const ConfigError& e) {
      EXPECT_THAT(e.what(), HasSubstr("--sigmas")) << bad;
    }
  }
}

TEST(ValidateUtilityGraphOptions, RejectsEmptyNonPositiveUnsortedAndBadCounts) {
  const UtilityGraphOptions good{.clips = {0.1, 0.05}, .sigmas = {0, 2}, .draws = 3, .threshold = 0.9};
  EXPECT_NO_THROW(ValidateUtilityGraphOptions(good));
  auto with = [&](auto change) {
    UtilityGraphOptions o = good;
    change(o);
    return o;
  };
  EXPECT_THROW(ValidateUtilityGraphOptions(with([](auto& o) { o.clips.clear(); })), ConfigError);
  EXPECT_THROW(ValidateUtilityGraphOptions(with([](auto& o) { o.clips = {0.1, 0.0}; })), ConfigError);
  EXPECT_THROW(ValidateUtilityGraphOptions(with([](auto& o) { o.clips = {0.1, 0.1}; })), ConfigError);
  EXPECT_THROW(ValidateUtilityGraphOptions(with([](auto& o) { o.sigmas = {2, 1}; })), ConfigError);
  EXPECT_THROW(ValidateUtilityGraphOptions(with([](auto& o) { o.sigmas = {-1}; })), ConfigError);
  EXPECT_THROW(ValidateUtilityGraphOptions(with([](auto& o) { o.draws = 0; })), ConfigError);
  EXPECT_THROW(ValidateUtilityGraphOptions(with([](auto& o) { o.threshold = 1.5; })), ConfigError);
}

TEST(MeasureNoisyCopies, SigmaZeroReproducesTheBaseAccuracyExactly) {
  Separable p;
  const double base = p.model->Evaluate(p.w_star, p.data).accuracy;
  ASSERT_DOUBLE_EQ(base, 1.0);
  const UtilityPoint point = MeasureNoisyCopies(*p.model, p.data, p.w_star, base, 0.1, 0.0, 5, 7);
  EXPECT_EQ(point.draws, 5);
  EXPECT_DOUBLE_EQ(point.mean_fraction, 1.0);
  EXPECT_DOUBLE_EQ(point.std_fraction, 0.0);
  EXPECT_DOUBLE_EQ(point.min_fraction, 1.0);
  EXPECT_DOUBLE_EQ(point.max_fraction, 1.0);
  EXPECT_DOUBLE_EQ(point.mean_accuracy, base);
}

TEST(MeasureNoisyCopies, LargeNoiseLowersTheFractionAndTheStatisticsAreConsistent) {
  Separable p;
  // C·σ = 20 per coordinate swamps w* = (4, 0, 0): the copies are close to random classifiers.
  const UtilityPoint point = MeasureNoisyCopies(*p.model, p.data, p.w_star, 1.0, 1.0, 20.0, 40, 7);
  EXPECT_LT(point.mean_fraction, 0.9);
  EXPECT_LE(point.min_fraction, point.mean_fraction);
  EXPECT_GE(point.max_fraction, point.mean_fraction);
  EXPECT_GT(point.std_fraction, 0.0);
  EXPECT_DOUBLE_EQ(point.mean_fraction, point.mean_accuracy / 1.0);
}

TEST(MeasureNoisyCopies, DependsOnlyOnItsArgumentsAndTheSeed) {
  Separable p;
  const UtilityPoint a = MeasureNoisyCopies(*p.model, p.data, p.w_star, 1.0, 1.0, 5.0, 16, 3);
  const UtilityPoint b = MeasureNoisyCopies(*p.model, p.data, p.w_star, 1.0, 1.0, 5.0, 16, 3);
  EXPECT_EQ(a.mean_fraction, b.mean_fraction);
  EXPECT_EQ(a.std_fraction, b.std_fraction);
  // The same draws z_d scaled: C·σ is what matters, not C and σ separately.
  const UtilityPoint c = MeasureNoisyCopies(*p.model, p.data, p.w_star, 1.0, 2.0, 2.5, 16, 3);
  EXPECT_EQ(a.mean_fraction, c.mean_fraction);
  const UtilityPoint other_seed = MeasureNoisyCopies(*p.model, p.data, p.w_star, 1.0, 1.0, 5.0, 16, 4);
  EXPECT_NE(a.mean_accuracy, other_seed.mean_accuracy);
}

TEST(MeasureNoisyCopies, ZeroBaseAccuracyLeavesTheFractionUndefined) {
  Separable p;
  const UtilityPoint point = MeasureNoisyCopies(*p.model, p.data, p.w_star, 0.0, 0.1, 1.0, 2, 1);
  EXPECT_TRUE(std::isnan(point.mean_fraction));
  EXPECT_TRUE(std::isnan(point.std_fraction));
}

TEST(WStarConfig, TrainsWithClippingAndWithoutNoise) {
  TrainConfig base;
  base.dp.enabled = true;
  base.dp.sigma = 3.0;
  base.dp.epsilon = 0.5;
  base.dp.clip = 1.0;
  const TrainConfig c = WStarConfig(base, 0.05);
  EXPECT_FALSE(c.dp.enabled);
  EXPECT_DOUBLE_EQ(c.dp.clip, 0.05);
  EXPECT_DOUBLE_EQ(c.dp.sigma, 0.0);
  EXPECT_DOUBLE_EQ(c.dp.epsilon, 0.0);
}

TEST(RunUtilityGraph, OneCurvePerClipStartingAtFractionOne) {
  TrainConfig config = testing::SmallA9aConfig(3, 400);
  config.schedule.epochs = 2.0;
  const UtilityGraphOptions options{
      .clips = {0.05, 0.1}, .sigmas = {0, 10, 40}, .draws = 3, .threshold = 0.9};
  const UtilityGraph graph = RunUtilityGraph(config, options, /*progress=*/false);
  ASSERT_EQ(graph.curves.size(), 2u);
  for (const UtilityCurve& curve : graph.curves) {
    EXPECT_GT(curve.base_accuracy, 0.6) << "C = " << curve.clip;
    ASSERT_EQ(curve.points.size(), 3u);
    EXPECT_DOUBLE_EQ(curve.points[0].mean_fraction, 1.0);
    EXPECT_GE(curve.max_sigma_at_threshold, 0.0);
    EXPECT_EQ(curve.wstar_summary["privacy"]["noise_multiplier"], 0.0);
    EXPECT_DOUBLE_EQ(curve.wstar_summary["clip"].get<double>(), curve.clip);
  }
  const std::string csv = UtilityGraphCsv(graph);
  EXPECT_EQ(csv.rfind("clip,sigma,draws,base_accuracy,mean_accuracy,mean_fraction,std_fraction,min_fraction,"
                      "max_fraction\n",
                      0),
            0u);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 2 * 3);
  const nlohmann::json summary = UtilityGraphSummary(graph);
  EXPECT_EQ(summary["seed"], config.seed);
  EXPECT_EQ(summary["draws"], 3);
  EXPECT_EQ(summary["curves"].size(), 2u);
  EXPECT_TRUE(summary["config"].is_string());
}

// What a graph reports apart from timings and configuration echoes: its CSV, and each w* run's metrics and
// summary.
std::string Outputs(const UtilityGraph& graph) {
  std::string out = UtilityGraphCsv(graph);
  for (const UtilityCurve& curve : graph.curves) {
    nlohmann::json summary = curve.wstar_summary;
    // Echoes of dp.delta, which a run without noise does not read (no accounting), beside its "config".
    summary.erase("delta");
    summary["privacy"].erase("delta");
    out += asyncdp::testing::OutputsWithoutTimings(curve.wstar_metrics_csv, "", summary);
  }
  return out;
}

// Every registry key, set to another valid value alone, changes the graph, is refused with a message, or is
// called unread (and then changes nothing): what `asyncdp utility-graph` refuses as an override.
TEST(UtilityGraphUnreadReason, EveryKeyChangesTheGraphOrIsCalledUnreadAndChangesNothing) {
  TrainConfig base = testing::SmallA9aConfig(3, 300);
  testing::UseRounds(base, 6);
  const UtilityGraphOptions options{.clips = {0.1}, .sigmas = {0, 4}, .draws = 2, .threshold = 0.9};
  // Keys a w* run reads that change nothing in this base, and why (as in tests/sim/config_usage_test.cc).
  const std::map<std::string, std::string> no_effect_here = {
      {"data.format", "\"auto\" already reads the LIBSVM files as LIBSVM"},
      {"data.features", "another column count is refused or pads columns no row uses"},
      {"protocol.allow_truncation", "the run completes: nothing to accept"},
      {"protocol.exclude_after", "no client is silent"},
      {"protocol.worker_threads", "the virtual runtime's results do not depend on its compute threads"},
      {"eval.points", "5 points over 6 rounds evaluate the same rounds as 4 (every second one)"}};
  const auto [read, unread] = ::asyncdp::testing::ProbeEveryKey(
      base,
      [&options](const TrainConfig& c) { return Outputs(RunUtilityGraph(c, options, /*progress=*/false)); },
      UtilityGraphUnreadReason, no_effect_here, "the graph");
  EXPECT_GT(read, 30);
  EXPECT_GT(unread, 30);
}

TEST(UtilityGraphUnreadReason, AnOverrideTheGraphSetsItselfIsRefusedNamingIt) {
  TrainConfig config = testing::SmallA9aConfig(3, 300);
  ApplyOverride(config, "schedule.sample_size=20");
  const auto refuse = [&config] {
    RefuseUnreadOverrides(config, "utility-graph", [&config](const std::string& key) {
      return UtilityGraphUnreadReason(key, config);
    });
  };
  EXPECT_NO_THROW(refuse());
  ApplyOverride(config, "dp.sigma=3");
  try {
    refuse();
    ADD_FAILURE() << "dp.sigma was accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("dp.sigma"));
    EXPECT_THAT(e.what(), HasSubstr("--sigmas"));
  }
}

}  // namespace
}  // namespace asyncdp::sim
