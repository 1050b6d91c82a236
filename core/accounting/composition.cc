#include "core/accounting/composition.h"

#include <cmath>
#include <limits>
#include <string>

#include "core/accounting/log_math.h"
#include "core/check.h"
#include "core/error.h"

namespace asyncdp::accounting {
namespace {

void RequireNonNegative(double value, const char* key) {
  if (!(value >= 0.0) || !std::isfinite(value)) throw ConfigError(key, "must be finite and >= 0");
}

}  // namespace

EpsDelta BasicComposition(std::span<const EpsDelta> mechanisms) {
  EpsDelta total;
  for (const EpsDelta& m : mechanisms) {
    total.epsilon += m.epsilon;
    total.delta += m.delta;
  }
  return total;
}

EpsDelta BasicComposition(double eps0, double delta0, int64_t k) {
  return {static_cast<double>(k) * eps0, static_cast<double>(k) * delta0};
}

double KlBound(double epsilon) { return epsilon <= std::log(2.0) ? epsilon * std::expm1(epsilon) : epsilon; }

EpsDelta AdvancedComposition(double eps0, double delta0, int64_t k, double delta_slack,
                             AdvancedVariant variant) {
  RequireNonNegative(eps0, "composition.epsilon");
  RequireNonNegative(delta0, "composition.delta");
  if (!(delta_slack > 0.0 && delta_slack < 1.0))
    throw ConfigError("composition.delta_slack", "must be in (0, 1)");
  const double kd = static_cast<double>(k);
  const double root = std::sqrt(2.0 * kd * std::log(1.0 / delta_slack));
  double eps = 0.0;
  switch (variant) {
    case AdvancedVariant::kDworkRothblumVadhan:
      eps = root * eps0 + kd * eps0 * std::expm1(eps0);
      break;
    case AdvancedVariant::kIndependent:
      eps = kd * KlBound(eps0) + root * eps0;
      break;
    case AdvancedVariant::kAdaptive:
      eps = kd * KlBound(eps0) + root * (eps0 + KlBound(eps0));
      break;
    case AdvancedVariant::kLectureNotes:
      eps = kd * eps0 * eps0 / 2.0 + eps0 * root;
      break;
  }
  return {eps, kd * delta0 + delta_slack};
}

double OptimalCompositionDelta(double eps0, double delta0, int64_t k, double epsilon) {
  RequireNonNegative(eps0, "composition.epsilon");
  if (!(delta0 >= 0.0 && delta0 < 1.0)) throw ConfigError("composition.delta", "must be in [0, 1)");
  if (k <= 0) return 0.0;
  const double kd = static_cast<double>(k);
  // Privacy loss of the canonical randomised response pair: (k - 2l) eps0 with P-probability
  // C(k,l) e^{(k-l) eps0} / (1 + e^eps0)^k; delta_pure(eps) = E[(1 - e^{eps - loss})_+].
  const double log_norm = kd * LogAddExp(0.0, eps0);
  double log_pure = -kInf;
  for (int64_t l = 0; l <= k; ++l) {
    const double loss = (kd - 2.0 * static_cast<double>(l)) * eps0;
    if (loss <= epsilon) break;  // losses decrease with l
    const double term = LogBinomial(kd, static_cast<double>(l)) + (kd - static_cast<double>(l)) * eps0 -
                        log_norm + std::log(-std::expm1(epsilon - loss));
    log_pure = LogAddExp(log_pure, term);
  }
  const double survive = std::exp(kd * std::log1p(-delta0));  // (1 - delta0)^k
  return std::min(1.0, -std::expm1(kd * std::log1p(-delta0)) + survive * std::exp(log_pure));
}

double OptimalCompositionEpsilon(double eps0, double delta0, int64_t k, double delta) {
  if (!(delta > 0.0 && delta < 1.0)) throw ConfigError("delta", "must be in (0, 1)");
  if (OptimalCompositionDelta(eps0, delta0, k, 0.0) <= delta) return 0.0;
  double hi = static_cast<double>(k) * eps0;  // delta(k eps0) = 1 - (1 - delta0)^k
  if (OptimalCompositionDelta(eps0, delta0, k, hi) > delta) return kInf;
  double lo = 0.0;
  for (int i = 0; i < 200 && hi - lo > 1e-14 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (OptimalCompositionDelta(eps0, delta0, k, mid) > delta ? lo : hi) = mid;
  }
  return hi;
}

EpsDelta SubsampledEpsDelta(double epsilon, double delta, double rate) {
  if (!(rate > 0.0 && rate <= 1.0)) throw ConfigError("composition.rate", "must be in (0, 1]");
  return {std::log1p(rate * std::expm1(epsilon)), rate * delta};
}

EpsDelta AllocateUniformly(double eps_total, double delta_total, int64_t rounds, CompositionRule rule,
                           double delta_slack) {
  if (!(eps_total > 0.0) || !std::isfinite(eps_total))
    throw ConfigError("budget.epsilon", "must be positive and finite");
  if (!(delta_total > 0.0 && delta_total < 1.0)) throw ConfigError("budget.delta", "must be in (0, 1)");
  if (rounds <= 0) throw ConfigError("budget.rounds", "must be positive");
  const double kd = static_cast<double>(rounds);
  if (rule == CompositionRule::kBasic) return {eps_total / kd, delta_total / kd};
  if (!(delta_slack > 0.0 && delta_slack < delta_total)) {
    throw ConfigError("budget.delta_slack", "must be in (0, delta_total)");
  }
  const double delta_round = (delta_total - delta_slack) / kd;
  auto composed = [&](double eps_round) {
    return rule == CompositionRule::kAdvanced
               ? AdvancedComposition(eps_round, delta_round, rounds, delta_slack).epsilon
               : OptimalCompositionEpsilon(eps_round, delta_round, rounds, delta_total);
  };
  // Composed eps increases with eps_round; basic composition's eps_total / k always fits the optimal
  // rule, so the answer lies in [0, eps_total] (advanced) and [eps_total / k, eps_total] (optimal).
  double lo = 0.0;
  double hi = eps_total;
  for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (composed(mid) <= eps_total ? lo : hi) = mid;
  }
  return {lo, delta_round};
}

}  // namespace asyncdp::accounting
