// Add-direction bound for random allocation with Gaussian noise ([FS] Thm. 4.5, Lemma F.3, Cor. 4.6),
// composed over J instances, and its single-window form under abstention.
//
// Add direction: the pair is (A_m(⊥), A_m(*)) — the neighbour WITHOUT the record against the one with it.
// By the AM-GM inequality the likelihood ratio A_m(*)/A_m(⊥) = (1/m) sum_i L_i is at least
// (prod_i L_i)^{1/m} = Z^m prod_i (P_{1/m}/Q)(y_i), where P_{1/m} = N(1/m, s^2) is the geometric mixture of
// N1 and N0 and Z = exp(-(1/m)(1 - 1/m)/(2 s^2)) its normaliser ([FS] Lemma F.3, Cor. 4.6 proof). Hence the
// add-direction privacy loss of one window is pointwise at most the loss of a Gaussian mechanism with
// shift 1/sqrt(m) (noise s) plus the constant (1 - 1/m)/(2 s^2). Over J independent instances (E windows
// times k allocations, each a 1-out-of-m' allocation, [FS] Lemma 3.2) the Gaussian parts compose into one
// Gaussian with noise s sqrt(m'/J) and the constants add:
//   delta_add(eps) <= GaussianDelta(eps - J (1 - 1/m') / (2 s^2),  s sqrt(m'/J)).
// The constant is multiplied by J (spec R.3.5; the authors' code adds it once, which is not a bound for
// J > 1). The bound is loose for many windows (its floor grows like J / (2 s^2)).
#pragma once

#include <cstdint>

namespace asyncdp::accounting {

// delta_add(eps) bound for J = `instances` composed 1-out-of-`steps` allocations, noise multiplier sigma.
// Any real epsilon (negative allowed: the AM-GM bound holds for every kappa = e^eps >= 0).
double AllocationAddDelta(int64_t steps, int64_t instances, double sigma, double epsilon);

// Smallest eps >= 0 with AllocationAddDelta(eps) <= delta:
//   eps_G(s sqrt(m'/J), delta) + J (1 - 1/m') / (2 s^2).
double AllocationAddEpsilon(int64_t steps, int64_t instances, double sigma, double delta);

// One window of a check-in with participation p0 (spec R.4(d), the advanced-joint-convexity identity of
// Balle, Barthe & Gaboardi 2018, Thm. 2, with weight p0): for the pair (p0 A(*) + (1 - p0) A(⊥), A(⊥)),
//   H_kappa(A(⊥) || p0 A(*) + (1-p0) A(⊥)) = beta H_{kappa p0 / beta}(A(⊥) || A(*)),  beta = 1 - kappa (1 - p0),
// and 0 when beta <= 0; the AM-GM bound above (J = 1) is then applied to the right-hand side.
double CheckInAddDelta(int64_t steps, double sigma, double participation, double epsilon);
double CheckInAddEpsilon(int64_t steps, double sigma, double participation, double delta);

}  // namespace asyncdp::accounting
