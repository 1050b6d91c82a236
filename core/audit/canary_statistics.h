// Test statistics for a white-box audit with a gradient ("Dirac") canary, whose clipped gradient is C e
// for a unit direction e that no other record's gradient touches (models/canary.h). The auditor sees each
// step's released noisy clipped sum and projects it on e, in units of C:
//
//   x_t = <noisy clipped sum of step t, e> / C  ~  N(b_t, sigma_t^2),  b_t = 1 if the canary was in the
//                                                                      step's batch, else 0.
//
// (A released update U_t = -eta_t * (noisy sum) / s_t is converted back by the caller: divide the
// projection by -eta_t C / s_t.) Without the canary b_t = 0 always; with it, b_t ~ Bernoulli(q_t)
// independently per step under Poisson sampling and under fixed-size sampling without replacement alike.
// Both statistics are "higher = canary present".
#pragma once

#include <span>

namespace asyncdp::audit {

// sum_t x_t: the statistic of Nasr et al. 2023 for the white-box Dirac canary. For full-batch training
// (q_t = 1) it is the likelihood-ratio statistic, and then the in/out scores are N(T, T sigma^2) and
// N(0, T sigma^2) exactly (a Gaussian trade-off with mu = sqrt(T) / sigma). It is also what the final
// model alone reveals: e is a coordinate the loss never reads, so w_T - w_0 along e is the sum of the
// updates along e.
double CanarySumStatistic(std::span<const double> projections);

// ln of the likelihood ratio of one step, ln((1 - q) + q exp((2x - 1) / (2 sigma^2))): the density of
// x under "in" ((1 - q) N(0, sigma^2) + q N(1, sigma^2)) over that under "out" (N(0, sigma^2)).
// q in [0, 1], sigma > 0. Stable for large |x| (no overflow, no log of 0).
double CanaryStepLogLikelihoodRatio(double projection, double sampling_rate, double noise_multiplier);

// sum_t of the above with one q and sigma for every step: the Neyman–Pearson-optimal statistic for
// subsampled training (the steps are independent given the canary's presence).
double CanaryLogLikelihoodRatio(std::span<const double> projections, double sampling_rate,
                                double noise_multiplier);

}  // namespace asyncdp::audit
