// An independent oracle for the privacy of one client's subsampled Gaussian rounds: the hockey-stick
// divergence delta(eps) = integral of max(0, a(x) - e^eps b(x)) of the output distributions (A, B) of a
// concrete *pair of data sets*, by direct numerical integration.
//
// It shares no code and no include with core/accounting: its own normal density and CDF (std::erfc),
// its own Gauss-Legendre rule and bisection. What it assumes is only the data set pair itself, written
// out below in units of the clipping norm C (noise N(0, sigma^2) per coordinate, one coordinate suffices
// because every other record's gradient is the same on both sides and cancels by a shift):
//   * Poisson sampling, add/remove: D' = D + {x}, x's clipped gradient +e, every other record's 0. Then
//     M(D') = (1-q) N(0, sigma^2) + q N(1, sigma^2) and M(D) = N(0, sigma^2). Both orders of the pair are
//     checked ("remove": (M(D'), M(D)); "add": (M(D), M(D'))).
//   * Fixed-size sampling without replacement, replace-one: every other record's gradient -e, the changed
//     record +e in D and -e in D'. A batch of s records drawn from N: with probability q = s/N the record
//     is in it and the sum is (s-1)(-e) + e, otherwise s(-e); in D' always s(-e). Shifted by s e:
//     M(D) = (1-q) N(0) + q N(2), M(D') = N(0) — the Poisson structure with a shift of 2C. Both orders.
//   * Shuffle, one epoch of m = 1/q rounds: the record is in exactly one round, uniformly; the accountant
//     charges the full-batch Gaussian N(2, sigma^2) vs N(0, sigma^2) per epoch, which the oracle integrates
//     too (ShuffleEpochPair), and for m = 2 the exact 2-round pair by 2-D quadrature (ShuffleTwoRoundDelta).
//
// Composition of T rounds: the T-fold product pair (A^T, B^T). With l(x) = ln(a(x)/b(x)) increasing in x,
//   delta_T(eps) = integral a(x) delta_{T-1}(eps - l(x)) dx,   delta_0(eps) = max(0, 1 - e^eps),
// which is the T-dimensional hockey-stick integral written as iterated 1-D integrals (Fubini); T = 1 is
// the plain 1-D integral of max(0, a - e^eps b). For T >= 2 the innermost integral delta_1 is evaluated in
// closed form from the normal CDF (the integral of a Gaussian density over a half-line, above the unique
// root of l(x) = eps'), which keeps T = 3 at a few hundred thousand root searches; the T = 1 tests compare
// that closed form with the quadrature, so both routes check each other.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "tests/core/accounting/oracle/mixture.h"

