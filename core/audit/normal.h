// The standard normal distribution for the audit statistics: CDF, its logarithm, quantile. Written apart
// from core/accounting on purpose: the audit is the accountants' independent check and shares no code
// with them (conventions.md §18). Pure functions, double precision.
#pragma once

namespace asyncdp::audit {

// Phi(x) = P[Z <= x] = erfc(-x / sqrt 2) / 2, accurate to relative 1e-15 in both tails.
double NormalCdf(double x);

// ln Phi(x) for every real x: from erfc while Phi(x) is a normal double, from the asymptotic series
// Phi(x) ~ phi(x)/|x| (1 - 1/x^2 + 3/x^4 - 15/x^6) beyond (x < -37), so that it never returns -inf.
double LogNormalCdf(double x);

// Phi^{-1}(p) for p in (0, 1): Abramowitz & Stegun 26.2.23 as a start (|error| < 4.5e-4), refined by
// Halley steps on erfc until the relative change is below 1e-15. NormalQuantile(0) = -inf, (1) = +inf.
double NormalQuantile(double p);

}  // namespace asyncdp::audit
