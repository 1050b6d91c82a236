#include "core/accounting/proactive/proactive.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"

namespace asyncdp::accounting {
namespace {

// Spec §9 reference vectors (relative tolerance 1e-5 unless noted).
void ExpectRel(double actual, double expected, double tolerance = 1e-5) {
  EXPECT_NEAR(actual, expected, tolerance * std::abs(expected));
}

TEST(ProactiveTest, SigmaEpsilonRelationSixAndItsInverse) {
  ExpectRel(SigmaOfEpsilon(0.04945, 1e-4), 19.352293);
  ExpectRel(SigmaOfEpsilon(0.5, 1e-4), 6.232284);
  ExpectRel(SigmaOfEpsilon(0.5, 1e-4), std::sqrt(2 + 4 * std::log(1e4)), 1e-12);
  ExpectRel(EpsilonOfSigma(19.29962, 1e-4), 0.0497217470);
  ExpectRel(EpsilonOfSigma(12.10881, 1.0 / 60000), 0.1521484);
  ExpectRel(EpsilonOfSigma(6.572, 1.0 / 50000), 0.5253444);
  EXPECT_NEAR(SigmaOfEpsilon(EpsilonOfSigma(7.0, 1e-5), 1e-5), 7.0, 1e-12);
  EXPECT_TRUE(std::isinf(EpsilonOfSigma(1.4, 1e-5)));  // sigma^2 <= 2
}

TEST(ProactiveTest, HelperFunctionsHAndG) {
  // The paper prints h(6) = 0.42 and h(10) = 0.58; the definition gives 0.415757 and 0.584397 (the spec's
  // 0.415752 / 0.584403 differ in the 6th digit; 19.29962 matches it exactly).
  EXPECT_NEAR(ProactiveH(6), 0.42, 0.005);
  EXPECT_NEAR(ProactiveH(10), 0.58, 0.005);
  ExpectRel(ProactiveH(6), 0.415757, 2e-6);
  ExpectRel(ProactiveH(19.29962), 0.755202);
  ExpectRel(ProactiveG(19.29962), 0.019061, 3e-5);
  EXPECT_DOUBLE_EQ(ProactiveG(19.29962), 1 / (std::exp(1.0) * 19.29962));  // g = 1/(e x) for x >= 6
  ExpectRel(std::sqrt(2 + 4 * std::log(100000.0)), 6.931933);
}

TEST(ProactiveTest, GammaPaperLiteralAndExact) {
  const double eps9 = EpsilonOfSigma(19.29962, 1e-4);
  ExpectRel(GammaRhs(19.29962, eps9 / (2 * 5)), 3.814945);
  ExpectRel(SolveGamma(19.29962, eps9, 5, GammaMode::kPaperLiteral), 3.814945);
  ExpectRel(GammaRhs(19.29962, eps9 / (3.814945 * 5)), 2.910995);  // the next (decreasing) iterate
  ExpectRel(SolveGamma(19.29962, eps9, 5, GammaMode::kExact), 3.125243);
  const double eps10 = EpsilonOfSigma(12.10881, 1.0 / 60000);
  ExpectRel(SolveGamma(12.10881, eps10, 6, GammaMode::kPaperLiteral), 5.281112);
  ExpectRel(SolveGamma(12.10881, eps10, 6, GammaMode::kExact), 3.667876);
  const double eps11 = EpsilonOfSigma(6.572, 1.0 / 50000);
  ExpectRel(SolveGamma(6.572, eps11, 7, GammaMode::kPaperLiteral), 9.225327);
  ExpectRel(SolveGamma(6.572, eps11, 7, GammaMode::kExact), 4.624620);
}

TEST(ProactiveTest, ExactGammaIsTheSmallestSolution) {
  const double sigma = 12.10881;
  const double eps = EpsilonOfSigma(sigma, 1.0 / 60000);
  const double gamma = SolveGamma(sigma, eps, 6, GammaMode::kExact);
  EXPECT_GE(gamma, GammaRhs(sigma, eps / (gamma * 6)));
  const double below = gamma * (1 - 1e-9);
  EXPECT_LT(below, GammaRhs(sigma, eps / (below * 6)));
  // F_gamma is undefined from alpha_bar = h(sigma) on, and blows up approaching it.
  EXPECT_TRUE(std::isinf(GammaRhs(sigma, ProactiveH(sigma) * (1 + 1e-9))));
  EXPECT_GT(GammaRhs(sigma, ProactiveH(sigma) * (1 - 1e-6)), 1e3);
}

TEST(ProactiveTest, ConditionCheckReportsEachConditionWithMargins) {
  // Table 9 setting at s = 26: every Theorem 3.1 condition holds; (7) with the spec's numbers.
  ProactiveInputs in;
  in.n_records = 10000;
  in.iterations = 50000;
  in.mean_sample_size = 26;
  in.sigma = 19.29962;
  in.delta = 1e-4;
  in.gamma_mode = GammaMode::kPaperLiteral;
  const ProactiveCheck check = CheckProactiveConditions(in);
  ExpectRel(check.epsilon, 0.0497217470);
  const ConditionResult* seven = check.Find("(7)");
  ASSERT_NE(seven, nullptr);
  ExpectRel(seven->lhs, 13.5335);
  ExpectRel(seven->rhs, 9.7103);
  EXPECT_TRUE(seven->holds);
  EXPECT_NEAR(seven->margin, seven->lhs - seven->rhs, 1e-12);
  EXPECT_TRUE(check.Find("(35)")->holds);  // sigma and eps tied by (6) must not fail by rounding
  EXPECT_TRUE(check.theorem_3_1);
  EXPECT_TRUE(check.theorem_b4);
  // (8) and (34) are the same inequality when s_bar = K / T.
  EXPECT_EQ(check.Find("(8)")->holds, check.Find("(34)")->holds);

  in.mean_sample_size = 40;  // above s_max = 26: (8) fails, and the margin says by how much
  const ProactiveCheck too_big = CheckProactiveConditions(in);
  const ConditionResult* eight = too_big.Find("(8)");
  EXPECT_FALSE(eight->holds);
  EXPECT_NEAR(eight->margin, 50000.0 / 40 - 1918.147, 1e-2);
  EXPECT_FALSE(too_big.theorem_3_1);
}

TEST(ProactiveTest, Table11ViolatesEpsBelowHalf) {
  ProactiveInputs in{50000, 350000, 406, 1.0, 6.572, 2e-5};
  const ProactiveCheck check = CheckProactiveConditions(in);
  EXPECT_FALSE(check.Find("eps<0.5")->holds);  // spec §8.7: 0.5253 >= 0.5
  EXPECT_FALSE(check.theorem_3_1);
}

// Theorem B.4's proof also needs eps N / (2K) <= h(sigma) (spec §5.5). Here (32)-(35) all hold but that
// condition fails, and it alone decides: N = 1000, K = 50 (k = 0.05), s_bar = 1, eps = 0.1, delta = 1e-5,
// sigma from (35) with equality: eps/(2k) = 1 > h(15.24) = 0.70.
TEST(ProactiveTest, TheoremB4NeedsEpsilonOverTwoEpochsBelowH) {
  ProactiveInputs in;
  in.n_records = 1000;
  in.iterations = 50;
  in.mean_sample_size = 1;
  in.delta = 1e-5;
  in.epsilon = 0.1;
  in.sigma = SigmaOfEpsilon(0.1, 1e-5);
  const ProactiveCheck c = CheckProactiveConditions(in);
  for (const char* id : {"(32)", "(33)", "(34)", "(35)"}) EXPECT_TRUE(c.Find(id)->holds) << id;
  const ConditionResult* extra = c.Find("eps/(2k)<=h");
  ASSERT_NE(extra, nullptr);
  EXPECT_DOUBLE_EQ(extra->lhs, 1.0);
  EXPECT_NEAR(extra->rhs, ProactiveH(in.sigma), 1e-15);
  EXPECT_FALSE(extra->holds);
  EXPECT_FALSE(c.theorem_b4);
  // Ten times the epochs: the condition holds and so does the theorem.
  in.iterations = 500;
  in.mean_sample_size = 10;
  const ProactiveCheck ok = CheckProactiveConditions(in);
  EXPECT_TRUE(ok.Find("eps/(2k)<=h")->holds);
  EXPECT_EQ(ok.theorem_b4, ok.Find("(32)")->holds && ok.Find("(33)")->holds && ok.Find("(34)")->holds);
}

TEST(ProactiveTest, RejectsInvalidInputs) {
  EXPECT_THROW(CheckProactiveConditions({0, 1, 1, 1, 10, 1e-4}), ConfigError);
  EXPECT_THROW(CheckProactiveConditions({1e4, 5e4, 10, 0.5, 10, 1e-4}), ConfigError);
  EXPECT_THROW(ParseGammaMode("fast", "calc.mode"), ConfigError);
  EXPECT_EQ(ParseGammaMode("paper", "calc.mode"), GammaMode::kPaperLiteral);
}

}  // namespace
}  // namespace asyncdp::accounting
