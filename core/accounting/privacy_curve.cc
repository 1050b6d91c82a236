#include "core/accounting/privacy_curve.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace asyncdp::accounting {
namespace {

constexpr int kDefaultEpsilonPoints = 21;

double EpsilonOrInfinity(const Accountant& composed, double delta) {
  const double eps = composed.Epsilon(delta).epsilon;
  return std::isnan(eps) ? std::numeric_limits<double>::infinity() : eps;
}

}  // namespace

std::vector<double> DefaultCurveDeltas() {
  std::vector<double> deltas;
  for (int e = 1; e <= 10; ++e) deltas.push_back(std::pow(10.0, -e));
  return deltas;
}

std::vector<double> DefaultTradeoffAlphas() {
  std::vector<double> alphas = {0.0, 1e-6, 1e-5, 1e-4, 1e-3};
  for (int j = 1; j <= 100; ++j) alphas.push_back(j / 100.0);
  return alphas;
}

std::vector<CurvePoint> TradeoffFromProfile(std::span<const CurvePoint> profile, std::span<const double> alphas) {
  std::vector<CurvePoint> curve;
  curve.reserve(alphas.size());
  for (const double alpha : alphas) {
    if (!(alpha >= 0.0 && alpha <= 1.0)) throw ConfigError("alpha", "a type-I error must be in [0, 1]");
    // Each term is at most 1 − α (ε ≥ 0, δ ≥ 0), the trivial test's β, so the maximum needs no cap.
    double best = 0.0;
    for (const CurvePoint& p : profile) {
      const double eps = p.x, delta = std::clamp(p.y, 0.0, 1.0);
      const double a = 1.0 - delta - std::exp(eps) * alpha;
      const double b = std::exp(-eps) * (1.0 - delta - alpha);
      best = std::max({best, a, b});
    }
    curve.push_back({alpha, best});
  }
  return curve;
}

PrivacyCurve CurveOf(const Accountant& composed, std::span<const double> deltas,
                     std::span<const double> epsilons, std::span<const double> alphas, int profile_points) {
  if (profile_points < 2) throw ConfigError("profile_points", "a trade-off profile needs at least 2 points");
  PrivacyCurve curve;
  CurvePoint smallest{1.0, 0.0};  // (min δ, ε(min δ)): the top of the default ε grid
  for (const double delta : deltas) {
    if (!(delta > 0.0 && delta < 1.0)) throw ConfigError("delta", "every delta of a curve must be in (0, 1)");
    curve.epsilon_of_delta.push_back({delta, EpsilonOrInfinity(composed, delta)});
    if (delta < smallest.x) smallest = curve.epsilon_of_delta.back();
  }
  std::vector<double> eps_grid(epsilons.begin(), epsilons.end());
  if (eps_grid.empty() && !curve.epsilon_of_delta.empty()) {
    const double top = smallest.y;
    if (std::isfinite(top)) {
      for (int j = 0; j < kDefaultEpsilonPoints; ++j) eps_grid.push_back(top * j / (kDefaultEpsilonPoints - 1));
    }
  }
  for (const double eps : eps_grid) {
    if (!(eps >= 0.0 && std::isfinite(eps))) throw ConfigError("epsilon", "every epsilon of a curve must be finite and >= 0");
    curve.delta_of_epsilon.push_back({eps, std::clamp(composed.Delta(eps), 0.0, 1.0)});
  }
  // The profile behind the trade-off curve: a fine grid up to where δ(ε) is negligible, plus the points above.
  std::vector<CurvePoint> profile = curve.delta_of_epsilon;
  // Up to ε(10^-12), or the smallest of 10^-10, 10^-8 the accountant gives a finite ε for (the PLD's upper
  // bound turns +inf where its FFT round-off would dominate, docs/theory.md §7).
  double top = std::numeric_limits<double>::infinity();
  for (const double delta : {1e-12, 1e-10, 1e-8}) {
    top = EpsilonOrInfinity(composed, delta);
    if (std::isfinite(top)) break;
  }
  if (std::isfinite(top)) {
    for (int j = 0; j < profile_points; ++j) {
      const double eps = top * j / (profile_points - 1);
      profile.push_back({eps, std::clamp(composed.Delta(eps), 0.0, 1.0)});
    }
  }
  curve.profile_points = static_cast<int>(profile.size());
  curve.tradeoff = TradeoffFromProfile(profile, alphas);
  return curve;
}

}  // namespace asyncdp::accounting
