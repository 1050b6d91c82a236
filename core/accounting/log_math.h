// Numerically stable scalar helpers shared by the accountants: log-space sums, the standard normal CDF
// and its logarithm in both tails, log binomial coefficients. Pure functions, double precision.
#pragma once

#include <limits>

namespace asyncdp::accounting {

// +infinity: the epsilon of a mechanism with no finite bound, the log of an unbounded ratio.
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// ln(e^a + e^b) without overflow; -inf is the identity.
double LogAddExp(double a, double b);

// ln(e^a - e^b) for a >= b (returns -inf when a == b).
double LogSubExp(double a, double b);

// ln erfc(x) for every real x: std::erfc where it is representable, the asymptotic (continued fraction)
// expansion beyond, so that e.g. LogErfc(40) = -1604.3... instead of -inf.
double LogErfc(double x);

// Standard normal CDF Phi(x) = erfc(-x / sqrt 2) / 2 (accurate in both tails) and its complement.
double NormalCdf(double x);
double NormalSf(double x);  // 1 - Phi(x) = Phi(-x)
double LogNormalCdf(double x);

// Phi(b) - Phi(a) for a <= b without cancellation in the upper tail.
double NormalIntervalMass(double a, double b);

// Phi^{-1}(p), p in (0, 1) (Acklam's rational approximation refined by one Halley step; ~1e-15 relative).
double NormalQuantile(double p);

// ln C(n, k) for real n >= k >= 0 via lgamma; for integer arguments the usual binomial coefficient.
double LogBinomial(double n, double k);

}  // namespace asyncdp::accounting
