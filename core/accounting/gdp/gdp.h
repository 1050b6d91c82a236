// mu-Gaussian differential privacy by the central limit theorem (Dong, Roth, Su 2022; Bu, Dong, Long, Su
// 2020). An APPROXIMATION, never a guarantee: the CLT holds as T -> inf with q sqrt(T) fixed, and it can
// under-estimate epsilon for finite T. Every result from here is labelled BoundKind::kApproximation.
#pragma once

#include "core/accounting/schedule.h"
#include "core/privacy_assumptions.h"

namespace asyncdp::accounting {

// Poisson sampling (Bu et al. 2020, Theorem 5): mu = q * sqrt(T * (e^{1/sigma^2} - 1)).
double GdpMuPoisson(double q, double sigma, double steps);

// Uniform sampling without replacement (Dong et al. Corollary 5.4, = (65) with c = q sqrt(T)):
//   mu = sqrt(2) * q * sqrt(T) * sqrt(e^{1/sigma^2} Phi(1.5/sigma) + 3 Phi(-0.5/sigma) - 2).
// This is TensorFlow Privacy's compute_mu_uniform and reproduces the paper's eps_fDP column (Tables 9-11).
double GdpMuUniform(double q, double sigma, double steps);

// mu of a schedule: GDP composes as mu^2 = sum mu_i^2. kPoisson uses GdpMuPoisson with the given sigma;
// kFixedSizeWithoutReplacement uses GdpMuPoisson with sigma / 2: sampling without replacement under
// replace-one neighbours is dominated by the Poisson remove/add pairs of a Gaussian with sensitivity 2C
// (pld.h). GdpMuUniform (Dong et al.'s formula for the symmetric replace-one pair) is kept only to
// reproduce the paper's printed eps_fDP column; it is not a valid model of fixed-size batches.
double GdpMu(const Schedule& schedule, SamplingModel sampling);

// (64): delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), for mu > 0.
double GdpDelta(double mu, double epsilon);

// Smallest eps >= 0 with GdpDelta(mu, eps) <= delta, delta in (0, 1).
double GdpEpsilon(double mu, double delta);

}  // namespace asyncdp::accounting
