#include "core/audit/one_run.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "core/audit/binomial.h"
#include "core/audit/largest_rejected.h"
#include "core/check.h"
#include "core/error.h"
#include "core/random.h"

namespace asyncdp::audit {
namespace {

// The largest max_{i=1..v} P[v - i <= Bin(r, q) < v] / i. Walks k = v-1, v-2, ..., 0 accumulating
// P[Bin = k]; the probabilities follow the ratio P[k-1] / P[k] = k (1 - q) / ((r - k + 1) q). Terms
// below 1e-300 are skipped in log space until the walk reaches representable ones (they could not
// change the maximum), then the walk continues in linear space.
double MaxAveragedLowerMass(int64_t r, double q, int64_t v) {
  if (v <= 0) return 0.0;
  const double log_odds = std::log1p(-q) - std::log(q);  // ln((1 - q) / q)
  int64_t k = v - 1;
  double log_pmf = std::log(BinomialPmf(r, q, k));
  if (!std::isfinite(log_pmf)) {
    // BinomialPmf underflowed: recompute its log directly.
    const double rr = static_cast<double>(r);
    const double kk = static_cast<double>(k);
    log_pmf = std::lgamma(rr + 1) - std::lgamma(kk + 1) - std::lgamma(rr - kk + 1) + kk * std::log(q) +
              (rr - kk) * std::log1p(-q);
  }
  constexpr double kLogTiny = -690.0;  // e^-690 ~ 1e-300
  double sum = 0.0;
  double best = 0.0;
  int64_t i = 1;  // k = v - i
  while (log_pmf < kLogTiny && k > 0) {
    log_pmf += std::log(static_cast<double>(k) / static_cast<double>(r - k + 1)) + log_odds;
    --k;
    ++i;
  }
  double pmf = log_pmf < kLogTiny ? 0.0 : std::exp(log_pmf);
  const double odds = std::exp(log_odds);
  for (; k >= 0; --k, ++i) {
    sum += pmf;
    best = std::max(best, sum / static_cast<double>(i));
    if (k > 0) pmf *= static_cast<double>(k) / static_cast<double>(r - k + 1) * odds;
  }
  return best;
}

OneRunAuditResult AuditRanked(std::span<const int64_t> order, std::span<const uint8_t> included,
                              int64_t k_plus, int64_t k_minus, double delta, double beta) {
  const auto m = static_cast<int64_t>(order.size());
  OneRunAuditResult result;
  result.canaries = m;
  result.k_plus = k_plus;
  result.k_minus = k_minus;
  result.guesses = k_plus + k_minus;
  result.beta = beta;
  result.correct = CountCorrectGuesses(order, included, k_plus, k_minus);
  result.epsilon = OneRunEpsilonLowerBound(m, result.guesses, result.correct, delta, beta);
  return result;
}

}  // namespace

void CheckCanaryScores(std::span<const double> scores, std::span<const uint8_t> included) {
  if (scores.size() != included.size()) {
    throw InputError("audit", "one-run audit: " + std::to_string(scores.size()) + " scores but " +
                                  std::to_string(included.size()) + " inclusion coins");
  }
  if (scores.empty()) throw InputError("audit", "one-run audit: no canaries");
  for (size_t i = 0; i < scores.size(); ++i) {
    if (!std::isfinite(scores[i])) {
      throw InputError("audit", "one-run audit: canary " + std::to_string(i) + " has a non-finite score");
    }
  }
}

std::vector<int64_t> RankCanariesByScore(std::span<const double> scores) {
  std::vector<int64_t> order(scores.size());
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return scores[a] > scores[b]; });
  return order;
}

int64_t CountCorrectGuesses(std::span<const int64_t> order, std::span<const uint8_t> included, int64_t k_plus,
                            int64_t k_minus) {
  const auto m = static_cast<int64_t>(order.size());
  ASYNCDP_CHECK(k_plus >= 0 && k_minus >= 0 && k_plus + k_minus <= m && included.size() == order.size());
  int64_t correct = 0;
  for (int64_t j = 0; j < k_plus; ++j) correct += included[order[j]] != 0;
  for (int64_t j = m - k_minus; j < m; ++j) correct += included[order[j]] == 0;
  return correct;
}

