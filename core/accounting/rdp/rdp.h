// Renyi-DP accountant for subsampled Gaussian rounds.
//
// Poisson sampling, add/remove neighbours: the exact RDP of the sampled Gaussian mechanism of Mironov,
// Talwar and Zhang 2019 ("Renyi Differential Privacy of the Sampled Gaussian Mechanism", Sections 3.2-3.3),
// for integer orders (finite binomial sum) and fractional orders (a quadrature of the defining integral,
// rdp_integral.h; for order / sigma > 4096 the cumulant interpolated between integer orders, an upper
// bound), evaluated in log space so that no term overflows.
// Fixed-size sampling without replacement, replace-one neighbours: the upper bound of Wang, Balle and
// Kasiviswanathan 2019 (AISTATS, Theorem 9) for integer orders, with the base mechanism a Gaussian of
// sensitivity 2C (replacing one record moves the clipped sum by up to 2C); fractional orders interpolate
// the cumulant (alpha - 1) * eps(alpha) linearly between integers, which is an upper bound because the
// cumulant is convex in alpha.
// Conversion to (epsilon, delta): the improved bound of Canonne, Kamath, Steinke 2020 / Balle et al. 2020,
// minimised over the order set; the order that attains the minimum is reported.
#pragma once

#include <span>
#include <vector>

#include "core/accounting/schedule.h"
#include "core/privacy_assumptions.h"

namespace asyncdp::accounting {

// 1.01, 1.02, 1.05, 1.25, 1.75, 2.25, 2.75, 1.1..10.9 in steps of 0.1, 10.5..19.5 in steps of 1, every
// integer 11..64, then 72, 80, 96, 112, 128, 160, 192, 256, 320, 384, 512, 768, 1024 (202 orders): a
// superset of dp_accounting's DP-SGD order set, with extra orders near 1 for small epsilons.
std::vector<double> DefaultRdpOrders();

// Opacus' historical default order set, 1.1..10.9 step 0.1 then 12..63 (used for its pinned test value).
std::vector<double> OpacusRdpOrders();

// RDP eps(alpha) of ONE round of the Poisson-subsampled Gaussian mechanism (add/remove neighbours,
// sensitivity C, noise multiplier sigma, sampling rate q in (0, 1]); order > 1. MTZ19 Theorem 4 / (3.3).
double PoissonSubsampledGaussianRdp(double q, double sigma, double order);

// RDP upper bound of ONE round with a fixed-size batch drawn without replacement (rate q = s/N) under
// replace-one neighbours (WBK19 Theorem 9 with a sensitivity-2 Gaussian base mechanism); order > 1.
double FixedSizeSubsampledGaussianRdp(double q, double sigma, double order);

// RDP upper bound of ONE Poisson-subsampled round of the *discrete* Gaussian mechanism (secure noise,
// core/secure_noise.h) with effective noise multiplier sigma = noise / sensitivity, add/remove neighbours.
// For an integer shift the discrete Gaussian's Renyi divergence is at most the Gaussian's (Canonne, Kamath,
// Steinke 2020: the periodic Gaussian sum is largest at integer shifts), so the remove direction is bounded
// by MTZ19's binomial sum (every term a positive multiple of a Renyi moment); the add direction, which for
// the discrete Gaussian has no closed form, by a second-order Taylor bound valid for any base mechanism
// (rdp.cc, LogAddDirectionBound). Integer orders take the larger; fractional orders interpolate the
// cumulant (convex). Never below PoissonSubsampledGaussianRdp.
double DiscreteGaussianPoissonRdp(double q, double sigma, double order);

// Dispatch on the sampling model. kShuffle is not a per-round mechanism; see ReduceShuffledSchedule().
double SubsampledGaussianRdp(double q, double sigma, double order, SamplingModel sampling);

// out[k] = RDP of ONE (q, sigma) round at orders[k]; faster than calling the functions above per order
// (the quadrature table behind fractional orders is built once).
std::vector<double> SubsampledGaussianRdpCurve(double q, double sigma, std::span<const double> orders,
                                               SamplingModel sampling);

// The same curve for secure (discrete Gaussian) noise: DiscreteGaussianPoissonRdp for Poisson; for
// fixed-size sampling WBK19 holds for any base mechanism, so the Gaussian curve above.
std::vector<double> DiscreteGaussianRdpCurve(double q, double sigma, std::span<const double> orders,
                                             SamplingModel sampling);

// out[k] = RDP of the whole schedule at orders[k] (RDP composes additively). Throws ConfigError for an
// invalid schedule.
std::vector<double> ScheduleRdp(const Schedule& schedule, SamplingModel sampling,
                                std::span<const double> orders);

struct RdpConversion {
  double epsilon = 0.0;  // >= 0
  double order = 0.0;    // the order attaining the minimum
};

// Improved RDP -> (epsilon, delta) conversion (CKS20 Proposition 12 / Balle et al. 2020 Theorem 21):
//   eps = rdp(alpha) + ln((alpha - 1) / alpha) - (ln delta + ln alpha) / (alpha - 1),  minimised over alpha.
// All-zero RDP (no rounds) gives eps = 0.
RdpConversion RdpToEpsilon(std::span<const double> orders, std::span<const double> rdp, double delta);

// The per-order constants of that conversion, c(alpha) = ln((alpha - 1)/alpha) - (ln delta + ln alpha) /
// (alpha - 1), so that eps = max(0, min_k rdp[k] + c[k]); a ledger with a fixed delta precomputes them.
std::vector<double> RdpConversionOffsets(std::span<const double> orders, double delta);

// Mironov 2017 Proposition 3, eps = rdp(alpha) + ln(1/delta) / (alpha - 1) (Rényi DP, Mironov 2017; docs/theory.md §7), kept for
// comparison with the improved conversion above.
RdpConversion RdpToEpsilonClassic(std::span<const double> orders, std::span<const double> rdp, double delta);

// Smallest delta for a given epsilon from the same improved conversion, minimised over alpha:
//   delta = exp((alpha - 1) * (rdp - eps)) / alpha * (1 - 1/alpha)^(alpha - 1).
double RdpToDelta(std::span<const double> orders, std::span<const double> rdp, double epsilon);

struct RdpOptions {
  std::vector<double> orders = DefaultRdpOrders();  // every order must be > 1
};

// Epsilon of a whole schedule at `delta` in (0, 1).
RdpConversion RdpEpsilon(const Schedule& schedule, SamplingModel sampling, double delta,
                         const RdpOptions& options = {});

}  // namespace asyncdp::accounting
