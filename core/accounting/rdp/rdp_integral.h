// The moment A_alpha = E_{z ~ N(0, sigma^2)} [((1 - q) + q exp((2z - 1) / (2 sigma^2)))^alpha] of the
// Poisson-subsampled Gaussian mechanism (MTZ19 Section 3), whose logarithm is (alpha - 1) * RDP(alpha),
// for real orders alpha > 1. Two independent evaluations:
//   * LogSubsampledGaussianMoment: Gauss-Legendre quadrature of the defining integral, split so that
//     A - 1 is computed without cancellation (the first-order term alpha q (e^u - 1) integrates to zero
//     exactly and is removed analytically). Fast (a few hundred integrand evaluations) and accurate to
//     ~1e-13 relative in A - 1; the accountant uses it for fractional orders.
//   * LogSubsampledGaussianMomentSeries: MTZ19 Section 3.3's two convergent series with erfc weights,
//     summed in log space with signed terms. For small alpha the series converges only polynomially
//     (|C(alpha, k)| ~ k^-(alpha+1)), so it can take thousands of terms; kept as the published reference
//     that the tests compare the quadrature against.
#pragma once

#include <vector>

namespace asyncdp::accounting {

// Quadrature table for one (q, sigma): the likelihood ratio at every node is computed once, so each
// further order costs one expm1 per node. Immutable after construction.
class SubsampledGaussianMoments {
 public:
  // 0 < q < 1, sigma > 0; LogMoment accepts orders in (1, max_order].
  SubsampledGaussianMoments(double q, double sigma, double max_order);
  double LogMoment(double alpha) const;  // ln A_alpha

 private:
  struct Node {
    double log_weight;  // ln(quadrature weight * standard normal density)
    double weight;
    double w;        // likelihood ratio - 1
    double log1p_w;  // ln(likelihood ratio)
  };
  double sigma_;
  std::vector<Node> nodes_;
};

// ln A_alpha, 0 < q < 1, sigma > 0, alpha > 1 (any real).
double LogSubsampledGaussianMoment(double q, double sigma, double alpha);
double LogSubsampledGaussianMomentSeries(double q, double sigma, double alpha);

}  // namespace asyncdp::accounting
