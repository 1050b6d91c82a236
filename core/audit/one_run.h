// The one-run audit of Steinke, Nasr & Jagielski 2023, "Privacy auditing with one (1) training run"
// (NeurIPS 2023; arXiv:2305.08846). m canaries are each included in the training data independently with
// probability 1/2; after ONE run, the auditor scores every canary, guesses IN for the k_plus highest
// scores and OUT for the k_minus lowest, and abstains on the rest. With r = k_plus + k_minus guesses of
// which v are correct, an (eps, delta)-DP training satisfies (their Corollary 5.4, the delta > 0 form of
// the main theorem)
//
//   P[W >= v] <= P[Bin(r, q) >= v] + 2 m delta * max_{i = 1..v} P[v - i <= Bin(r, q) < v] / i,
//   q = e^eps / (1 + e^eps),
//
// the right side being the p-value of the observation under the null hypothesis "(eps, delta)-DP". The
// audit's lower bound is the largest eps that this p-value rejects at level beta = 1 - confidence: with
// probability >= 1 - beta the training is not (eps', delta)-DP for any eps' <= the returned eps (DP is
// monotone in eps, so one rejection covers every smaller eps). The p-value is computed exactly — the
// binomial tail by the incomplete beta function (core/audit/binomial.h), the max term by the running sum
// of binomial probabilities (the recursion of their Appendix D) — and eps by bisection to 1e-9.
//
// The bound assumes only that the canaries' inclusions are independent fair coins drawn before training
// and that the guesses depend on the training output alone. It is loose for mechanisms far from
// randomised response (such as the Gaussian mechanism at delta > 0, as the paper discusses), by design
// rather than by error.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace asyncdp::audit {

// The p-value above: m >= 1 canaries, 0 <= v <= r <= m, eps >= 0, delta in [0, 1]. In [0, 1].
double OneRunPValue(int64_t canaries, int64_t guesses, int64_t correct, double epsilon, double delta);

// The largest eps (to 1e-9) whose p-value is below beta, beta in (0, 1); 0 when even eps = 0 is not
// rejected. The returned eps itself is rejected (its p-value is < beta).
double OneRunEpsilonLowerBound(int64_t canaries, int64_t guesses, int64_t correct, double delta, double beta);

struct OneRunAuditOptions {
  double delta = 1e-5;       // of the audited (eps, delta) claim, [0, 1)
  double confidence = 0.95;  // 1 - beta, (0, 1)
  int64_t k_plus = 0;        // guesses IN on the k_plus highest scores
  int64_t k_minus = 0;       // guesses OUT on the k_minus lowest scores; k_plus + k_minus in [1, m]

  // Throws InputError naming the field if a value is out of range (m is known only at the call).
  void Validate(int64_t canaries) const;
};

struct OneRunAuditResult {
  double epsilon = 0.0;  // the lower bound
  int64_t canaries = 0;  // m
  int64_t guesses = 0;   // r
  int64_t correct = 0;   // v
  int64_t k_plus = 0;
  int64_t k_minus = 0;
  double beta = 0.05;  // the level the bound was computed at (after any Bonferroni split)
};

// One audit with the guess counts fixed in advance. scores[i] is canary i's score (higher = looks IN;
// finite), included[i] its coin (nonzero = IN). Ties in score are broken by canary index (lower first
// among equals for IN), so the result is deterministic.
OneRunAuditResult OneRunAudit(std::span<const double> scores, std::span<const uint8_t> included,
                              const OneRunAuditOptions& options);

// The best of several (k_plus, k_minus) choices, each evaluated at beta / choices.size() (Bonferroni),
// so the returned bound keeps the stated confidence although the best choice was picked after seeing the
// scores. options.k_plus / k_minus are ignored.
struct GuessCounts {
  int64_t k_plus = 0;
  int64_t k_minus = 0;
};
OneRunAuditResult OneRunAuditBestOf(std::span<const double> scores, std::span<const uint8_t> included,
                                    std::span<const GuessCounts> choices, const OneRunAuditOptions& options);
// Every choice checked against m canaries (ConfigError "audit.guesses" naming the bound), as both best-of
// estimators do before guessing.
void ValidateGuessChoices(std::span<const GuessCounts> choices, const OneRunAuditOptions& options,
                          int64_t canaries);

// The pieces every one-run estimator shares (this one and core/audit/fdp_one_run.h):
// the scores and coins checked (same length, non-empty, finite scores; InputError otherwise),
void CheckCanaryScores(std::span<const double> scores, std::span<const uint8_t> included);
// the canaries ranked by decreasing score, ties by increasing index (deterministic guesses),
std::vector<int64_t> RankCanariesByScore(std::span<const double> scores);
// and the correct guesses among IN on the first k_plus of `order` and OUT on its last k_minus.
int64_t CountCorrectGuesses(std::span<const int64_t> order, std::span<const uint8_t> included, int64_t k_plus,
                            int64_t k_minus);

// Which of m canaries a run includes: independent fair coins from the stream
// {seed, client, 0, kAuditCanaries} (core/random.h), so the audit and the training agree on them.
std::vector<uint8_t> DrawCanaryInclusion(uint64_t seed, uint32_t client, int64_t canaries);

}  // namespace asyncdp::audit
