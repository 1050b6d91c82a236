#include "core/accounting/random_allocation/allocation_pld.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "core/accounting/log_math.h"
#include "core/check.h"
#include "core/error.h"

namespace asyncdp::accounting {
namespace {

// Connect-the-dots of atoms (loss, P-mass) onto {i delta_loss}: an atom at loss l in (i D, (i+1) D) with
// P-mass p (Q-mass p e^-l) sends p (1 - e^{-(l - iD)}) / (1 - e^{-D}) to i+1 and the rest to i, keeping
// both masses (pld_discretization.h). Losses below `floor` are raised to it first (which only raises
// delta).
DiscretePld ConnectAtoms(const std::vector<std::pair<double, double>>& atoms, double delta_loss,
                         double infinity_mass) {
  constexpr double kFloor = -40.0;
  double lo = kInf;
  double hi = -kInf;
  for (const auto& [loss, p] : atoms) {
    lo = std::min(lo, std::max(loss, kFloor));
    hi = std::max(hi, std::max(loss, kFloor));
  }
  DiscretePld out;
  out.infinity_mass = std::min(infinity_mass, 1.0);
  if (atoms.empty()) {
    out.pmf = {0.0};
    return out;
  }
  const auto i_lo = static_cast<int64_t>(std::floor(lo / delta_loss));
  const auto i_hi = static_cast<int64_t>(std::ceil(hi / delta_loss)) + 1;
  out.offset = i_lo;
  out.pmf.assign(static_cast<size_t>(i_hi - i_lo + 1), 0.0);
  const double shrink = -std::expm1(-delta_loss);
  for (const auto& [raw_loss, p] : atoms) {
    const double loss = std::max(raw_loss, kFloor);
    const double grid = std::floor(loss / delta_loss);
    const double above = loss - grid * delta_loss;  // in [0, D)
    const double up = std::clamp(p * -std::expm1(-above) / shrink, 0.0, p);
    const auto i = static_cast<size_t>(static_cast<int64_t>(grid) - i_lo);
    out.pmf[i] += p - up;
    out.pmf[i + 1] += up;
  }
  return out;
}

}  // namespace

DiscretePld RemovePld(const LikelihoodRatioLaw& law, double delta_loss) {
  std::vector<std::pair<double, double>> atoms;
  atoms.reserve(law.q.size());
  for (size_t j = 0; j < law.q.size(); ++j) {
    const double v = law.ratio[j];
    if (law.q[j] > 0.0 && v > 0.0) atoms.emplace_back(std::log(v), v * law.q[j]);
  }
  return ConnectAtoms(atoms, delta_loss, law.p_infinity + law.round_off);
}

DiscretePld AddPld(const LikelihoodRatioLaw& law, double delta_loss) {
  std::vector<std::pair<double, double>> atoms;
  atoms.reserve(law.q.size());
  double infinity = law.round_off;
  for (size_t j = 0; j < law.q.size(); ++j) {
    const double v = law.ratio[j];
    if (law.q[j] <= 0.0) continue;
    if (v > 0.0) {
      atoms.emplace_back(-std::log(v), law.q[j]);
    } else {
      infinity += law.q[j];  // V = 0: the record's presence is certain from this output
    }
  }
  return ConnectAtoms(atoms, delta_loss, infinity);
}

std::shared_ptr<const AllocationInstance> MakeAllocationInstance(int64_t steps, double sigma,
                                                                 double participation,
                                                                 const AllocationPldOptions& options) {
  auto instance = std::make_shared<AllocationInstance>();
  instance->steps = steps;
  instance->sigma = sigma;
  instance->participation = participation;
  instance->options = options;
  instance->law = AllocationRatioLaw(steps, sigma, participation, options);
  const LikelihoodRatioLaw& law = instance->law;
  // The PLD grid: a fraction of the remove loss's standard deviation under P.
  instance->delta_loss = LossSpacing(law, options.relative_discretization);
  // Very small sigma (0.05): the log-normal's tail overflows the grids and the law is not finite. No bound
  // from it (the other bounds still apply), rather than a PLD of NaNs.
  if (!std::isfinite(instance->delta_loss)) {
    throw ConfigError("random_allocation.sigma",
                      "the PLD of one window cannot be computed at sigma = " + std::to_string(sigma) +
                          " (its likelihood ratio's law overflows the grids)");
  }
  instance->pmfs = {RemovePld(law, instance->delta_loss), AddPld(law, instance->delta_loss)};
  return instance;
}

std::shared_ptr<const AllocationInstance> AllocationInstanceCache::Get(int64_t steps, double sigma,
                                                                       double participation,
                                                                       const AllocationPldOptions& options) {
  return entries_.Get(
      Key{steps, sigma, participation, options},
      [](const Key& a, const Key& b) {
        // Every option (fine_tail and max_log2_fft_size too, which the instance keeps and uses).
        return a.steps == b.steps && a.sigma == b.sigma && a.participation == b.participation &&
               a.options == b.options;
      },
      [&] { return MakeAllocationInstance(steps, sigma, participation, options); });
}

std::shared_ptr<AllocationInstanceCache> SharedAllocationInstanceCache() {
  static const auto cache = std::make_shared<AllocationInstanceCache>();
  return cache;
}

AllocationPld::AllocationPld(int64_t steps, int64_t instances, double sigma, double participation,
                             const AllocationPldOptions& options)
    : AllocationPld(*MakeAllocationInstance(steps, sigma, participation, options), instances) {}

std::optional<ComposedPld> ComposeWindows(const std::function<std::vector<DiscretePld>(double)>& pmfs_at,
                                          std::vector<DiscretePld> first, double delta_loss, int64_t count,
                                          int max_log2_fft_size, PldBound bound) {
  constexpr double kTailMass = 1e-15;
  std::optional<ComposedPld> composed =
      ComposedPld::FromDiscrete(first, count, delta_loss, kTailMass, max_log2_fft_size, bound);
  // Many instances widen the composed window: coarsen the grid until it fits (rarely needed).
  for (int attempt = 0; !composed && attempt < 40; ++attempt) {
    delta_loss *= 2.0;
    composed = ComposedPld::FromDiscrete(pmfs_at(delta_loss), count, delta_loss, kTailMass, max_log2_fft_size,
                                         bound);
  }
  return composed;
}

AllocationPld::AllocationPld(const AllocationInstance& instance, int64_t instances) {
  ASYNCDP_CHECK(instances >= 1);
  const int max_log2 = instance.options.max_log2_fft_size;
  std::optional<ComposedPld> composed = ComposeWindows(
      [&](double delta_loss) {
        return std::vector<DiscretePld>{RemovePld(instance.law, delta_loss),
                                        AddPld(instance.law, delta_loss)};
      },
      instance.pmfs, instance.delta_loss, instances, max_log2, PldBound::kUpper);
  if (!composed) {
    throw ConfigError("random_allocation.windows", "the composed random-allocation PLD does not fit 2^" +
                                                       std::to_string(max_log2) + " grid points");
  }
  composed_ = std::move(*composed);
}

}  // namespace asyncdp::accounting