namespace asyncdp::oracle {

// The x with l(x) = target for a non-decreasing l, by bisection; -inf / +inf when target is outside the
// range of l on [lo, hi].
inline double SolveLoss(const Pair& pair, double target, double lo, double hi) {
  if (pair.shape != Pair::Shape::kGeneric) {
    // NaN: target outside the range of l — below it for kRemove (l > ln(1-q)), above it for kAdd.
    const double x = pair.InverseLoss(target);
    if (std::isnan(x)) return pair.shape == Pair::Shape::kRemove ? -kInf : kInf;
    if (x <= lo) return -kInf;
    return x >= hi ? kInf : x;
  }
  if (pair.Loss(lo) >= target) return -kInf;
  if (pair.Loss(hi) < target) return kInf;
  for (int i = 0; i < 200 && hi - lo > 1e-14 * (1.0 + std::abs(lo)); ++i) {
    const double mid = 0.5 * (lo + hi);
    (pair.Loss(mid) < target ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

class HockeyStick {
 public:
  explicit HockeyStick(Pair pair) : pair_(std::move(pair)) {
    const double sigma = pair_.a.sigma;
    lo_ = std::min(pair_.a.LowestMean(), pair_.b.LowestMean()) - 10.0 * sigma;
    hi_ = std::max(pair_.a.HighestMean(), pair_.b.HighestMean()) + 10.0 * sigma;
    panel_ = sigma / 4.0;  // adaptive refinement resolves narrower features
    sup_ = pair_.LossSup();
  }

  // delta_1(eps) by quadrature of max(0, a - e^eps b): the integrand is positive exactly above the root.
  double DeltaOneRoundByQuadrature(double epsilon) const {
    const double root = SolveLoss(pair_, epsilon, lo_, hi_);
    if (root == kInf) return 0.0;
    const double from = std::max(root, lo_);
    const double e = std::exp(epsilon);
    return IntegrateAdaptive([&](double x) { return std::max(0.0, pair_.a.Density(x) - e * pair_.b.Density(x)); },
                             from, hi_, panel_, 1e-19);
  }

  // delta_1(eps) in closed form: A(X > root) - e^eps B(X > root).
  double DeltaOneRoundClosedForm(double epsilon) const {
    if (epsilon >= sup_) return 0.0;
    const double root = SolveLoss(pair_, epsilon, lo_ - 40.0 * pair_.a.sigma, hi_ + 40.0 * pair_.a.sigma);
    if (root == kInf) return 0.0;
    if (root == -kInf) return std::max(0.0, 1.0 - std::exp(epsilon));
    return std::max(0.0, pair_.a.Tail(root) - std::exp(epsilon) * pair_.b.Tail(root));
  }

  // delta_T(eps) of the T-fold product, T >= 1 (see the file comment).
  double Delta(double epsilon, int rounds) const {
    if (rounds == 1) return DeltaOneRoundClosedForm(epsilon);
    // delta_{T-1}(e') = 0 for e' >= (T-1) sup l: the integrand starts where eps - l(x) drops below that.
    const double zero_from = (rounds - 1) * sup_;
    double from = lo_;
    if (std::isfinite(zero_from)) from = std::max(lo_, SolveLoss(pair_, epsilon - zero_from, lo_, hi_));
    if (from == kInf) return 0.0;
    // Per-panel tolerance 1e-19 over ~100 panels: the smallest delta tested is 1e-8, so T = 2 is good to
    // ~1e-9 relative. The outer level of T = 3 asks 1e-8 relative, above the error of its inner integrals
    // (else it would refine noise).
    // The outer level of T = 3 starts from panels twice as wide (its cost is the number of nodes times a
    // whole 2-D integral); agreement with sigma/6 panels was checked to ~1e-9 relative.
    const double relative = rounds >= 3 ? 1e-8 : 1e-10;
    return IntegrateAdaptive(
        [&](double x) { return pair_.a.Density(x) * Delta(epsilon - pair_.Loss(x), rounds - 1); }, from, hi_,
        rounds >= 3 ? 2.0 * panel_ : panel_, rounds >= 3 ? 1e-17 : 1e-19, relative);
  }

  const Pair& pair() const { return pair_; }

 private:
  Pair pair_;
  double lo_, hi_, panel_, sup_;
};

// The true epsilon of the worst of several pairs at `delta`: the smallest eps with max_k delta_k(eps) <=
// delta, by bisection on [0, 200] (delta(eps) is non-increasing).
inline double TrueEpsilon(const std::vector<HockeyStick>& pairs, int rounds, double delta) {
  auto worst = [&](double eps) {
    double d = 0.0;
    for (const HockeyStick& h : pairs) d = std::max(d, h.Delta(eps, rounds));
    return d;
  };
  if (worst(0.0) <= delta) return 0.0;
  double lo = 0.0, hi = 1.0;
  while (worst(hi) > delta) {
    lo = hi;
    hi *= 2.0;
    if (hi > 400.0) return kInf;
  }
  for (int i = 0; i < 60 && hi - lo > 1e-10 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (worst(mid) > delta ? lo : hi) = mid;
  }
  return hi;
}

// The worst-case pairs of one round, both orders, for each sampling scheme of the file comment.
inline std::vector<HockeyStick> PoissonPairs(double q, double sigma) {
  return {HockeyStick(RemovePair(q, sigma, 1.0)), HockeyStick(AddPair(q, sigma, 1.0))};
}
inline std::vector<HockeyStick> FixedSizePairs(double q, double sigma) {
  return {HockeyStick(RemovePair(q, sigma, 2.0)), HockeyStick(AddPair(q, sigma, 2.0))};
}
// The shuffle charge: one full-batch Gaussian with replace-one sensitivity 2C per epoch.
inline std::vector<HockeyStick> ShuffleEpochPair(double sigma) { return {HockeyStick(RemovePair(1.0, sigma, 2.0))}; }

// The exact pair of one shuffled epoch of two rounds (q = 1/2): the record is in round 1 or round 2 with
// probability 1/2 each, shifting that round's sum by 2C. A = (N((2,0)) + N((0,2))) / 2, B = N((0,0)), and
// the reverse order; 2-D quadrature of max(0, a - e^eps b) (and of max(0, b - e^eps a)).
inline double ShuffleTwoRoundDelta(double sigma, double epsilon) {
  const double lo = -14.0 * sigma, hi = 2.0 + 14.0 * sigma, width = sigma / 6.0;
  const double e = std::exp(epsilon);
  auto density_a = [&](double x, double y) {
    return 0.5 * (NormalPdf((x - 2.0) / sigma) * NormalPdf(y / sigma) + NormalPdf(x / sigma) * NormalPdf((y - 2.0) / sigma)) /
           (sigma * sigma);
  };
  auto density_b = [&](double x, double y) { return NormalPdf(x / sigma) * NormalPdf(y / sigma) / (sigma * sigma); };
  const double forward = Integrate(
      [&](double x) {
        return Integrate([&](double y) { return std::max(0.0, density_a(x, y) - e * density_b(x, y)); }, lo, hi, width);
      },
      lo, hi, width);
  const double backward = Integrate(
      [&](double x) {
        return Integrate([&](double y) { return std::max(0.0, density_b(x, y) - e * density_a(x, y)); }, lo, hi, width);
      },
      lo, hi, width);
  return std::max(forward, backward);
}

}  // namespace asyncdp::oracle