double OneRunPValue(int64_t canaries, int64_t guesses, int64_t correct, double epsilon, double delta) {
  ASYNCDP_CHECK(canaries >= 1 && correct >= 0 && correct <= guesses && guesses <= canaries);
  ASYNCDP_CHECK(epsilon >= 0.0 && std::isfinite(epsilon) && delta >= 0.0 && delta <= 1.0);
  // q = e^eps / (1 + e^eps): the accuracy of eps-DP randomised response on one canary.
  const double q = 1.0 / (1.0 + std::exp(-epsilon));
  double p = BinomialTailAtLeast(guesses, q, correct);
  if (delta > 0.0) {
    p += 2.0 * static_cast<double>(canaries) * delta * MaxAveragedLowerMass(guesses, q, correct);
  }
  return std::min(p, 1.0);
}

double OneRunEpsilonLowerBound(int64_t canaries, int64_t guesses, int64_t correct, double delta,
                               double beta) {
  ASYNCDP_CHECK(beta > 0.0 && beta < 1.0);
  return LargestRejected(
      [&](double eps) { return OneRunPValue(canaries, guesses, correct, eps, delta) < beta; });
}

void ValidateGuessChoices(std::span<const GuessCounts> choices, const OneRunAuditOptions& options,
                          int64_t canaries) {
  if (choices.empty()) throw ConfigError("audit.guesses", "no (k_plus, k_minus) choice given");
  for (const GuessCounts& c : choices) {
    OneRunAuditOptions each = options;
    each.k_plus = c.k_plus;
    each.k_minus = c.k_minus;
    each.Validate(canaries);
  }
}

void OneRunAuditOptions::Validate(int64_t canaries) const {
  if (!(delta >= 0.0 && delta < 1.0)) throw ConfigError("audit.delta", "must be in [0, 1)");
  if (!(confidence > 0.0 && confidence < 1.0)) throw ConfigError("audit.confidence", "must be in (0, 1)");
  if (k_plus < 0 || k_minus < 0 || k_plus + k_minus < 1 || k_plus + k_minus > canaries) {
    throw ConfigError("audit.guesses", "k_plus + k_minus must be in [1, " + std::to_string(canaries) +
                                           "] (the number of canaries), each >= 0");
  }
}

OneRunAuditResult OneRunAudit(std::span<const double> scores, std::span<const uint8_t> included,
                              const OneRunAuditOptions& options) {
  CheckCanaryScores(scores, included);
  options.Validate(static_cast<int64_t>(scores.size()));
  const auto order = RankCanariesByScore(scores);
  return AuditRanked(order, included, options.k_plus, options.k_minus, options.delta,
                     1.0 - options.confidence);
}

OneRunAuditResult OneRunAuditBestOf(std::span<const double> scores, std::span<const uint8_t> included,
                                    std::span<const GuessCounts> choices, const OneRunAuditOptions& options) {
  CheckCanaryScores(scores, included);
  ValidateGuessChoices(choices, options, static_cast<int64_t>(scores.size()));
  const auto order = RankCanariesByScore(scores);
  const double beta = (1.0 - options.confidence) / static_cast<double>(choices.size());
  OneRunAuditResult best;
  bool first = true;
  for (const GuessCounts& c : choices) {
    const OneRunAuditResult r = AuditRanked(order, included, c.k_plus, c.k_minus, options.delta, beta);
    if (first || r.epsilon > best.epsilon) best = r;
    first = false;
  }
  return best;
}

std::vector<uint8_t> DrawCanaryInclusion(uint64_t seed, uint32_t client, int64_t canaries) {
  ASYNCDP_CHECK(canaries >= 0);
  RandomStream stream(StreamKey{seed, client, 0, StreamPurpose::kAuditCanaries});
  std::vector<uint8_t> included(canaries);
  for (auto& coin : included) coin = static_cast<uint8_t>(stream.NextU32() & 1u);
  return included;
}

}  // namespace asyncdp::audit
