#include "core/accounting/pld/privacy_loss_pair.h"

#include <cmath>
#include <limits>
#include <numbers>

#include "core/accounting/log_math.h"
#include "core/check.h"

namespace asyncdp::accounting {
namespace {


}  // namespace

PrivacyLossPair::PrivacyLossPair(PairKind kind, double q, double sigma) : kind_(kind), q_(q), sigma_(sigma) {
  ASYNCDP_CHECK(q > 0.0 && q <= 1.0 && sigma > 0.0);
  switch (kind) {
    case PairKind::kPoissonRemove:
      p_weights_ = {1.0 - q, q, 0.0};
      q_weights_ = {1.0, 0.0, 0.0};
      loss_min_ = std::log1p(-q);
      loss_max_ = kInf;
      break;
    case PairKind::kPoissonAdd:
      p_weights_ = {1.0, 0.0, 0.0};
      q_weights_ = {1.0 - q, 0.0, q};
      loss_min_ = -kInf;
      loss_max_ = -std::log1p(-q);
      break;
  }
}

double PrivacyLossPair::RemoveLoss(double x) const {
  const double u = (2.0 * x - 1.0) / (2.0 * sigma_ * sigma_);
  const double small = q_ * std::expm1(u);
  // Near u = 0 log1p keeps relative precision; far below (q near 1) 1 - q + q e^u must not be formed as
  // 1 + (q (e^u - 1)), which would cancel to nothing.
  if (u <= 0.0) return small > -0.5 ? std::log1p(small) : LogAddExp(std::log1p(-q_), std::log(q_) + u);
  // ln(q e^u (1 + (1-q)/q e^-u)): no overflow of e^u for large x.
  return std::log(q_) + u + std::log1p((1.0 - q_) / q_ * std::exp(-u));
}

double PrivacyLossPair::RemoveInverse(double loss) const {
  // Solve 1 - q + q e^u = e^loss: u = ln((e^loss - 1 + q) / q).
  if (loss <= std::log1p(-q_)) return -kInf;
  double u;
  if (loss > 1.0) {
    u = loss + std::log1p(-(1.0 - q_) * std::exp(-loss)) - std::log(q_);
  } else if (loss < -1.0) {
    u = std::log(std::exp(loss) - (1.0 - q_)) - std::log(q_);  // e^loss - 1 would cancel here
  } else {
    u = std::log1p(std::expm1(loss) / q_);
  }
  return sigma_ * sigma_ * u + 0.5;
}

double PrivacyLossPair::Loss(double x) const {
  switch (kind_) {
    case PairKind::kPoissonRemove:
      return RemoveLoss(x);
    case PairKind::kPoissonAdd:
      return -RemoveLoss(-x);
  }
  return 0.0;
}

double PrivacyLossPair::InverseLoss(double loss) const {
  if (loss <= loss_min_) return -kInf;
  if (loss >= loss_max_) return kInf;
  switch (kind_) {
    case PairKind::kPoissonRemove:
      return RemoveInverse(loss);
    case PairKind::kPoissonAdd:
      return -RemoveInverse(-loss);
  }
  return 0.0;
}

double PrivacyLossPair::PDensity(double x) const {
  double sum = 0.0;
  for (int j = 0; j < 3; ++j) {
    if (p_weights_[j] > 0.0) {
      const double z = (x - kMeans[j]) / sigma_;
      sum += p_weights_[j] * std::exp(-0.5 * z * z);
    }
  }
  return sum / (sigma_ * std::sqrt(2.0 * std::numbers::pi));
}

double PrivacyLossPair::QDensity(double x) const {
  double sum = 0.0;
  for (int j = 0; j < 3; ++j) {
    if (q_weights_[j] > 0.0) {
      const double z = (x - kMeans[j]) / sigma_;
      sum += q_weights_[j] * std::exp(-0.5 * z * z);
    }
  }
  return sum / (sigma_ * std::sqrt(2.0 * std::numbers::pi));
}

PrivacyLossPair::Edge PrivacyLossPair::MakeEdge(double x) const {
  Edge e;
  e.x = x;
  for (int j = 0; j < 3; ++j) {
    if (p_weights_[j] == 0.0 && q_weights_[j] == 0.0) continue;
    if (x == -kInf) {
      e.cdf[j] = 0.0;
      e.sf[j] = 1.0;
    } else if (x == kInf) {
      e.cdf[j] = 1.0;
      e.sf[j] = 0.0;
    } else {
      // One erfc per component: the small side is exact, the other is 1 minus it (never used where small).
      const double z = (x - kMeans[j]) / sigma_;
      if (z <= 0.0) {
        e.cdf[j] = NormalCdf(z);
        e.sf[j] = 1.0 - e.cdf[j];
      } else {
        e.sf[j] = NormalSf(z);
        e.cdf[j] = 1.0 - e.sf[j];
      }
    }
  }
  return e;
}

double PrivacyLossPair::ComponentMass(const Edge& a, const Edge& b, int j) const {
  const double za = a.x - kMeans[j];
  const double zb = b.x - kMeans[j];
  if (za >= 0.0) return a.sf[j] - b.sf[j];
  if (zb <= 0.0) return b.cdf[j] - a.cdf[j];
  return 1.0 - a.cdf[j] - b.sf[j];
}

double PrivacyLossPair::PMass(const Edge& a, const Edge& b) const {
  double sum = 0.0;
  for (int j = 0; j < 3; ++j) {
    if (p_weights_[j] > 0.0) sum += p_weights_[j] * ComponentMass(a, b, j);
  }
  return std::max(sum, 0.0);
}

double PrivacyLossPair::QMass(const Edge& a, const Edge& b) const {
  double sum = 0.0;
  for (int j = 0; j < 3; ++j) {
    if (q_weights_[j] > 0.0) sum += q_weights_[j] * ComponentMass(a, b, j);
  }
  return std::max(sum, 0.0);
}

double PrivacyLossPair::PLowerQuantileBound(double tail) const {
  // Each component has at most `tail` of its mass below its mean + sigma Phi^-1(tail), so the P mixture too.
  double lowest_mean = kInf;
  for (int j = 0; j < 3; ++j) {
    if (p_weights_[j] > 0.0) lowest_mean = std::min(lowest_mean, kMeans[j]);
  }
  return lowest_mean + sigma_ * NormalQuantile(tail);  // each component has at most `tail` below
}

double PrivacyLossPair::PUpperQuantileBound(double tail) const {
  double highest_mean = -kInf;
  for (int j = 0; j < 3; ++j) {
    if (p_weights_[j] > 0.0) highest_mean = std::max(highest_mean, kMeans[j]);
  }
  return highest_mean - sigma_ * NormalQuantile(tail);
}

void PrivacyLossPair::LossMoments(double& mean, double& variance) const {
  // 10-point Gauss-Legendre on panels of width sigma/2, component by component over each component's
  // +-11 sigma (its mass beyond is below 1e-27): L is smooth and at most linear in x in the tails, so this
  // is accurate far beyond what grid sizing needs, and the cost does not grow as sigma -> 0.
  static constexpr double kNodes[] = {0.1488743389816312, 0.4333953941292472, 0.6794095682990244,
                                      0.8650633666889845, 0.9739065285171717};
  static constexpr double kWeights[] = {0.2955242247147529, 0.2692667193099963, 0.2190863625159820,
                                        0.1494513491505806, 0.0666713443086881};
  constexpr int kPanels = 44;
  const double width = 22.0 * sigma_ / kPanels;
  const double norm = 1.0 / std::sqrt(2.0 * std::numbers::pi);
  double m0 = 0.0, m1 = 0.0, m2 = 0.0;
  for (int j = 0; j < 3; ++j) {
    if (p_weights_[j] == 0.0) continue;
    for (int p = 0; p < kPanels; ++p) {
      const double center = -11.0 + (p + 0.5) * 22.0 / kPanels;  // in units of sigma
      for (int i = 0; i < 5; ++i) {
        for (double side : {-1.0, 1.0}) {
          const double z = center + side * 0.5 * (22.0 / kPanels) * kNodes[i];
          const double weight = p_weights_[j] * 0.5 * width * kWeights[i] * norm * std::exp(-0.5 * z * z) / sigma_;
          const double loss = Loss(kMeans[j] + sigma_ * z);
          m0 += weight;
          m1 += weight * loss;
          m2 += weight * loss * loss;
        }
      }
    }
  }
  mean = m1 / m0;
  variance = std::max(m2 / m0 - mean * mean, 0.0);
}

double PrivacyLossPair::LossQuantile(double p) const {
  ASYNCDP_CHECK(p > 0.0 && p < 1.0);
  const Edge minus_infinity = MakeEdge(-kInf);
  double lo = PLowerQuantileBound(std::min(p, 1.0 - p) / 2.0);
  double hi = PUpperQuantileBound(std::min(p, 1.0 - p) / 2.0);
  for (int i = 0; i < 100 && hi - lo > 1e-13 * (1.0 + std::abs(lo)); ++i) {
    const double mid = 0.5 * (lo + hi);
    (PMass(minus_infinity, MakeEdge(mid)) < p ? lo : hi) = mid;
  }
  return Loss(0.5 * (lo + hi));
}

}  // namespace asyncdp::accounting
