// The pair of output distributions (P, Q) of ONE subsampled Gaussian round on neighbouring data sets,
// in a coordinate x where the privacy loss L(x) = ln(p(x) / q(x)) is increasing. Both P and Q are
// mixtures of N(m, sigma^2) with means m in {0, +1, -1} (units of the sensitivity):
//   kPoissonRemove: P = (1-q) N(0) + q N(1),  Q = N(0)            L in (ln(1-q), inf)
//   kPoissonAdd:    P = N(0), Q = (1-q) N(0) + q N(-1)            L in (-inf, -ln(1-q))
//                   (the add direction, mirrored x -> -x so that L increases)
// Fixed-size sampling is accounted with the same two pairs at sigma / 2 (pld.h).
// The PLD discretisations (pld_discretization.h) need L, its inverse, densities and interval masses;
// all are computed without cancellation in the tails.
#pragma once

#include <array>

namespace asyncdp::accounting {

enum class PairKind { kPoissonRemove, kPoissonAdd };

class PrivacyLossPair {
 public:
  // 0 < q <= 1, sigma > 0.
  PrivacyLossPair(PairKind kind, double q, double sigma);

  double Loss(double x) const;
  // The x with Loss(x) = loss; -inf at or below loss_min(), +inf at or above loss_max().
  double InverseLoss(double loss) const;
  double loss_min() const { return loss_min_; }
  double loss_max() const { return loss_max_; }

  double PDensity(double x) const;
  double QDensity(double x) const;

  // Standard normal CDF and survival function of every component at x, each accurate in its own tail;
  // interval masses are formed from two of these without cancellation.
  struct Edge {
    double x = 0.0;
    std::array<double, 3> cdf{};
    std::array<double, 3> sf{};
  };
  Edge MakeEdge(double x) const;
  double PMass(const Edge& a, const Edge& b) const;  // P((a, b])
  double QMass(const Edge& a, const Edge& b) const;

  // x_lo, x_hi with P(X < x_lo) <= tail and P(X > x_hi) <= tail.
  double PLowerQuantileBound(double tail) const;
  double PUpperQuantileBound(double tail) const;

  // Mean and variance of the loss under P (Gauss-Legendre quadrature over x; used to size the PLD grid).
  void LossMoments(double& mean, double& variance) const;
  // The p-quantile of the loss under P, p in (0, 1) (bisection on the mixture CDF; L is increasing).
  double LossQuantile(double p) const;

  double sigma() const { return sigma_; }

 private:
  static constexpr std::array<double, 3> kMeans = {0.0, 1.0, -1.0};
  double ComponentMass(const Edge& a, const Edge& b, int component) const;
  // ln(1 - q + q exp((2x - 1) / (2 sigma^2))), the remove-direction loss.
  double RemoveLoss(double x) const;
  double RemoveInverse(double loss) const;

  PairKind kind_;
  double q_;
  double sigma_;
  std::array<double, 3> p_weights_{};
  std::array<double, 3> q_weights_{};
  double loss_min_;
  double loss_max_;
};

}  // namespace asyncdp::accounting
