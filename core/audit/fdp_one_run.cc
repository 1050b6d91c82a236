#include "core/audit/fdp_one_run.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/audit/gaussian_dp.h"
#include "core/audit/largest_rejected.h"
#include "core/audit/normal.h"
#include "core/check.h"
#include "core/error.h"

namespace asyncdp::audit {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

double GdpFbarInverse(double mu, double y) {
  ASYNCDP_CHECK(mu >= 0.0);
  if (y <= 0.0) return 0.0;
  if (y > 1.0) return kInf;
  if (y == 1.0) return 1.0;
  // fbar(x) = 1 - Phi(Phi^{-1}(1 - x) - mu) = Phi(Phi^{-1}(x) + mu), so fbar^{-1}(y) = Phi(Phi^{-1}(y) - mu).
  return NormalCdf(NormalQuantile(y) - mu);
}

double ApproximateDpFbarInverse(double epsilon, double delta, double y) {
  ASYNCDP_CHECK(epsilon >= 0.0 && delta >= 0.0 && delta < 1.0);
  if (y > 1.0) return kInf;
  // fbar = min(1, delta + e^eps x, 1 - e^-eps (1 - delta - x)) is a minimum of increasing functions, so its
  // inverse is the maximum of theirs.
  const double x = std::max((y - delta) * std::exp(-epsilon), 1.0 - delta - std::exp(epsilon) * (1.0 - y));
  return std::clamp(x, 0.0, 1.0);
}

double FdpLeastMass(const TradeoffInverse& fbar_inverse, int64_t canaries, int64_t guesses, int64_t correct,
                    double tau, double stop_above) {
  ASYNCDP_CHECK(canaries >= 1 && guesses >= 1 && guesses <= canaries && correct >= 0 && correct <= guesses);
  ASYNCDP_CHECK(tau >= 0.0 && tau <= 1.0);
  const auto m = static_cast<double>(canaries);
  const auto k = static_cast<double>(guesses);
  // a = sum_{j >= i} j p_j / m and c = sum_{j >= i} (k - j) p_j / m over the levels placed so far; the
  // total mass is (a + c) m / k. Level `correct` holds tau.
  double a = static_cast<double>(correct) * tau / m;
  double c = (k - static_cast<double>(correct)) * tau / m;
  const double stop = stop_above * k / m;
  for (int64_t i = correct - 1; i >= 0; --i) {
    // (C_{i+1}): a_{i+1} <= fbar(c_i), c_i = c + (k - i) p_i / m; the least p_i >= 0 that meets it.
    const double need = fbar_inverse(a);
    // No mass at level i leaves a unchanged, so every lower level is met as well: done.
    if (!(need > c)) break;
    if (!std::isfinite(need)) return kInf;
    a += static_cast<double>(i) / (k - static_cast<double>(i)) * (need - c);
    c = need;
    if (a + c > stop) break;
  }
  return (a + c) * m / k;
}

double FdpTailBound(const TradeoffInverse& fbar_inverse, int64_t canaries, int64_t guesses, int64_t correct) {
  auto feasible = [&](double tau) {
    return FdpLeastMass(fbar_inverse, canaries, guesses, correct, tau) <= 1.0;
  };
  if (feasible(1.0)) return 1.0;
  constexpr double kFloor = 1e-300;
  if (!feasible(kFloor)) return 0.0;
  // The least mass grows with tau (docs/theory.md), so bisect on ln tau.
  double lo = std::log(kFloor);
  double hi = 0.0;
  while (hi - lo > 1e-9) {
    const double mid = 0.5 * (lo + hi);
    if (feasible(std::exp(mid))) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return std::exp(lo);
}

double FdpGdpMuLowerBound(int64_t canaries, int64_t guesses, int64_t correct, double beta) {
  ASYNCDP_CHECK(beta > 0.0 && beta < 1.0);
  // A larger mu gives a larger fbar, a smaller inverse and less mass: rejection is monotone in mu.
  return LargestRejected([&](double mu) {
    return FdpLeastMass([mu](double y) { return GdpFbarInverse(mu, y); }, canaries, guesses, correct, beta) >
           1.0;
  });
}

double FdpApproximateDpEpsilonLowerBound(int64_t canaries, int64_t guesses, int64_t correct, double delta,
                                         double beta) {
  ASYNCDP_CHECK(beta > 0.0 && beta < 1.0 && delta >= 0.0 && delta < 1.0);
  return LargestRejected([&](double eps) {
    return FdpLeastMass([eps, delta](double y) { return ApproximateDpFbarInverse(eps, delta, y); }, canaries,
                        guesses, correct, beta) > 1.0;
  });
}

FdpOneRunResult FdpOneRunAuditBestOf(std::span<const double> scores, std::span<const uint8_t> included,
                                     std::span<const GuessCounts> choices,
                                     const OneRunAuditOptions& options) {
  CheckCanaryScores(scores, included);
  const auto m = static_cast<int64_t>(scores.size());
  ValidateGuessChoices(choices, options, m);
  const auto order = RankCanariesByScore(scores);
  FdpOneRunResult result;
  result.canaries = m;
  result.beta = (1.0 - options.confidence) / static_cast<double>(choices.size());
  bool first = true;
  for (const GuessCounts& c : choices) {
    FdpEstimate e;
    e.k_plus = c.k_plus;
    e.k_minus = c.k_minus;
    e.guesses = c.k_plus + c.k_minus;
    e.correct = CountCorrectGuesses(order, included, c.k_plus, c.k_minus);
    FdpEstimate gaussian = e;
    gaussian.value = FdpGdpMuLowerBound(m, e.guesses, e.correct, result.beta);
    gaussian.epsilon = options.delta > 0.0 ? GdpEpsilon(gaussian.value, options.delta) : kInf;
    if (gaussian.value == 0.0) gaussian.epsilon = 0.0;
    FdpEstimate approximate = e;
    approximate.value =
        FdpApproximateDpEpsilonLowerBound(m, e.guesses, e.correct, options.delta, result.beta);
    approximate.epsilon = approximate.value;
    if (first || gaussian.value > result.gaussian.value) result.gaussian = gaussian;
    if (first || approximate.value > result.approximate.value) result.approximate = approximate;
    first = false;
  }
  return result;
}

}  // namespace asyncdp::audit
