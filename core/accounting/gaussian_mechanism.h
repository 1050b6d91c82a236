// (epsilon, delta) of ONE Gaussian mechanism M(x) = f(x) + N(0, s^2 I) with L2 sensitivity 1 (scale s by
// the sensitivity otherwise), the Gaussian mechanism, docs/theory.md §2. The exact curve is the analytic Gaussian
// mechanism of Balle and Wang 2018 (Theorem 8); the classic sufficient conditions are kept for
// comparison (they all over-estimate the noise).
#pragma once

namespace asyncdp::accounting {

// Exact delta(eps) = Phi(1/(2s) - eps s) - e^eps Phi(-1/(2s) - eps s)  (Balle-Wang Theorem 8).
double GaussianDelta(double epsilon, double s);
// Smallest eps >= 0 with GaussianDelta(eps, s) <= delta.
double GaussianEpsilon(double delta, double s);
// Smallest s with GaussianDelta(eps, s) <= delta (the analytic Gaussian mechanism's calibration).
double AnalyticGaussianSigma(double epsilon, double delta);

// (6.8): the Chernoff-tail delta exp(-(eps s - 1/(2s))^2 / 2), valid for eps s > 1/(2s).
double ChernoffGaussianDelta(double epsilon, double s);

enum class ClassicGaussianBound {
  k6_81,         // (sqrt(2 ln(1/delta)) / eps + (2 eps)^(-1/2))
  k6_82,         // (max(1, sqrt((ln(1/(2 pi delta^2)))_+)) / eps + (2 eps)^(-1/2))
  k6_83,         // sqrt(ln(e^eps / delta^2)) / eps
  k6_84,         // max(sqrt(1 + eps), sqrt((ln(e^eps / (2 pi delta^2)))_+)) / eps
  k6_91,         // (sqrt(2 ln(1/delta)) + sqrt(2 ln(1/delta) + 2 eps)) / (2 eps), exact for (6.8)
  kDworkRothA1,  // max(3/2, sqrt((2 ln(5/(4 delta)))_+)) / eps  (Dwork-Roth Theorem A.1 variant)
};

// The noise scale s (sensitivity 1) that the chosen classic bound requires for (eps, delta)-DP.
double ClassicGaussianSigma(double epsilon, double delta, ClassicGaussianBound bound);

}  // namespace asyncdp::accounting
