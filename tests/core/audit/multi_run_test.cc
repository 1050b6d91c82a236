// The multi-run audit on synthetic scores from mechanisms whose true epsilon the test computes itself by
// hockey-stick integration (tests/core/audit/hockey_stick.h): soundness (a bound above the truth no more
// often than the confidence allows), power (the worst-case Dirac canary's statistic reaches half the
// truth with 2,000 runs per side), and the bookkeeping around them.
#include "core/audit/multi_run.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/audit/clopper_pearson.h"
#include "core/error.h"
#include "core/random.h"
#include "tests/core/audit/hockey_stick.h"

namespace asyncdp::audit {
namespace {

using testing::GaussianDensity;
using testing::GaussianPairEpsilon;
using testing::TrueEpsilon;

// n scores of the full-batch Dirac canary in noise units: N(mu, 1) with the canary, N(0, 1) without.
std::vector<double> GaussianScores(uint64_t seed, uint32_t side, int n, double mean) {
  RandomStream stream(StreamKey{seed, side, 0, StreamPurpose::kTest});
  std::vector<double> s(n);
  for (double& x : s) x = mean + stream.NextNormal();
  return s;
}

TEST(MultiRunAuditTest, DefinitionBoundIsTheDpInequalityAtClopperPearsonBounds) {
  // All 1000 in-runs above the threshold, none of the 1000 out-runs: TPR_lo = 0.025^(1/1000),
  // FPR_hi = 1 - 0.025^(1/1000) (closed forms), eps = ln((TPR_lo - delta) / FPR_hi).
  const double tl = std::pow(0.025, 1.0 / 1000);
  const ThresholdBound perfect = DefinitionBound(1000, 1000, 0, 1000, 1e-5, 0.05);
  EXPECT_NEAR(perfect.tpr_lower, tl, 1e-13);
  EXPECT_NEAR(perfect.fpr_upper, 1 - tl, 1e-13);
  EXPECT_NEAR(perfect.epsilon, std::log((tl - 1e-5) / (1 - tl)), 1e-10);
  EXPECT_NEAR(perfect.epsilon, 5.6, 0.01);
  // All in-runs above, half the out-runs too: the complementary inequality TNR <= e^eps FNR + delta wins.
  const ThresholdBound half = DefinitionBound(1000, 1000, 500, 1000, 1e-5, 0.05);
  EXPECT_TRUE(half.complement);
  EXPECT_NEAR(half.epsilon, std::log((1 - half.fpr_upper - 1e-5) / (1 - half.tpr_lower)), 1e-12);
  EXPECT_NEAR(half.fpr_upper, ClopperPearsonUpper(500, 1000, 0.025), 1e-15);
  // No separation: no bound.
  EXPECT_EQ(DefinitionBound(500, 1000, 500, 1000, 1e-5, 0.05).epsilon, 0.0);
  // delta larger than TPR_lo: the inequality says nothing.
  EXPECT_EQ(DefinitionBound(3, 1000, 0, 1000, 0.5, 0.05).epsilon, 0.0);
}

TEST(MultiRunAuditTest, SoundOverManySeedsAndPointEstimatesAreNot) {
  // Gaussian pair with true eps(1e-5) ~ 2 (mu = 0.502), 500 runs per side, 100 independent audits. Each
  // bound may exceed the truth with probability <= 5%; allow the 99.9% quantile of Bin(100, 0.05) (12).
  // Negative control: ln(TPR/FPR) at the selected threshold WITHOUT Clopper–Pearson exceeds the truth far
  // more often — the test can tell a sound bound from an unsound one.
  const double mu = 0.502;
  const double delta = 1e-5;
  const double truth = GaussianPairEpsilon(mu, delta);
  ASSERT_NEAR(truth, 2.0, 0.01);
  MultiRunAuditOptions options;
  options.delta = delta;
  int violations_definition = 0;
  int violations_gdp_counts = 0;
  int violations_gdp_fit = 0;
  int violations_point = 0;
  const int audits = 100;
  for (int seed = 0; seed < audits; ++seed) {
    const auto in = GaussianScores(1000 + seed, 1, 500, mu);
    const auto out = GaussianScores(1000 + seed, 0, 500, 0.0);
    const MultiRunAuditResult r = MultiRunAudit(in, out, options);
    violations_definition += r.definition.epsilon > truth;
    violations_gdp_counts += r.gdp_counts.epsilon > truth;
    violations_gdp_fit += r.gdp_fit.epsilon > truth;
    // Point estimate at the best threshold of the evaluation runs themselves.
    double best = 0.0;
    const std::span<const double> ein(in.data() + r.selection_in, in.size() - r.selection_in);
    const std::span<const double> eout(out.data() + r.selection_out, out.size() - r.selection_out);
    for (const double t : ein) {
      double tp = 0, fp = 0;
      for (const double x : ein) tp += x >= t;
      for (const double x : eout) fp += x >= t;
      if (fp > 0) best = std::max(best, std::log((tp / ein.size() - delta) / (fp / eout.size())));
    }
    violations_point += best > truth;
  }
  RecordProperty("violations_definition", violations_definition);
  RecordProperty("violations_gdp_counts", violations_gdp_counts);
  RecordProperty("violations_gdp_fit", violations_gdp_fit);
  RecordProperty("violations_point_estimate", violations_point);
  EXPECT_LE(violations_definition, 12);
  EXPECT_LE(violations_gdp_counts, 12);
  EXPECT_LE(violations_gdp_fit, 12);
  EXPECT_GT(violations_point, 30);
}

TEST(MultiRunAuditTest, JointClopperPearsonCoverageAtAFixedThresholdMatchesTheConfidence) {
  // At the threshold t = 0.5 fixed in advance, the two one-sided bounds (alpha/2 each) hold together in
  // at least 95% of 400 audits (true rates: TPR = Phi(mu - t), FPR = Phi(-t)).
  const double mu = 1.0;
  const double t = 0.5;
  auto phi = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  int misses = 0;
  const int audits = 400;
  for (int seed = 0; seed < audits; ++seed) {
    const auto in = GaussianScores(5000 + seed, 1, 300, mu);
    const auto out = GaussianScores(5000 + seed, 0, 300, 0.0);
    int64_t tp = 0, fp = 0;
    for (const double x : in) tp += x >= t;
    for (const double x : out) fp += x >= t;
    const ThresholdBound b = DefinitionBound(tp, 300, fp, 300, 1e-5, 0.05);
    misses += b.tpr_lower > phi(mu - t) || b.fpr_upper < phi(-t);
  }
  RecordProperty("joint_misses_of_400", misses);
  EXPECT_LE(misses, 20 + 3 * std::sqrt(400 * 0.05 * 0.95));
}

TEST(MultiRunAuditTest, DiracCanaryWith2000RunsPerSideReachesHalfTheTrueEpsilon) {
  // Power (issue: the worst case realised, eps in [2, 8], 2,000 runs each side): the Nasr et al. GDP
  // bound from counts reaches >= eps / 2 in every one of 8 audits per eps, and never exceeds the truth.
  struct Case {
    double mu;
    double eps;
  };
  const double delta = 1e-5;
  MultiRunAuditOptions options;
  options.delta = delta;
  for (const Case c : {Case{0.502, 2.0}, Case{0.925, 4.0}, Case{1.666, 8.0}}) {
    const double truth = GaussianPairEpsilon(c.mu, delta);
    ASSERT_NEAR(truth, c.eps, 0.01);
    double worst_ratio = 1e9, worst_definition = 1e9, worst_fit = 1e9;
    for (int seed = 0; seed < 8; ++seed) {
      const auto in = GaussianScores(9000 + seed, 1, 2000, c.mu);
      const auto out = GaussianScores(9000 + seed, 0, 2000, 0.0);
      const MultiRunAuditResult r = MultiRunAudit(in, out, options);
      EXPECT_LE(r.gdp_counts.epsilon, truth) << c.eps << " seed " << seed;
      EXPECT_LE(r.definition.epsilon, truth) << c.eps << " seed " << seed;
      worst_ratio = std::min(worst_ratio, r.gdp_counts.epsilon / truth);
      worst_definition = std::min(worst_definition, r.definition.epsilon / truth);
      worst_fit = std::min(worst_fit, r.gdp_fit.epsilon / truth);
    }
    RecordProperty("worst_gdp_counts_ratio_eps" + std::to_string(static_cast<int>(c.eps)),
                   std::to_string(worst_ratio));
    RecordProperty("worst_definition_ratio_eps" + std::to_string(static_cast<int>(c.eps)),
                   std::to_string(worst_definition));
    RecordProperty("worst_gdp_fit_ratio_eps" + std::to_string(static_cast<int>(c.eps)),
                   std::to_string(worst_fit));
    EXPECT_GE(worst_ratio, 0.5) << "eps " << c.eps;
    EXPECT_GE(worst_fit, 0.5) << "eps " << c.eps;
  }
}

// Runs of eps0-randomised response: the score is a bit, 1 with probability e^eps0 / (1 + e^eps0) with the
// canary and 1 / (1 + e^eps0) without — exactly eps0-DP, with a bounded privacy loss (far from Gaussian).
std::vector<double> RandomisedResponseScores(uint64_t seed, uint32_t side, int n, double eps0) {
  RandomStream stream(StreamKey{seed, side, 2, StreamPurpose::kTest});
  const double p = (side == 1 ? std::exp(eps0) : 1.0) / (1.0 + std::exp(eps0));
  std::vector<double> s(n);
  for (double& x : s) x = stream.NextUniform() < p ? 1.0 : 0.0;
  return s;
}

TEST(MultiRunAuditTest, DefinitionBoundIsSoundAndTightishOnRandomisedResponseWhereGdpIsNot) {
  // True eps(1e-5) of eps0-RR with eps0 = 1: the hockey-stick sum over its two outcomes (the oracle).
  const double eps0 = 1.0, delta = 1e-5;
  const double p1 = std::exp(eps0) / (1 + std::exp(eps0)), p0 = 1 / (1 + std::exp(eps0));
  auto profile = [&](double eps) {
    const double scale = std::exp(eps);
    return std::max(0.0, p1 - scale * p0) + std::max(0.0, (1 - p0) - scale * (1 - p1));
  };
  double lo = 0.0, hi = eps0 + 1.0;
  while (hi - lo > 1e-9) ((profile(0.5 * (lo + hi)) > delta) ? lo : hi) = 0.5 * (lo + hi);
  const double truth = hi;
  ASSERT_NEAR(truth, eps0, 1e-4);
  // 100 audits of 2,000 runs per side. The definition bound gets close to the truth here (the best test
  // is the single threshold 1), so a wrong confidence bound would show: it may exceed the truth in at
  // most 5% (allowance 12). The GDP conversions extrapolate a Gaussian curve through the observed error
  // rates and land far above eps0: their label ("assumes a Gaussian trade-off") is not decoration.
  MultiRunAuditOptions options;
  options.delta = delta;
  int violations = 0, gdp_above_twice = 0, point_violations = 0;
  double mean = 0.0;
  for (int seed = 0; seed < 100; ++seed) {
    const auto in = RandomisedResponseScores(40 + seed, 1, 2000, eps0);
    const auto out = RandomisedResponseScores(40 + seed, 0, 2000, eps0);
    const MultiRunAuditResult r = MultiRunAudit(in, out, options);
    violations += r.definition.epsilon > truth;
    gdp_above_twice += r.gdp_counts.epsilon > 2 * truth;
    mean += r.definition.epsilon / 100;
    // Negative control: ln(TPR / FPR) at threshold 1 on the evaluation runs, no confidence bound.
    double tp = 0, fp = 0;
    for (size_t j = r.selection_in; j < in.size(); ++j) tp += in[j];
    for (size_t j = r.selection_out; j < out.size(); ++j) fp += out[j];
    point_violations += std::log(tp / fp) > truth;
  }
  RecordProperty("rr_violations_of_100", violations);
  RecordProperty("rr_mean_definition_bound", std::to_string(mean));
  RecordProperty("rr_point_estimate_violations_of_100", point_violations);
  RecordProperty("rr_gdp_above_twice_truth_of_100", gdp_above_twice);
  EXPECT_LE(violations, 12);
  EXPECT_GT(mean, 0.6);
  EXPECT_GT(point_violations, 30);
  EXPECT_GT(gdp_above_twice, 90);
}

// The privacy profile of the Gaussian pair with shift mu, delta(eps) on eps = 0, 0.25, ..., 8, from the
// hockey-stick integral (the oracle, not core/audit).
std::vector<ProfilePoint> GaussianProfile(double mu) {
  std::vector<ProfilePoint> profile;
  for (int j = 0; j <= 32; ++j) {
    const double eps = 0.25 * j;
    profile.push_back({eps, testing::HockeyStick([mu](double x) { return GaussianDensity(x, mu); },
                                                 [](double x) { return GaussianDensity(x, 0.0); }, eps, -14.0,
                                                 14.0 + mu, 40000)});
  }
  return profile;
}

TEST(MultiRunAuditTest, ProfileTestRejectsAnUnderReportingAccountantAndNotATrueOne) {
  // An accountant that accounts sigma while the noise is 0.7 sigma reports the profile of mu = 0.925
  // (eps(1e-5) = 4) for runs whose true mu is 0.925 / 0.7 (true eps 6.1). With 1,000 runs per side the
  // profile test refutes it in every audit, while the true profile is refuted in at most 5% (allowance 3
  // of 20) — and the lower bound on eps at delta = 1e-5 alone would not have noticed (it stays below the
  // reported 4).
  const double claimed_mu = 0.925;
  const double actual_mu = claimed_mu / 0.7;
  MultiRunAuditOptions options;
  options.delta = 1e-5;
  int refuted_wrong = 0, refuted_true = 0, definition_above_claim = 0;
  const auto claimed = GaussianProfile(claimed_mu);
  const auto truth = GaussianProfile(actual_mu);
  for (int seed = 0; seed < 20; ++seed) {
    const auto in = GaussianScores(700 + seed, 1, 1000, actual_mu);
    const auto out = GaussianScores(700 + seed, 0, 1000, 0.0);
    options.reported_profile = claimed;
    const MultiRunAuditResult wrong = MultiRunAudit(in, out, options);
    ASSERT_TRUE(wrong.profile_checked);
    refuted_wrong += wrong.profile.refuted;
    definition_above_claim += wrong.definition.epsilon > 4.0;
    options.reported_profile = truth;
    refuted_true += MultiRunAudit(in, out, options).profile.refuted;
  }
  RecordProperty("gaussian_refuted_under_reporting_of_20", refuted_wrong);
  RecordProperty("gaussian_refuted_true_profile_of_20", refuted_true);
  EXPECT_GE(refuted_wrong, 19);
  EXPECT_LE(refuted_true, 3);
  EXPECT_EQ(definition_above_claim, 0);
}

TEST(MultiRunAuditTest, ProfileTestRejectsUnderReportingOfASubsampledStep) {
  // The same bug on one Poisson-subsampled step (q = 0.5, shift 2 accounted, 2 / 0.7 run): a lopsided
  // trade-off. Profiles of the mixture pair (both directions) from the hockey-stick integral. (At
  // q = 0.1 the difference lives in the 10% of in-runs that sampled the canary, and 2,000 runs per side
  // refute it only about half the time: small sampling rates need more runs.)
  const double q = 0.5;
  auto mixture_profile = [&](double mu) {
    std::vector<ProfilePoint> profile;
    const testing::Density p = [&, mu](double x) {
      return (1 - q) * GaussianDensity(x, 0.0) + q * GaussianDensity(x, mu);
    };
    const testing::Density o = [](double x) { return GaussianDensity(x, 0.0); };
    for (int j = 0; j <= 24; ++j) {
      const double eps = 0.25 * j;
      profile.push_back({eps, std::max(testing::HockeyStick(p, o, eps, -14, 14 + mu, 40000),
                                       testing::HockeyStick(o, p, eps, -14, 14 + mu, 40000))});
    }
    return profile;
  };
  const double claimed_mu = 2.0, actual_mu = 2.0 / 0.7;
  MultiRunAuditOptions options;
  options.delta = 1e-5;
  const auto claimed = mixture_profile(claimed_mu);
  const auto truth = mixture_profile(actual_mu);
  int refuted_wrong = 0, refuted_true = 0;
  for (int seed = 0; seed < 20; ++seed) {
    RandomStream in_stream(StreamKey{static_cast<uint64_t>(800 + seed), 1, 3, StreamPurpose::kTest});
    std::vector<double> in(1000);
    for (double& x : in) x = (in_stream.NextUniform() < q ? actual_mu : 0.0) + in_stream.NextNormal();
    const auto out = GaussianScores(800 + seed, 0, 1000, 0.0);
    options.reported_profile = claimed;
    refuted_wrong += MultiRunAudit(in, out, options).profile.refuted;
    options.reported_profile = truth;
    refuted_true += MultiRunAudit(in, out, options).profile.refuted;
  }
  RecordProperty("subsampled_refuted_under_reporting_of_20", refuted_wrong);
  RecordProperty("subsampled_refuted_true_profile_of_20", refuted_true);
  EXPECT_GE(refuted_wrong, 18);
  EXPECT_LE(refuted_true, 3);
}

TEST(MultiRunAuditTest, ThresholdIsChosenOnHeldOutRunsOnly) {
  auto in = GaussianScores(77, 1, 40, 2.0);
  auto out = GaussianScores(77, 0, 40, 0.0);
  MultiRunAuditOptions options;
  options.selection_fraction = 0.25;
  const MultiRunAuditResult a = MultiRunAudit(in, out, options);
  EXPECT_EQ(a.selection_in, 10);
  EXPECT_EQ(a.selection_out, 10);
  EXPECT_EQ(a.evaluation_in, 30);
  EXPECT_EQ(a.evaluation_out, 30);
  // The threshold is one of the selection runs' scores (or +inf).
  const bool from_selection =
      std::find(in.begin(), in.begin() + 10, a.definition.threshold) != in.begin() + 10 ||
      std::find(out.begin(), out.begin() + 10, a.definition.threshold) != out.begin() + 10;
  EXPECT_TRUE(from_selection);
  // Changing evaluation runs changes the grade, never the threshold.
  for (size_t j = 10; j < in.size(); ++j) in[j] -= 3.0;
  const MultiRunAuditResult b = MultiRunAudit(in, out, options);
  EXPECT_EQ(b.definition.threshold, a.definition.threshold);
  EXPECT_EQ(b.gdp_counts.threshold, a.gdp_counts.threshold);
  EXPECT_LT(b.definition.epsilon, a.definition.epsilon + 1e-12);
  EXPECT_EQ(b.definition.true_positives + b.definition.false_positives >= 0, true);
}

TEST(MultiRunAuditTest, ZeroDeltaGivesOnlyTheDefinitionBound) {
  MultiRunAuditOptions options;
  options.delta = 0.0;
  const MultiRunAuditResult r =
      MultiRunAudit(GaussianScores(5, 1, 200, 5.0), GaussianScores(5, 0, 200, 0.0), options);
  EXPECT_GT(r.definition.epsilon, 2.0);
  EXPECT_EQ(r.gdp_counts.epsilon, 0.0);
  EXPECT_EQ(r.gdp_fit.epsilon, 0.0);
  EXPECT_GT(r.roc_area, 0.99);
}

TEST(MultiRunAuditTest, BadInputIsAClearError) {
  const std::vector<double> ok = {0.1, 0.2, 0.3};
  MultiRunAuditOptions options;
  EXPECT_THROW(MultiRunAudit(std::vector<double>{0.1}, ok, options), InputError);
  EXPECT_THROW(MultiRunAudit(std::vector<double>{0.1, NAN}, ok, options), InputError);
  EXPECT_THROW(MultiRunAudit(ok, std::vector<double>{INFINITY, 0.0}, options), InputError);
  options.confidence = 1.0;
  EXPECT_THROW(MultiRunAudit(ok, ok, options), ConfigError);
  options.confidence = 0.95;
  options.delta = -1e-9;
  EXPECT_THROW(MultiRunAudit(ok, ok, options), ConfigError);
  options.delta = 1e-5;
  options.selection_fraction = 1.0;
  try {
    MultiRunAudit(ok, ok, options);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where(), "audit.selection_fraction");
  }
}

}  // namespace
}  // namespace asyncdp::audit
