// The f-DP one-run audit of Mahloujifar, Melis & Chaudhuri 2024, "Auditing f-differential privacy in one
// run" (arXiv:2410.22235), beside Steinke et al.'s (core/audit/one_run.h), on the same experiment: m
// canaries with independent fair inclusion coins, k guesses on the extremes of the scores, W of them
// correct. docs/theory.md ("The f-DP one-run audit") derives what is computed here; in short:
//
// If the training is f-DP with respect to each canary (f a symmetric trade-off function, fbar = 1 - f,
// concave and increasing), then for every v >= 1 (the per-canary hypothesis test, averaged over the
// 2m (canary, guess sign) pairs by Jensen's inequality on fbar)
//
//   E[W 1{W >= v}] / m  <=  fbar( E[(k - W) 1{W >= v - 1}] / m ).                              (C_v)
//
// P[W >= v] >= tau is then possible only if some distribution of W meets every (C_v) with total mass
// <= 1. The least mass that does is found greedily from the top (their Algorithm for the bound on
// correct guesses): tau at level v, then at each level i = v-1, ..., 0 the least mass that makes
// (C_{i+1}) hold. An exchange argument (docs/theory.md) shows no distribution needs less, so
// "least mass > 1" proves P[W >= v] < tau for EVERY f-DP mechanism and guesser: f is rejected at level
// tau. The audit reports the strongest member of a family that its observation rejects:
//   - Gaussian: mu-GDP, f(a) = Phi(Phi^{-1}(1 - a) - mu) (Dong, Roth & Su 2022, Def. 2.6), reported as mu
//     and as the eps of mu-GDP at delta. A lower bound on eps only if the training's trade-off is
//     Gaussian (full-batch Gaussian mechanism); labelled so;
//   - approximate DP: f_{eps,delta}(a) = max(0, 1 - delta - e^eps a, e^-eps (1 - delta - a)) (Dong et al.
//     Def. 2.3 / Kairouz et al. 2015), which (eps, delta)-DP is exactly: an assumption-free lower bound.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "core/audit/one_run.h"

namespace asyncdp::audit {

// y -> the least x in [0, 1] with fbar(x) >= y, for y >= 0 (+inf when no x reaches y, i.e. y > 1).
using TradeoffInverse = std::function<double(double)>;

// fbar^{-1} of mu-GDP: Phi(Phi^{-1}(y) - mu), mu >= 0.
double GdpFbarInverse(double mu, double y);

// fbar^{-1} of (eps, delta)-DP: max(0, (y - delta) e^-eps, 1 - delta - e^eps (1 - y)).
double ApproximateDpFbarInverse(double epsilon, double delta, double y);

// The least total probability a distribution of W (k guesses among m canaries, 0 <= v <= k <= m)
// needs to meet every (C_i) with P[W >= v] = tau, tau in [0, 1]. Stops early (returning a value > 1)
// once the mass passes `stop_above`.
double FdpLeastMass(const TradeoffInverse& fbar_inverse, int64_t canaries, int64_t guesses, int64_t correct,
                    double tau, double stop_above = 1.0);

// The largest tau (to relative 1e-9, or 0 below 1e-300) with least mass <= 1: an upper bound on
// P[W >= v] over every f-DP mechanism and guesser, the f-DP analogue of Steinke et al.'s p-value.
double FdpTailBound(const TradeoffInverse& fbar_inverse, int64_t canaries, int64_t guesses, int64_t correct);

// The largest mu (to 1e-9) such that observing `correct` of `guesses` rejects mu-GDP at level beta
// (least mass > 1 at tau = beta); 0 when mu = 0 is not rejected. The returned mu itself is rejected.
double FdpGdpMuLowerBound(int64_t canaries, int64_t guesses, int64_t correct, double beta);

// The largest eps (to 1e-9) whose f_{eps,delta} the observation rejects at level beta; 0 if none.
double FdpApproximateDpEpsilonLowerBound(int64_t canaries, int64_t guesses, int64_t correct, double delta,
                                         double beta);

struct FdpEstimate {
  double value = 0.0;    // mu (Gaussian) or eps (approximate DP): the rejected parameter
  double epsilon = 0.0;  // as eps at the audit's delta (Gaussian: of mu-GDP; approximate DP: = value)
  int64_t guesses = 0;   // k of the winning choice
  int64_t correct = 0;   // W
  int64_t k_plus = 0;
  int64_t k_minus = 0;
};

struct FdpOneRunResult {
  FdpEstimate gaussian;     // assumes a Gaussian trade-off
  FdpEstimate approximate;  // assumption-free
  int64_t canaries = 0;
  double beta = 0.05;  // each choice's level (after the Bonferroni split over choices)
};

// Both estimates, each the best over the guess-count choices at beta / choices.size() (Bonferroni, as
// OneRunAuditBestOf), with options.delta and options.confidence; options.k_plus / k_minus are ignored.
FdpOneRunResult FdpOneRunAuditBestOf(std::span<const double> scores, std::span<const uint8_t> included,
                                     std::span<const GuessCounts> choices, const OneRunAuditOptions& options);

}  // namespace asyncdp::audit
