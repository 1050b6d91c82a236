// The one-run audit's estimator on deterministic synthetic scores (issue 31's fixture): canary scores at
// the Gaussian quantiles of N(mu, 1) (10,000 IN) and N(0, 1) (10,000 OUT), level (i + 0.5) / 10,000,
// delta = 1e-6, confidence 0.95, with the guess counts `asyncdp audit --mode one-run` and training-run audits
// use (OneRunGuessChoices, Bonferroni over 12 choices). The values below were computed by this code on
// 2026-11-28 (docs/audit.md, "The one-run estimator on synthetic scores", compares them with JAX-Privacy's);
// they pin the estimator, and each stays below the true epsilon of the Gaussian pair.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/audit/normal.h"
#include "core/audit/one_run.h"
#include "sim/audit/reported_epsilons.h"

namespace asyncdp::sim::audit {
namespace {

struct SyntheticCase {
  double mu;
  double epsilon;      // this estimator, pinned
  int64_t guesses;     // r of the winning choice
  int64_t correct;     // v
  double true_epsilon; // of N(mu, 1) vs N(0, 1) at delta = 1e-6 (issue 31: 4.89, 11.0, 26.4)
};

TEST(OneRunFixture, SyntheticGaussianScoresGiveThePinnedBounds) {
  constexpr int kPerSide = 10'000;
  const std::vector<SyntheticCase> cases = {{1.0, 2.3320542881, 400, 380, 4.89},
                                            {2.0, 4.5099818036, 1000, 998, 11.0},
                                            {4.0, 7.2152106157, 10'000, 10'000, 26.4}};
  double previous = 0.0;
  for (const SyntheticCase& c : cases) {
    SCOPED_TRACE(c.mu);
    std::vector<double> scores;
    std::vector<uint8_t> included;
    for (int i = 0; i < kPerSide; ++i) {
      scores.push_back(asyncdp::audit::NormalQuantile((i + 0.5) / kPerSide) + c.mu);
      included.push_back(1);
    }
    for (int i = 0; i < kPerSide; ++i) {
      scores.push_back(asyncdp::audit::NormalQuantile((i + 0.5) / kPerSide));
      included.push_back(0);
    }
    asyncdp::audit::OneRunAuditOptions options;
    options.delta = 1e-6;
    options.confidence = 0.95;
    const auto choices = OneRunGuessChoices(2 * kPerSide);
    const asyncdp::audit::OneRunAuditResult r =
        asyncdp::audit::OneRunAuditBestOf(scores, included, choices, options);
    EXPECT_NEAR(r.epsilon, c.epsilon, 1e-6);
    EXPECT_EQ(r.guesses, c.guesses);
    EXPECT_EQ(r.correct, c.correct);
    EXPECT_NEAR(r.beta, 0.05 / static_cast<double>(choices.size()), 1e-15);
    EXPECT_LT(r.epsilon, c.true_epsilon);  // a lower bound never above the truth
    EXPECT_GT(r.epsilon, previous);        // more separable canaries, a larger bound
    previous = r.epsilon;
  }
}

}  // namespace
}  // namespace asyncdp::sim::audit
