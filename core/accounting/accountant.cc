#include "core/accounting/accountant.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"

namespace asyncdp::accounting {

std::string_view ToString(NoiseModel noise) {
  return noise == NoiseModel::kGaussian ? "gaussian" : "discrete_gaussian";
}

Accountant::Accountant(AccountantOptions options) : options_(std::move(options)) {}

void Accountant::AddRounds(double q, double sigma, int64_t count) {
  ValidateRoundGroup(RoundGroup{q, sigma, count}, "round", 0);
  if (count > kMaxRounds - rounds_) {
    throw ConfigError("steps", "at most 2^53 (about 9.007e15) rounds can be composed, got " +
                                   std::to_string(rounds_) + " + " + std::to_string(count));
  }
  if (count == 0) return;
  const auto same = [&](const RoundGroup& g) { return g.q == q && g.sigma == sigma; };
  // The newest group is the usual match (a client records its rounds in order).
  auto group = !schedule_.empty() && same(schedule_.back())
                   ? schedule_.end() - 1
                   : std::find_if(schedule_.begin(), schedule_.end(), same);
  if (group == schedule_.end()) {
    schedule_.push_back({q, sigma, count});
  } else {
    group->count += count;
  }
  rounds_ += count;
  Invalidate();
}

void Accountant::AddSchedule(const Schedule& schedule) {
  ValidateSchedule(schedule);
  for (const RoundGroup& g : schedule) AddRounds(g.q, g.sigma, g.count);
}

Schedule Accountant::AccountedSchedule() const {
  return ReduceShuffledSchedule(schedule_, options_.sampling).schedule;
}

SamplingModel Accountant::AccountedSampling() const {
  return options_.sampling == SamplingModel::kShuffle ? SamplingModel::kFixedSizeWithoutReplacement
                                                      : options_.sampling;
}

std::string Accountant::SamplingLimitation() const {
  if (options_.sampling == SamplingModel::kRandomAllocation && kind() != AccountantKind::kRandomAllocation) {
    return "random-allocation (check-in) sampling is not independent per round; it is accounted by the "
           "random_allocation accountant";
  }
  return {};
}

void Accountant::RequireUsable(double delta) const {
  if (!(delta > 0.0 && delta < 1.0))
    throw ConfigError("delta", "must be in (0, 1), got " + std::to_string(delta));
  const std::string limitation = Limitation();
  if (!limitation.empty()) throw ConfigError(std::string(ToString(kind())), limitation);
}

Assumptions Accountant::Describe(double delta) const {
  Assumptions a;
  a.accountant = kind();
  a.bound = bound();
  a.sampling = options_.sampling;
  a.neighbours = NaturalNeighbours(options_.sampling);
  a.delta = delta;
  a.method = options_.sampling == SamplingModel::kShuffle
                 ? "shuffle accounted as one full-batch Gaussian per started epoch (sensitivity 2C, smallest "
                   "sigma); " + Method()
                 : Method();
  if (options_.noise == NoiseModel::kDiscreteGaussian) {
    a.method += "; secure noise: discrete Gaussian on a lattice, sigma is the effective multiplier after the "
                "rounding's sensitivity inflation";
  }
  return a;
}

ReducedSchedule ReduceShuffledSchedule(const Schedule& schedule, SamplingModel sampling) {
  ValidateSchedule(schedule);
  if (sampling != SamplingModel::kShuffle) return {schedule, sampling};
  double epochs = 0.0;
  double smallest_sigma = 0.0;
  for (const RoundGroup& g : schedule) {
    if (g.count == 0) continue;
    epochs += g.q * static_cast<double>(g.count);
    smallest_sigma = (smallest_sigma == 0.0) ? g.sigma : std::min(smallest_sigma, g.sigma);
  }
  ReducedSchedule out;
  out.sampling = SamplingModel::kFixedSizeWithoutReplacement;
  // An epoch that has started has released every record of it once (1e-9 absorbs sum-of-q round-off).
  const double whole_epochs = std::ceil(epochs - 1e-9);
  if (whole_epochs > 0) out.schedule.push_back({1.0, smallest_sigma, static_cast<int64_t>(whole_epochs)});
  return out;
}

}  // namespace asyncdp::accounting
