#include "core/accounting/pld/pld_accountant.h"

#include <string>

#include "core/accounting/pld/composed_pld_cache.h"
#include "core/error.h"

namespace asyncdp::accounting {

std::string PldAccountant::Limitation() const {
  if (std::string why = SamplingLimitation(); !why.empty()) return why;
  if (options().noise == NoiseModel::kDiscreteGaussian) {
    return "the PLD accountant models continuous Gaussian noise; secure (discrete Gaussian) noise is "
           "accounted by rdp";
  }
  return {};
}

const ComposedPld& PldAccountant::Composed() const {
  if (!composed_)
    composed_ = SharedComposedPldCache().Get(AccountedSchedule(), AccountedSampling(), options().pld);
  return *composed_;
}

EpsilonResult PldAccountant::Epsilon(double delta) const {
  RequireUsable(delta);
  const ComposedPld& pld = Composed();
  EpsilonResult r;
  r.epsilon = pld.EpsilonUpper(delta);
  // Only when asked for: a cached composition that holds the lower bound may serve an upper-only request.
  if (options().pld.compute_lower_bound && pld.has_lower_bound()) r.epsilon_lower = pld.EpsilonLower(delta);
  r.discretization = pld.discretization();
  return r;
}

double PldAccountant::Delta(double epsilon) const {
  RequireUsable(0.5);
  if (!(epsilon >= 0.0)) throw ConfigError("epsilon", "must be >= 0");
  return Composed().DeltaUpper(epsilon);
}

std::string PldAccountant::Method() const {
  const std::string pair = AccountedSampling() == SamplingModel::kPoisson
                               ? "add and remove directions of the Poisson-subsampled Gaussian"
                               : "fixed size without replacement as ((1-q)N(0)+qN(2C), N(0)) and its reverse "
                                 "(Zhu-Dong-Wang 2022, Lebeda et al. 2024)";
  return "connect-the-dots PLD (lower bound: pooled PLD), FFT composition, " + pair;
}

}  // namespace asyncdp::accounting
