// A privacy mechanism as data, in the spirit of dp_accounting's DpEvent: what one protected unit (a
// record of a client, or a whole client at the user level) is exposed to, described once, so that every
// epsilon of the tool is a function of it — Account(event, accountant, delta) in core/accounting/account.h
// — and every reduction lives here, beside the mechanism it belongs to, not in a caller.
//
//   Gaussian(σ, Δ)              one release of a query of L2 sensitivity Δ (in units of the clip norm C)
//                               plus N(0, σ² C² I); `discrete` = secure noise (lattice + discrete Gaussian,
//                               σ the effective multiplier; docs/theory.md §7).
//   PoissonSampled(q, e)        e on a batch that holds each record independently with probability q
//                               (add/remove neighbours).
//   FixedSizeSampled(q, e)      e on a fixed-size batch drawn without replacement, s = qN (replace-one
//                               neighbours: the dominating pair of sensitivity 2 is inside the accountants).
//   Shuffled(q, e)              e on a batch of a shuffled epoch (replace-one; every record once per epoch:
//                               the accountants charge one full-batch release per started epoch).
//   RandomAllocation(m, k, p0, rounds, e)
//                               each record takes part in a window with probability p0 and then joins k of its
//                               m steps, uniformly; `rounds` steps in all, a started window charged whole
//                               (Feldman & Shenfeld; docs/random_allocation.md).
//   SelfComposed(e, count)      e repeated `count` times.
//   Composed(e_1, ..., e_n)     the releases one after another (composition; the order is kept for prefixes).
//
// Reductions owned by events: a replace-one Gaussian (the one-client check-in reduction, sensitivity 2C) is
// Gaussian(σ, 2), accounted at multiplier σ/2; a user-level round is PoissonSampled(1, ...) (every round of a
// client is seen). Which accountants apply is a property of the event (ApplicableLimitation in account.h):
// random allocation only by its own accountant, secure noise only by RDP.
//
// An event lowers to what the accountant families compose (Lower): one sampling model, one noise model, and
// a schedule of (q, σ/Δ, count) groups. Events that mix sampling models or noise models in one composition
// have no accountant here: Lower reports why (no silent guess).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "core/accounting/accountant.h"
#include "core/accounting/schedule.h"
#include "core/privacy_assumptions.h"

namespace asyncdp::accounting {

struct DpEvent;
using DpEventPtr = std::shared_ptr<const DpEvent>;

struct GaussianEvent {
  double noise_multiplier = 0.0;  // σ: noise N(0, σ² C² I)
  double sensitivity = 1.0;       // Δ in units of C (2: replace-one of a single released vector)
  bool discrete = false;          // secure noise (lattice + discrete Gaussian): only RDP accounts it
};
struct PoissonSampledEvent {
  double q = 1.0;
  DpEventPtr event;
};
struct FixedSizeSampledEvent {
  double q = 1.0;
  DpEventPtr event;
};
struct ShuffledEvent {
  double q = 1.0;
  DpEventPtr event;
};
struct RandomAllocationEvent {
  AllocationWindow window;  // m, k, p0
  int64_t rounds = 0;       // steps in all (E windows: E m)
  DpEventPtr event;         // the per-step randomizer (a Gaussian)
};
struct SelfComposedEvent {
  DpEventPtr event;
  int64_t count = 1;
};
struct ComposedEvent {
  std::vector<DpEventPtr> events;
};

struct DpEvent {
  std::variant<GaussianEvent, PoissonSampledEvent, FixedSizeSampledEvent, ShuffledEvent, RandomAllocationEvent,
               SelfComposedEvent, ComposedEvent>
      node;
};

// Builders.
DpEventPtr Gaussian(double noise_multiplier, double sensitivity = 1.0, bool discrete = false);
DpEventPtr PoissonSampled(double q, DpEventPtr event);
DpEventPtr FixedSizeSampled(double q, DpEventPtr event);
DpEventPtr Shuffled(double q, DpEventPtr event);
DpEventPtr RandomAllocation(AllocationWindow window, int64_t rounds, DpEventPtr event);
DpEventPtr SelfComposed(DpEventPtr event, int64_t count);
DpEventPtr Composed(std::vector<DpEventPtr> events);

// A DP-SGD schedule as an event: Composed(SelfComposed(Sampled_{sampling}(q, Gaussian(σ, 1, noise)), count)
// for each group, in order). kRandomAllocation: each group is RandomAllocation(window, count, Gaussian(σ)),
// every q being the window's rate p0 k / m.
DpEventPtr ScheduleEvent(const Schedule& schedule, SamplingModel sampling, NoiseModel noise = NoiseModel::kGaussian,
                         AllocationWindow window = {});
// The same with the sampler, noise and window of a run's accountant options (the one way the run's
// callers — privacy setup, proactive phases, population report — describe a schedule).
DpEventPtr ScheduleEvent(const Schedule& schedule, const AccountantOptions& options);

// What the accountant families compose for an event.
struct LoweredEvent {
  bool ok = false;
  std::string unsupported;  // why the event has no accountant here (when !ok)
  SamplingModel sampling = SamplingModel::kPoisson;
  NoiseModel noise = NoiseModel::kGaussian;
  AllocationWindow allocation;  // random allocation only
  Schedule schedule;            // (q, σ/Δ, count) groups, in order (not compacted)
};
LoweredEvent Lower(const DpEvent& event);

// The same event with every Gaussian's noise multiplier multiplied by `factor` (> 0): the family a
// calibration searches over (σ ↦ event with σ·profile).
DpEventPtr ScaleNoise(const DpEvent& event, double factor);

}  // namespace asyncdp::accounting
