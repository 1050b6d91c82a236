// The whole privacy curve of a composed mechanism, not one point of it (docs/theory.md, "Privacy curves"):
// ε(δ) on a list of δ, δ(ε) on a list of ε (the privacy profile), and a trade-off curve β(α), the smallest
// type-II error any test of "the record is in" can have at type-I error α (f-DP, Dong, Roth & Su 2022).
// Audits and plots compare with β(α); ε(δ) and δ(ε) are the accountant's own Epsilon and Delta.
#pragma once

#include <span>
#include <vector>

#include "core/accounting/accountant.h"

namespace asyncdp::accounting {

struct CurvePoint {
  double x = 0.0;
  double y = 0.0;
};

struct PrivacyCurve {
  std::vector<CurvePoint> epsilon_of_delta;  // (δ, ε(δ)); ε(δ) = +inf where no ε reaches δ
  std::vector<CurvePoint> delta_of_epsilon;  // (ε, δ(ε)), δ clamped to [0, 1]
  // (α, β(α)): a lower bound on the trade-off function, from the profile at `profile_points` values of ε
  // (TradeoffFromProfile). With an upper-bound accountant it is a guarantee: no test does better.
  std::vector<CurvePoint> tradeoff;
  int profile_points = 0;
};

// The grids used when a caller gives none: δ = 10^-1 … 10^-10; ε from 0 to ε(10^-10) in 21 steps; α = 0,
// 10^-6 … 10^-3 and 0.01 … 1.
std::vector<double> DefaultCurveDeltas();
std::vector<double> DefaultTradeoffAlphas();

// The curves of `composed` (an accountant that has its rounds). Empty `epsilons`: 21 points from 0 to
// ε(min δ). The trade-off uses the profile at `profile_points` evenly spaced ε in [0, ε(10^-12)] plus those
// of δ(ε). `profile_points` (>= 2) trades the trade-off's tightness for time with an accountant whose
// delta(eps) is costly (random allocation: ~4-20 ms each); fewer points still give a lower bound, only a
// looser one.
inline constexpr int kTradeoffProfilePoints = 400;
PrivacyCurve CurveOf(const Accountant& composed, std::span<const double> deltas,
                     std::span<const double> epsilons, std::span<const double> alphas,
                     int profile_points = kTradeoffProfilePoints);

// β(α) ≥ max over the profile's points (ε, δ(ε)) of max(0, 1 − δ − e^ε α, e^{−ε} (1 − δ − α)): every
// (ε, δ)-DP statement (both neighbour orders) bounds every test's errors so (Kairouz, Oh & Viswanath 2015; Dong,
// Roth & Su 2022, §2: f-DP and (ε, δ)-DP), and the maximum over a subset of ε is still a bound.
std::vector<CurvePoint> TradeoffFromProfile(std::span<const CurvePoint> profile, std::span<const double> alphas);

}  // namespace asyncdp::accounting
