#include "core/accounting/dp_event.h"

#include <cmath>
#include <optional>
#include <utility>

#include "core/check.h"
#include "core/error.h"

namespace asyncdp::accounting {
namespace {

DpEventPtr Make(auto node) { return std::make_shared<const DpEvent>(DpEvent{std::move(node)}); }

// What a subtree lowers to while walking: groups, and the sampler/noise/window it fixes (unset: a bare
// Gaussian, which fits any sampler: at q = 1 each accounted relation is at least its own sensitivity).
struct Walk {
  std::string unsupported;
  std::optional<SamplingModel> sampling;
  std::optional<NoiseModel> noise;
  std::optional<AllocationWindow> window;
  Schedule schedule;

  bool Fail(std::string why) {
    if (unsupported.empty()) unsupported = std::move(why);
    return false;
  }
  bool Fix(SamplingModel s) {
    if (sampling && *sampling != s) {
      return Fail("the event composes " + std::string(ToString(*sampling)) + " and " + std::string(ToString(s)) +
                  " sampling; the accountants here compose one sampler at a time");
    }
    sampling = s;
    return true;
  }
  bool Fix(NoiseModel n) {
    if (noise && *noise != n) return Fail("the event composes Gaussian and secure (discrete) noise");
    noise = n;
    return true;
  }
  bool Fix(const AllocationWindow& w) {
    if (window && (window->steps != w.steps || window->allocations != w.allocations ||
                   window->participation != w.participation)) {
      return Fail("the event composes random allocations over different windows");
    }
    window = w;
    return true;
  }
};

const GaussianEvent* AsGaussian(const DpEventPtr& e) {
  return e ? std::get_if<GaussianEvent>(&e->node) : nullptr;
}

// One sampled Gaussian round: (q, σ/Δ).
bool AddRound(Walk& w, double q, const DpEventPtr& inner, int64_t count, SamplingModel sampling) {
  const GaussianEvent* g = AsGaussian(inner);
  if (g == nullptr) {
    return w.Fail("a sampled event must wrap a Gaussian (amplification of a composed or sampled event is not "
                  "accounted here)");
  }
  if (!(g->sensitivity > 0.0) || !std::isfinite(g->sensitivity)) return w.Fail("a Gaussian's sensitivity must be > 0");
  if (!w.Fix(sampling) || !w.Fix(g->discrete ? NoiseModel::kDiscreteGaussian : NoiseModel::kGaussian)) return false;
  // A zero-count group releases nothing but still fixes the sampler and the noise (an empty schedule's
  // event says which accountants apply).
  if (count > 0) w.schedule.push_back({q, g->noise_multiplier / g->sensitivity, count});
  return true;
}

bool Visit(const DpEvent& event, int64_t times, Walk& w) {
  return std::visit(
      [&](const auto& node) -> bool {
        using T = std::decay_t<decltype(node)>;
        if constexpr (std::is_same_v<T, GaussianEvent>) {
          if (!(node.sensitivity > 0.0) || !std::isfinite(node.sensitivity)) {
            return w.Fail("a Gaussian's sensitivity must be > 0");
          }
          if (!w.Fix(node.discrete ? NoiseModel::kDiscreteGaussian : NoiseModel::kGaussian)) return false;
          if (times > 0) w.schedule.push_back({1.0, node.noise_multiplier / node.sensitivity, times});
          return true;
        } else if constexpr (std::is_same_v<T, PoissonSampledEvent>) {
          return AddRound(w, node.q, node.event, times, SamplingModel::kPoisson);
        } else if constexpr (std::is_same_v<T, FixedSizeSampledEvent>) {
          return AddRound(w, node.q, node.event, times, SamplingModel::kFixedSizeWithoutReplacement);
        } else if constexpr (std::is_same_v<T, ShuffledEvent>) {
          return AddRound(w, node.q, node.event, times, SamplingModel::kShuffle);
        } else if constexpr (std::is_same_v<T, RandomAllocationEvent>) {
          if (!w.Fix(node.window)) return false;
          const AllocationWindow& a = node.window;
          if (a.steps < 1) return w.Fail("random allocation needs m >= 1 steps per window");
          const double rate = a.participation * static_cast<double>(a.allocations) / static_cast<double>(a.steps);
          if (node.rounds < 0 || (times > 0 && node.rounds > Accountant::kMaxRounds / times)) {
            return w.Fail("random allocation: rounds out of range");
          }
          return AddRound(w, rate, node.event, node.rounds * times, SamplingModel::kRandomAllocation);
        } else if constexpr (std::is_same_v<T, SelfComposedEvent>) {
          if (!node.event) return w.Fail("a self-composed event needs an event");
          if (node.count < 0 || (node.count > 0 && times > Accountant::kMaxRounds / node.count)) {
            return w.Fail("a self-composition count out of range");
          }
          return Visit(*node.event, times * node.count, w);
        } else {
          for (const DpEventPtr& e : node.events) {
            if (!e) return w.Fail("a composed event holds a null event");
            if (!Visit(*e, times, w)) return false;
          }
          return true;
        }
      },
      event.node);
}

DpEventPtr Scaled(const DpEventPtr& e, double factor) { return e ? ScaleNoise(*e, factor) : nullptr; }

}  // namespace

DpEventPtr Gaussian(double noise_multiplier, double sensitivity, bool discrete) {
  return Make(GaussianEvent{noise_multiplier, sensitivity, discrete});
}
DpEventPtr PoissonSampled(double q, DpEventPtr event) { return Make(PoissonSampledEvent{q, std::move(event)}); }
DpEventPtr FixedSizeSampled(double q, DpEventPtr event) { return Make(FixedSizeSampledEvent{q, std::move(event)}); }
DpEventPtr Shuffled(double q, DpEventPtr event) { return Make(ShuffledEvent{q, std::move(event)}); }
DpEventPtr RandomAllocation(AllocationWindow window, int64_t rounds, DpEventPtr event) {
  return Make(RandomAllocationEvent{window, rounds, std::move(event)});
}
DpEventPtr SelfComposed(DpEventPtr event, int64_t count) { return Make(SelfComposedEvent{std::move(event), count}); }
DpEventPtr Composed(std::vector<DpEventPtr> events) { return Make(ComposedEvent{std::move(events)}); }

DpEventPtr ScheduleEvent(const Schedule& schedule, const AccountantOptions& options) {
  return ScheduleEvent(schedule, options.sampling, options.noise, options.allocation);
}

DpEventPtr ScheduleEvent(const Schedule& schedule, SamplingModel sampling, NoiseModel noise, AllocationWindow window) {
  std::vector<DpEventPtr> groups;
  groups.reserve(schedule.size());
  const bool discrete = noise == NoiseModel::kDiscreteGaussian;
  // No rounds: one empty group keeps the sampler, the noise and the window in the description.
  const double window_rate = window.steps > 0 ? window.participation * static_cast<double>(window.allocations) /
                                                    static_cast<double>(window.steps)
                                              : 1.0;
  const Schedule empty = {{sampling == SamplingModel::kRandomAllocation ? window_rate : 1.0, 1.0, 0}};
  for (const RoundGroup& g : schedule.empty() ? empty : schedule) {
    DpEventPtr gaussian = Gaussian(g.sigma, 1.0, discrete);
    switch (sampling) {
      case SamplingModel::kPoisson:
        groups.push_back(SelfComposed(PoissonSampled(g.q, std::move(gaussian)), g.count));
        break;
      case SamplingModel::kFixedSizeWithoutReplacement:
        groups.push_back(SelfComposed(FixedSizeSampled(g.q, std::move(gaussian)), g.count));
        break;
      case SamplingModel::kShuffle:
        groups.push_back(SelfComposed(Shuffled(g.q, std::move(gaussian)), g.count));
        break;
      case SamplingModel::kRandomAllocation: {
        // Every round's q is the window's participation rate p0 k / m.
        const double rate = window.steps > 0 ? window.participation * static_cast<double>(window.allocations) /
                                                   static_cast<double>(window.steps)
                                             : 0.0;
        if (g.count > 0 && !(std::abs(g.q - rate) <= 1e-9 * rate)) {
          throw ConfigError("random_allocation.q", "every round must have q = p0 k / m = " + std::to_string(rate) +
                                                       " (the window's participation rate), got " + std::to_string(g.q));
        }
        groups.push_back(RandomAllocation(window, g.count, std::move(gaussian)));
        break;
      }
    }
  }
  return Composed(std::move(groups));
}

LoweredEvent Lower(const DpEvent& event) {
  Walk w;
  LoweredEvent out;
  if (!Visit(event, 1, w)) {
    out.unsupported = w.unsupported;
    return out;
  }
  out.ok = true;
  out.sampling = w.sampling.value_or(SamplingModel::kPoisson);
  out.noise = w.noise.value_or(NoiseModel::kGaussian);
  if (w.window) out.allocation = *w.window;
  out.schedule = std::move(w.schedule);
  return out;
}

DpEventPtr ScaleNoise(const DpEvent& event, double factor) {
  ASYNCDP_CHECK(factor > 0.0);
  return std::visit(
      [&](const auto& node) -> DpEventPtr {
        using T = std::decay_t<decltype(node)>;
        if constexpr (std::is_same_v<T, GaussianEvent>) {
          return Gaussian(node.noise_multiplier * factor, node.sensitivity, node.discrete);
        } else if constexpr (std::is_same_v<T, PoissonSampledEvent>) {
          return PoissonSampled(node.q, Scaled(node.event, factor));
        } else if constexpr (std::is_same_v<T, FixedSizeSampledEvent>) {
          return FixedSizeSampled(node.q, Scaled(node.event, factor));
        } else if constexpr (std::is_same_v<T, ShuffledEvent>) {
          return Shuffled(node.q, Scaled(node.event, factor));
        } else if constexpr (std::is_same_v<T, RandomAllocationEvent>) {
          return RandomAllocation(node.window, node.rounds, Scaled(node.event, factor));
        } else if constexpr (std::is_same_v<T, SelfComposedEvent>) {
          return SelfComposed(Scaled(node.event, factor), node.count);
        } else {
          std::vector<DpEventPtr> events;
          events.reserve(node.events.size());
          for (const DpEventPtr& e : node.events) events.push_back(Scaled(e, factor));
          return Composed(std::move(events));
        }
      },
      event.node);
}

}  // namespace asyncdp::accounting
