// The binomial distribution, exactly: tails through the regularised incomplete beta function
//
//   I_x(a, b) = B(x; a, b) / B(a, b),   B(x; a, b) = integral_0^x t^{a-1} (1 - t)^{b-1} dt,
//
// and the identities (DLMF 8.17.5, 8.17.4)
//
//   P[Bin(n, p) >= k] = I_p(k, n - k + 1)      (1 <= k <= n),
//   I_x(a, b) = 1 - I_{1-x}(b, a).
//
// I_x is evaluated by its continued fraction (DLMF 8.17.22) with the modified Lentz algorithm, on the
// side of the symmetry where it converges fast (x < (a + 1) / (a + b + 2)); the prefactor
// x^a (1-x)^b / (a B(a, b)) by Loader's saddle-point (deviance) form, so large parameters (n ~ 10^5 and
// beyond) keep ~1e-13 relative accuracy where differences of lgamma values would lose ~1e-16 n.
// These are the engine of the Clopper–Pearson intervals and of the one-run audit's p-value.
#pragma once

#include <cstdint>

namespace asyncdp::audit {

// ln B(a, b) = lgamma(a) + lgamma(b) - lgamma(a + b), a, b > 0.
double LogBetaFunction(double a, double b);

// ln(x^a (1 - x)^b / B(a, b)) for a, b > 0, x in (0, 1): through Loader's deviance form when a, b >= 10
// (no cancellation between the large terms), directly otherwise.
double LogPowerOverBeta(double a, double b, double x);

// I_x(a, b) for a, b > 0 and x in [0, 1].
double RegularizedIncompleteBeta(double a, double b, double x);

// The density of Beta(a, b) at x in (0, 1): x^{a-1} (1-x)^{b-1} / B(a, b) (the derivative of I_x in x).
double BetaDensity(double a, double b, double x);

// The x in [0, 1] with I_x(a, b) = y, y in [0, 1] (the Beta(a, b) quantile): Newton steps on I_x
// safeguarded by a bisection bracket, to ~1e-14 relative.
double InverseRegularizedIncompleteBeta(double a, double b, double y);

// P[X = k] for X ~ Bin(n, p), 0 <= k <= n, p in [0, 1] (through LogPowerOverBeta; exact at p = 0, 1).
double BinomialPmf(int64_t n, double p, int64_t k);

// P[X >= k] for X ~ Bin(n, p); 1 for k <= 0, 0 for k > n.
double BinomialTailAtLeast(int64_t n, double p, int64_t k);

// P[X <= k] for X ~ Bin(n, p); 0 for k < 0, 1 for k >= n.
double BinomialCdf(int64_t n, double p, int64_t k);

}  // namespace asyncdp::audit
