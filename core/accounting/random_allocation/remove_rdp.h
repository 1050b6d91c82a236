// Exact Renyi divergence of the random-allocation window pair in the remove direction.
//
// One record is allocated to ONE uniformly random step of an m-step window; every step adds Gaussian noise
// N(0, sigma^2) to a clipped sum (units of the clipping norm). By Feldman & Shenfeld, "Privacy amplification
// by random allocation" (NeurIPS 2025; [FS]) Thm. 3.1 and Claim D.3 the whole window is dominated by the
// pair (docs/random_allocation.md §1)
//   A_m(*) = (1/m) sum_i N0^{x(i-1)} x N1 x N0^{x(m-i)},    A_m(⊥) = N0^{xm},    N0 = N(0, s^2), N1 = N(1, s^2).
// Its likelihood ratio under A_m(⊥) is the mean (1/m) sum_i L_i of m i.i.d. per-step ratios L_i, so for an
// integer order alpha (multinomial theorem, [FS] Lemma F.1 / Thm. 4.4 / Cor. 4.6)
//   E[(A_m(*)/A_m(⊥))^alpha] = m^-alpha * sum over (i_1..i_m) >= 0 with sum alpha of
//                              alpha! / prod_j i_j! * prod_j mu_{i_j},          mu_p = E_{R(⊥)}[L^p].
// [FS] group the index tuples by their integer partition (Thm. 4.4; AllocationRemoveRdpByPartitions
// below). The same sum is alpha! [x^alpha] f(x)^m for the exponential generating function
// f(x) = sum_p mu_p x^p / p!, which AllocationRemoveRdp evaluates for every order up to a maximum at once in
// O(max_order^2) (J.C.P. Miller's recurrence for powers of a power series; exponentiation by squaring
// when m < max_order). Both are exact for the pair: all terms are positive and summed in log space.
//
// The per-step randomizer enters only through ln mu_p. With abstention (a client checks in with
// probability p0, [spec R.4]) it is the p0-subsampled randomizer R_p0(*) = p0 N1 + (1 - p0) N0, R_p0(⊥) = N0,
// whose moments are mu_p(p0) = E[(1 - p0 + p0 L)^p] = sum_j C(p, j) (1-p0)^(p-j) p0^j e^{j(j-1)/(2 s^2)}.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace asyncdp::accounting {

// ln mu_p for p = 0..max_order of the p0-subsampled Gaussian randomizer (noise multiplier sigma > 0,
// participation p0 in (0, 1]); p0 = 1 gives ln mu_p = p (p - 1) / (2 sigma^2). ln mu_0 = ln mu_1 = 0.
std::vector<double> GaussianLogMoments(double sigma, double participation, int max_order);

// out[alpha] = R_alpha(A_m(*) || A_m(⊥)) for alpha = 2..max_order (out[0] = out[1] = 0), given
// log_moments[p] = ln mu_p for p = 0..max_order (log_moments[0] = log_moments[1] = 0). steps = m >= 1.
std::vector<double> AllocationRemoveRdp(int64_t steps, std::span<const double> log_moments);

// The same divergence at one order by [FS] Thm. 4.4's sum over the integer partitions of `order` with at
// most m parts; kept as the reference form (cost: the partition count p(order), e.g. p(40) = 37,338).
double AllocationRemoveRdpByPartitions(int64_t steps, int order, std::span<const double> log_moments);

}  // namespace asyncdp::accounting
