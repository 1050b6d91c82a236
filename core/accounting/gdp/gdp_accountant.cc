#include "core/accounting/gdp/gdp_accountant.h"

#include <string>

#include "core/accounting/gdp/gdp.h"
#include "core/error.h"

namespace asyncdp::accounting {

std::string GdpAccountant::Limitation() const {
  if (std::string why = SamplingLimitation(); !why.empty()) return why;
  if (options().noise == NoiseModel::kDiscreteGaussian) {
    return "the GDP approximation models continuous Gaussian noise; secure (discrete Gaussian) noise is "
           "accounted by rdp";
  }
  return {};
}

double GdpAccountant::Mu() const { return GdpMu(AccountedSchedule(), AccountedSampling()); }

EpsilonResult GdpAccountant::Epsilon(double delta) const {
  RequireUsable(delta);
  EpsilonResult r;
  r.mu = Mu();
  r.epsilon = GdpEpsilon(r.mu, delta);
  return r;
}

double GdpAccountant::Delta(double epsilon) const {
  RequireUsable(0.5);
  if (!(epsilon >= 0.0)) throw ConfigError("epsilon", "must be >= 0");
  return GdpDelta(Mu(), epsilon);
}

std::string GdpAccountant::Method() const {
  return AccountedSampling() == SamplingModel::kPoisson
             ? "CLT mu-GDP for Poisson sampling (Bu et al. 2020); not a guarantee"
             : "CLT mu-GDP of the Poisson pairs at sigma/2 that dominate fixed-size sampling under replace-one; "
               "not a guarantee";
}

}  // namespace asyncdp::accounting
