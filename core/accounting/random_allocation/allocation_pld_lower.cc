#include "core/accounting/random_allocation/allocation_pld_lower.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/accounting/log_math.h"
#include "core/accounting/random_allocation/allocation_pld.h"
#include "core/accounting/random_allocation/pooling.h"
#include "core/check.h"
#include "core/error.h"

namespace asyncdp::accounting {
namespace {

// Bounds the grids: the remove direction drops the atoms whose loss ln V is below -kLossLimit (their P-mass
// is below e^-40 of their Q-mass), the add direction lowers losses -ln V above kLossLimit to it. Both only
// lower delta.
constexpr double kLossLimit = 40.0;

// (grid index, mass) pairs into a DiscretePld.
DiscretePld Collect(const std::vector<std::pair<int64_t, double>>& masses) {
  DiscretePld out;
  if (masses.empty()) {
    out.pmf = {0.0};
    return out;
  }
  int64_t lo = masses.front().first;
  int64_t hi = lo;
  for (const auto& [i, m] : masses) {
    lo = std::min(lo, i);
    hi = std::max(hi, i);
  }
  out.offset = lo;
  out.pmf.assign(static_cast<size_t>(hi - lo + 1), 0.0);
  for (const auto& [i, m] : masses) out.pmf[static_cast<size_t>(i - lo)] += m;
  return out;
}

}  // namespace

DiscretePld RemovePldLower(const LikelihoodRatioLaw& law, double delta_loss) {
  ASYNCDP_CHECK(delta_loss > 0.0 && law.p_infinity == 0.0);
  // Atoms in decreasing V, as increasing -V for PoolUp; each run's mean V is pulled down to the grid
  // ratio e^{g delta_loss} at or below its first atom. The run left at the bottom keeps the grid ratio of
  // its first atom, below its mean: a lower loss and less P-mass, which only lowers delta.
  std::vector<Atom> atoms;
  const double floor_ratio = std::exp(-kLossLimit);
  for (size_t j = 0; j < law.q.size(); ++j) {
    if (law.q[j] > 0.0 && law.ratio[j] >= floor_ratio) atoms.push_back({-law.ratio[j], law.q[j]});
  }
  std::sort(atoms.begin(), atoms.end(), [](const Atom& a, const Atom& b) { return a.x < b.x; });
  int64_t index = 0;
  auto target = [&](double minus_v) {
    const double v = -minus_v;
    index = static_cast<int64_t>(std::floor(std::log(v) / delta_loss));
    while (std::exp(static_cast<double>(index) * delta_loss) > v) --index;
    return -std::exp(static_cast<double>(index) * delta_loss);
  };
  std::vector<std::pair<int64_t, double>> masses;
  auto emit = [&](double minus_goal, double q) { masses.emplace_back(index, -minus_goal * q); };
  const PoolRest left = PoolUp(atoms, target, emit);
  if (left.mass > 0.0) emit(left.goal, left.mass);
  return Collect(masses);
}

DiscretePld AddPldLower(const LikelihoodRatioLaw& law, double delta_loss) {
  ASYNCDP_CHECK(delta_loss > 0.0 && law.p_infinity == 0.0);
  // Atoms in increasing V; each run's mean V is raised to the grid ratio e^{g delta_loss} at or above
  // its first atom (at least e^-40), so its add loss -g delta_loss is at most the atoms'. The run left at
  // the top gets the grid ratio above its mean: a lower loss, which only lowers delta.
  std::vector<Atom> atoms;
  for (size_t j = 0; j < law.q.size(); ++j) {
    if (law.q[j] > 0.0) atoms.push_back({law.ratio[j], law.q[j]});
  }
  std::sort(atoms.begin(), atoms.end(), [](const Atom& a, const Atom& b) { return a.x < b.x; });
  const auto lowest = static_cast<int64_t>(std::ceil(-kLossLimit / delta_loss));
  int64_t index = 0;
  auto target = [&](double v) {
    index = v > 0.0 ? std::max(static_cast<int64_t>(std::ceil(std::log(v) / delta_loss)), lowest) : lowest;
    while (std::exp(static_cast<double>(index) * delta_loss) < v) ++index;
    return std::exp(static_cast<double>(index) * delta_loss);
  };
  std::vector<std::pair<int64_t, double>> masses;
  auto emit = [&](double /*goal*/, double q) { masses.emplace_back(-index, q); };
  const PoolRest left = PoolUp(atoms, target, emit);
  if (left.mass > 0.0) emit(left.goal, left.mass);
  return Collect(masses);
}

namespace {

// One window's P-mass the dominated law keeps (1 up to the dropped tails when the grid suits the law).
double KeptPMass(const LikelihoodRatioLaw& law) {
  double total = 0.0;
  for (size_t j = 0; j < law.q.size(); ++j) total += law.ratio[j] * law.q[j];
  return total;
}

}  // namespace

AllocationPldLower::AllocationPldLower(int64_t steps, int64_t windows, double sigma, double participation,
                                       const AllocationPldOptions& options) {
  ASYNCDP_CHECK(windows >= 1);
  std::vector<LikelihoodRatioLaw> laws;
  laws.push_back(AllocationRatioLaw(steps, sigma, participation, options, LawBound::kDominated));
  if (KeptPMass(laws.front()) < 1.0 - 1e-3) {
    AllocationPldOptions coarser = options;
    coarser.fine_tail = std::max(options.fine_tail, 1e-6);
    laws.push_back(AllocationRatioLaw(steps, sigma, participation, coarser, LawBound::kDominated));
  }
  double kept = 0.0;
  for (const LikelihoodRatioLaw& law : laws) {
    const double mass = KeptPMass(law);
    kept = std::max(kept, mass);
    // A grid too coarse for the law's bulk pools little or nothing (every run falls short of its target
    // and is dropped). Zero would still be a valid lower bound; saying so is more useful.
    if (mass > 0.5) bounds_.push_back(Compose(law, windows, options));
  }
  if (bounds_.empty()) {
    std::ostringstream why;
    why << "no lower bound at sigma = " << sigma << ": the grids keep only " << std::setprecision(3) << kept
        << " of one window's P-mass (its law is too heavy-tailed for 2^" << options.log2_points << " points)";
    throw ConfigError("random_allocation.sigma", why.str());
  }
}

AllocationPldLower::Bound AllocationPldLower::Compose(const LikelihoodRatioLaw& law, int64_t windows,
                                                      const AllocationPldOptions& options) {
  // The PLD grid as the upper bound's: a fraction of the remove loss's spread under P.
  const double delta_loss = LossSpacing(law, options.relative_discretization);
  auto pmfs_at = [&](double spacing) {
    return std::vector<DiscretePld>{RemovePldLower(law, spacing), AddPldLower(law, spacing)};
  };
  std::optional<ComposedPld> composed = ComposeWindows(pmfs_at, pmfs_at(delta_loss), delta_loss, windows,
                                                       options.max_log2_fft_size, PldBound::kLower);
  if (!composed) {
    throw ConfigError("random_allocation.windows", "the composed lower-bound PLD does not fit 2^" +
                                                       std::to_string(options.max_log2_fft_size) +
                                                       " grid points");
  }
  // Each window's law is off by at most round_off in either hockey-stick divergence (as a measure: in
  // total variation weighted by V), so the composition by at most windows times it.
  return {std::move(*composed), static_cast<double>(windows) * law.round_off};
}

double AllocationPldLower::DeltaLower(double epsilon) const {
  return std::max(RemoveDeltaLower(epsilon), AddDeltaLower(epsilon));
}

double AllocationPldLower::RemoveDeltaLower(double epsilon) const {
  double best = 0.0;
  for (const Bound& b : bounds_) best = std::max(best, b.composed.DeltaLowerOf(0, epsilon) - b.round_off);
  return best;
}

double AllocationPldLower::AddDeltaLower(double epsilon) const {
  double best = 0.0;
  for (const Bound& b : bounds_) best = std::max(best, b.composed.DeltaLowerOf(1, epsilon) - b.round_off);
  return best;
}

double AllocationPldLower::EpsilonLower(double delta) const {
  return std::max(RemoveEpsilonLower(delta), AddEpsilonLower(delta));
}

double AllocationPldLower::RemoveEpsilonLower(double delta) const {
  double best = 0.0;
  for (const Bound& b : bounds_) best = std::max(best, b.composed.EpsilonLowerOf(0, delta + b.round_off));
  return best;
}

double AllocationPldLower::AddEpsilonLower(double delta) const {
  double best = 0.0;
  for (const Bound& b : bounds_) best = std::max(best, b.composed.EpsilonLowerOf(1, delta + b.round_off));
  return best;
}

}  // namespace asyncdp::accounting
