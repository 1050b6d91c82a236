// Privacy amplification by shuffling: Feldman, McMillan, Talwar, "Hiding among the clones: a simple and
// nearly optimal analysis of privacy amplification by shuffling", FOCS 2021 (arXiv 2012.12803) — [FMT21].
//
// Setting: n records are put in a uniformly random order and the i-th record is processed by the i-th of a
// sequence of (adaptively chosen) local randomizers, each eps0-DP for EVERY pair of inputs and every value
// of its auxiliary input (the previous outputs). Neighbours: replace-one (n is fixed). For DP-SGD with one
// record per step (clip to C, add N(0, sigma^2 C^2 I)) two inputs differ by up to 2C, so the local randomizer
// is a Gaussian mechanism with sensitivity 2C (noise multiplier sigma / 2 relative to it).
//
// [FMT21] Thm. 3.2 reduces the shuffled output on neighbouring data sets to a post-processing of a pair of
// distributions on counts: with C ~ Binomial(n - 1, e^-eps0) "clones" of the differing record, each a
// clone of its first or second value with probability 1/2 (A ~ Binomial(C, 1/2)), and the record itself
// contributing to the first count with probability a = e^eps0 / (e^eps0 + 1),
//   P = (A + Bern(a),     C - A + 1 - Bern(a)),    Q = (A + Bern(1 - a), C - A + 1 - Bern(1 - a)).
// The pair reveals C, so H_{e^eps}(P || Q) = E_C[ H_{e^eps}(P_C || Q_C) ]; the pair is symmetric
// (a -> C + 1 - a maps one onto the other), so one direction suffices. ShuffleNumericalDelta evaluates this
// exactly (per C, a closed-form threshold on A), charging the Binomial mass it does not visit to delta.
// [FMT21] Thm. 3.1 gives the closed form (valid for eps0 <= ln(n / (16 ln(2/delta)))); we use the form of
// the authors' published implementation, eps = ln(1 + (1 - e^-eps0) / (1 + e^{-eps0 - e1}) (a + c)) with
// a = 8 sqrt(e^eps0 ln(4/delta) / n), c = 8 e^eps0 / n, e1 = ln(1 + a + c), which is never smaller than
// the form ln(1 + (e^eps0 - 1)/(e^eps0 + 1) (a + c)) also in circulation.
// (eps0, delta0)-DP randomizers ([FMT21] Thm. 3.8): the shuffled output is (eps, delta + (e^eps + 1)
// (1 + e^eps0 / 2) n delta0)-DP; we use the factor (1 + e^eps0 / 2), the larger of the two versions in
// circulation ((1 + e^-eps0 / 2) is the other).
#pragma once

#include <cstdint>

namespace asyncdp::accounting {

// delta(eps) of the [FMT21] Thm. 3.2 pair for n records and eps0-DP local randomizers (eps >= 0).
double ShuffleNumericalDelta(int64_t n, double local_epsilon, double epsilon);
// Smallest eps (bisection to 1e-6 relative, safe side) with ShuffleNumericalDelta <= delta; never above
// local_epsilon.
double ShuffleNumericalEpsilon(int64_t n, double local_epsilon, double delta);

// [FMT21] Thm. 3.1 closed form; +inf when eps0 > ln(n / (16 ln(2/delta))) (outside the theorem).
double ShuffleClosedFormEpsilon(int64_t n, double local_epsilon, double delta);

struct ShuffleGaussianEpsilon {
  double numerical = 0.0;    // Thm. 3.2 + Thm. 3.8, best delta split; never above `no_amplification`
  double closed_form = 0.0;  // Thm. 3.1 + Thm. 3.8; +inf outside its range
  double no_amplification = 0.0;  // each record is used in exactly one step: the Gaussian mechanism itself
  double local_epsilon = 0.0;     // eps0 used by the numerical bound
  double local_delta = 0.0;       // its delta0
};

// One shuffled pass of n steps of the Gaussian mechanism, noise multiplier sigma relative to the
// clipping norm C, local sensitivity `local_sensitivity` in units of C (2 for arbitrary clipped inputs;
// 1 only if all inputs lie within C of each other), total delta in (0, 1).
ShuffleGaussianEpsilon ShuffledGaussianEpsilon(int64_t n, double sigma, double local_sensitivity, double delta);

}  // namespace asyncdp::accounting
