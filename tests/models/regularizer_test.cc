// Tests of models/regularizer.h and of how the L2 term enters each per-example gradient BEFORE clipping
// (Section 4 and Appendix D, objectives; docs/theory.md §2): g_r = grad loss_r + mu w_bar_reg, then clip_C(g_r).
#include "models/regularizer.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/clipping.h"
#include "core/error.h"
#include "models/factory.h"
#include "tests/models/synthetic_data.h"

namespace asyncdp::models {
namespace {

TEST(RegularizerTest, CoefficientFollowsTheConvention) {
  L2Options o;
  o.lambda = 0.5;
  EXPECT_DOUBLE_EQ(PerExampleL2Coefficient(o), 0.5);  // per example: strong convexity modulus lambda
  o.convention = RegularizerConvention::kLiteral;
  o.num_records = 1000;
  EXPECT_DOUBLE_EQ(PerExampleL2Coefficient(o), 0.5 / 1000);  // lambda/(2N) in each f
  o.lambda = 0.0;
  o.num_records = 0;
  EXPECT_DOUBLE_EQ(PerExampleL2Coefficient(o), 0.0);
}

TEST(RegularizerTest, NamesRoundTripAndInvalidOptionsNameTheirKey) {
  for (const auto c : {RegularizerConvention::kPerExample, RegularizerConvention::kLiteral}) {
    EXPECT_EQ(ParseRegularizerConvention(ToString(c)), c);
  }
  EXPECT_THROW(ParseRegularizerConvention("sag"), ConfigError);
  L2Options o;
  o.lambda = -1.0;
  try {
    ValidateL2Options(o);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where(), "model.l2_lambda");
  }
  o.lambda = 1.0;
  o.convention = RegularizerConvention::kLiteral;
  try {
    ValidateL2Options(o);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where(), "model.regularizer_num_records");
  }
}

struct Pair {
  std::unique_ptr<Model> plain, regularised;
};

Pair MakePair(bool regularize_bias, RegularizerConvention convention) {
  ModelOptions plain;  // logistic
  ModelOptions reg;
  reg.kind = "logistic_l2";
  reg.l2_lambda = 0.6;
  reg.regularizer_convention = convention;
  reg.regularizer_num_records = 3;
  reg.regularize_bias = regularize_bias;
  return {MakeModel(plain, 6, 2), MakeModel(reg, 6, 2)};
}

std::vector<float> Grad(const Model& m, const std::vector<float>& params, const data::Dataset& data,
                        std::vector<int64_t> batch, double clip) {
  std::vector<float> g(m.NumParams());
  auto ws = m.NewWorkspace(8);
  m.ClippedGradientSum(params, data, batch, clip, g, *ws);
  return g;
}

TEST(RegularizerTest, EachPerExampleGradientCarriesMuTimesWBarBeforeClipping) {
  const auto data = synthetic::MakeSyntheticData(17, 10, 6, 2, true);
  const auto exact = synthetic::RandomParams(18, 7, 0.7);
  const std::vector<float> params(exact.begin(), exact.end());
  for (const bool bias : {true, false}) {
    for (const auto convention : {RegularizerConvention::kPerExample, RegularizerConvention::kLiteral}) {
      const Pair p = MakePair(bias, convention);
      const double mu = convention == RegularizerConvention::kPerExample ? 0.6 : 0.2;
      for (int64_t r = 0; r < 10; ++r) {
        const auto plain = Grad(*p.plain, params, data, {r}, kNoClip);
        // Unclipped: g_reg = g_plain + mu w_bar_reg (the bias coordinate only if regularised).
        std::vector<float> expected = plain;
        for (int j = 0; j < 6; ++j) expected[j] += static_cast<float>(mu * params[j]);
        if (bias) expected[6] += static_cast<float>(mu * params[6]);
        const auto reg = Grad(*p.regularised, params, data, {r}, kNoClip);
        for (int j = 0; j < 7; ++j) EXPECT_NEAR(reg[j], expected[j], 1e-6) << r << " " << j;
        // Clipped: the regulariser is inside the clipped vector, clip_C(g_plain + mu w_bar), not
        // clip_C(g_plain) + mu w_bar.
        const double clip = 0.05;
        ClipInPlace(std::span<float>(expected), clip);
        const auto clipped = Grad(*p.regularised, params, data, {r}, clip);
        for (int j = 0; j < 7; ++j) EXPECT_NEAR(clipped[j], expected[j], 1e-6) << r << " " << j;
      }
      // A batch: sum_r clip_C(g_plain,r + mu w_bar).
      std::vector<float> sum(7, 0.0f);
      for (int64_t r = 0; r < 10; ++r) {
        auto g = Grad(*p.plain, params, data, {r}, kNoClip);
        for (int j = 0; j < 6; ++j) g[j] += static_cast<float>(mu * params[j]);
        if (bias) g[6] += static_cast<float>(mu * params[6]);
        ClipInPlace(std::span<float>(g), 0.05);
        for (int j = 0; j < 7; ++j) sum[j] += g[j];
      }
      const auto batched = Grad(*p.regularised, params, data, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 0.05);
      for (int j = 0; j < 7; ++j) EXPECT_NEAR(batched[j], sum[j], 1e-5) << j;
    }
  }
}

TEST(RegularizerTest, EvaluatedLossAddsHalfMuSquaredNorm) {
  const auto data = synthetic::MakeSyntheticData(19, 30, 6, 2, false);
  const auto exact = synthetic::RandomParams(20, 7, 0.7);
  const std::vector<float> params(exact.begin(), exact.end());
  double w_sq = 0;
  for (int j = 0; j < 6; ++j) w_sq += double{params[j]} * params[j];
  const double b_sq = double{params[6]} * params[6];
  for (const bool bias : {true, false}) {
    const Pair p = MakePair(bias, RegularizerConvention::kPerExample);
    const double expected = p.plain->Evaluate(params, data).loss + 0.3 * (w_sq + (bias ? b_sq : 0.0));
    EXPECT_NEAR(p.regularised->Evaluate(params, data).loss, expected, 1e-6);
  }
}

}  // namespace
}  // namespace asyncdp::models
