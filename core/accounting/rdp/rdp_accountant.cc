#include "core/accounting/rdp/rdp_accountant.h"

#include <cmath>
#include <string>

#include "core/error.h"

namespace asyncdp::accounting {
namespace {

constexpr size_t kMaxCachedCurves = 256;

void RequireOrders(const RdpOptions& rdp) {
  if (rdp.orders.empty()) throw ConfigError("rdp.orders", "must not be empty");
  for (double a : rdp.orders) {
    if (!(a > 1.0) || !std::isfinite(a)) throw ConfigError("rdp.orders", "every order must be finite and > 1");
  }
}

}  // namespace

RdpAccountant::RdpAccountant(AccountantOptions options) : Accountant(std::move(options)) {
  RequireOrders(this->options().rdp);
}

const std::vector<double>& RdpAccountant::Curve(double q, double sigma, SamplingModel sampling) const {
  for (const CachedCurve& c : curves_) {
    if (c.q == q && c.sigma == sigma) return c.rdp;
  }
  if (curves_.size() >= kMaxCachedCurves) curves_.clear();  // many distinct rounds: start over
  curves_.push_back({q, sigma,
                     options().noise == NoiseModel::kDiscreteGaussian
                         ? DiscreteGaussianRdpCurve(q, sigma, options().rdp.orders, sampling)
                         : SubsampledGaussianRdpCurve(q, sigma, options().rdp.orders, sampling)});
  return curves_.back().rdp;
}

std::vector<double> RdpAccountant::TotalRdp() const {
  const std::vector<double>& orders = options().rdp.orders;
  std::vector<double> total(orders.size(), 0.0);
  const SamplingModel sampling = AccountedSampling();
  for (const RoundGroup& g : AccountedSchedule()) {
    const std::vector<double>& curve = Curve(g.q, g.sigma, sampling);
    for (size_t k = 0; k < orders.size(); ++k) total[k] += static_cast<double>(g.count) * curve[k];
  }
  return total;
}

EpsilonResult RdpAccountant::Epsilon(double delta) const {
  RequireUsable(delta);
  const RdpConversion c = RdpToEpsilon(options().rdp.orders, TotalRdp(), delta);
  EpsilonResult r;
  r.epsilon = std::isnan(c.epsilon) ? std::numeric_limits<double>::infinity() : c.epsilon;
  r.order = c.order;
  return r;
}

double RdpAccountant::Delta(double epsilon) const {
  RequireUsable(0.5);
  if (!(epsilon >= 0.0)) throw ConfigError("epsilon", "must be >= 0");
  if (rounds() == 0) return 0.0;
  return RdpToDelta(options().rdp.orders, TotalRdp(), epsilon);
}

std::string RdpAccountant::Method() const {
  std::string subsampling;
  if (AccountedSampling() == SamplingModel::kPoisson) {
    subsampling = options().noise == NoiseModel::kDiscreteGaussian
                      ? "Poisson-subsampled discrete Gaussian RDP: remove direction by the Mironov-Talwar-"
                        "Zhang 2019 binomial sum, add direction by a second-order bound (rdp.h)"
                      : "Poisson-subsampled Gaussian RDP (Mironov-Talwar-Zhang 2019)";
  } else {
    subsampling =
        "sampling-without-replacement RDP bound (Wang-Balle-Kasiviswanathan 2019, Gaussian sensitivity 2C)";
  }
  return subsampling + ", improved RDP->DP conversion (Canonne-Kamath-Steinke 2020)";
}

}  // namespace asyncdp::accounting
