#include "core/accounting/random_allocation/random_allocation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include "core/accounting/log_math.h"
#include "core/accounting/random_allocation/add_bound.h"
#include "core/accounting/random_allocation/recursive.h"
#include "core/accounting/random_allocation/remove_rdp.h"
#include "core/accounting/rdp.h"
#include "core/error.h"

namespace asyncdp::accounting {
namespace {

constexpr int kMinOrder = 64;

// Derived quantities shared by every bound.
struct Setting {
  int64_t instance_steps = 1;   // m' = floor(m / k)
  int64_t instances = 1;        // J = k E
  double participation = 1.0;   // p0 as used (1 when k > 1)
  bool single_window = false;   // k = 1 and E = 1: the one-instance bounds apply
  std::string participation_note;
};

Setting MakeSetting(const RandomAllocationParams& p) {
  Setting s;
  s.instance_steps = p.steps / p.allocations;
  s.instances = p.allocations * p.windows;
  s.single_window = p.allocations == 1 && p.windows == 1;
  if (p.allocations == 1) {
    s.participation = p.participation;
  } else if (p.participation < 1.0) {
    s.participation_note = "p0 < 1 ignored (treated as 1) because k > 1: joint abstention is not covered";
  }
  return s;
}

struct RenyiCurve {
  std::vector<double> orders;
  std::vector<double> rdp;  // composed over J instances
};

RenyiCurve ComposedRemoveRdp(const RandomAllocationParams& p, const Setting& s, int max_order) {
  RenyiCurve curve;
  const std::vector<double> log_moments = GaussianLogMoments(p.sigma, s.participation, max_order);
  const std::vector<double> rdp = AllocationRemoveRdp(s.instance_steps, log_moments);
  for (int alpha = 2; alpha <= max_order; ++alpha) {
    curve.orders.push_back(alpha);
    curve.rdp.push_back(static_cast<double>(s.instances) * rdp[static_cast<size_t>(alpha)]);
  }
  return curve;
}

// Renyi remove bound in epsilon form, growing the order range while the optimum is at its top.
AllocationBoundValue RenyiRemoveEpsilon(const RandomAllocationParams& p, const Setting& s, double delta,
                                        const RandomAllocationOptions& o) {
  AllocationBoundValue v{AllocationBound::kRenyiRemove, PrivacyDirection::kRemove, true, kInf, 0,
                         s.participation_note};
  for (int max_order = std::min(kMinOrder, o.max_order);; max_order = std::min(2 * max_order, o.max_order)) {
    const RenyiCurve curve = ComposedRemoveRdp(p, s, max_order);
    const RdpConversion c = RdpToEpsilon(curve.orders, curve.rdp, delta);
    v.value = c.epsilon;
    v.order = static_cast<int>(c.order);
    if (max_order >= o.max_order || c.order < 0.75 * max_order) break;
  }
  return v;
}

AllocationBoundValue RenyiRemoveDelta(const RandomAllocationParams& p, const Setting& s, double epsilon,
                                      const RandomAllocationOptions& o) {
  AllocationBoundValue v{AllocationBound::kRenyiRemove, PrivacyDirection::kRemove, true, 1.0, 0,
                         s.participation_note};
  // delta(alpha) = exp((alpha-1)(rho - eps)) / alpha (1 - 1/alpha)^(alpha-1); grow the range like above.
  for (int max_order = std::min(kMinOrder, o.max_order);; max_order = std::min(2 * max_order, o.max_order)) {
    const RenyiCurve curve = ComposedRemoveRdp(p, s, max_order);
    int best_order = 2;
    double best = kInf;
    for (size_t i = 0; i < curve.orders.size(); ++i) {
      const double a = curve.orders[i];
      const double log_delta =
          (a - 1.0) * (curve.rdp[i] - epsilon) - std::log(a) + (a - 1.0) * std::log1p(-1.0 / a);
      if (log_delta < best) {
        best = log_delta;
        best_order = static_cast<int>(a);
      }
    }
    v.value = std::min(1.0, std::exp(best));
    v.order = best_order;
    if (max_order >= o.max_order || best_order < 0.75 * max_order) break;
  }
  return v;
}

std::string AmGmNote(const RandomAllocationParams& p, const Setting& s) {
  if (!s.single_window && p.participation < 1.0 && p.allocations == 1) {
    return "p0 < 1 not used in this bound (valid: the p0 = 1 pair dominates); it is used for one window only";
  }
  return s.participation_note;
}

bool AmGmUsesParticipation(const Setting& s) { return s.single_window && s.participation < 1.0; }

std::string NotSingleWindow() {
  return "not applicable: [FS] Thm. 4.3 bounds one window with k = 1 (privacy profiles do not compose)";
}

// The best single-instance add-direction bound available (for the recursive bound's tail term).
struct SingleInstanceAdd {
  int64_t steps = 1;
  double sigma = 0.0;
  double participation = 1.0;
  std::shared_ptr<const DecompositionBound> decomposition;  // null when disabled
  double operator()(double eps) const {
    double d = CheckInAddDelta(steps, sigma, participation, eps);
    if (decomposition) d = std::min(d, decomposition->AddDelta(eps));
    return d;
  }
};

// The PLD bound over J instances, one instance's PLD taken from the options' cache when there is one.
AllocationPld InstancePld(const RandomAllocationParams& p, const Setting& s,
                          const RandomAllocationOptions& o) {
  const std::shared_ptr<const AllocationInstance> instance =
      o.pld_cache != nullptr
          ? o.pld_cache->Get(s.instance_steps, p.sigma, s.participation, o.allocation_pld)
          : MakeAllocationInstance(s.instance_steps, p.sigma, s.participation, o.allocation_pld);
  return AllocationPld(*instance, s.instances);
}

// Per direction the smallest applicable value (epsilon or delta: smaller is better for both), then the
// larger of the two directions.
RandomAllocationResult Combine(std::vector<AllocationBoundValue> bounds) {
  RandomAllocationResult r;
  double worst = -kInf;
  for (PrivacyDirection d : {PrivacyDirection::kRemove, PrivacyDirection::kAdd}) {
    double best = kInf;
    AllocationBound best_bound = AllocationBound::kRenyiRemove;
    for (const AllocationBoundValue& b : bounds) {
      if (b.direction == d && b.applicable && b.value < best) {
        best = b.value;
        best_bound = b.bound;
      }
    }
    if (best > worst) {
      worst = best;
      r.binding_direction = d;
      r.binding_bound = best_bound;
    }
  }
  r.value = worst;
  r.bounds = std::move(bounds);
  return r;
}

void ValidateOptions(const RandomAllocationOptions& o) {
  if (o.max_order < 2) throw ConfigError("random_allocation.max_order", "must be >= 2");
  if (o.use_recursive && o.recursive_tail_shares.empty()) {
    throw ConfigError("random_allocation.recursive_tail_shares", "must not be empty");
  }
  for (double share : o.recursive_tail_shares) {
    if (!(share > 0.0 && share < 1.0)) {
      throw ConfigError("random_allocation.recursive_tail_shares",
                        "every share must be in (0, 1), got " + std::to_string(share));
    }
  }
}

}  // namespace

void ValidateRandomAllocationParams(const RandomAllocationParams& p, std::string_view where) {
  const std::string w(where);
  if (p.steps < 1) throw ConfigError(w + ".steps", "must be >= 1, got " + std::to_string(p.steps));
  if (p.allocations < 1 || p.allocations > p.steps) {
    throw ConfigError(w + ".allocations", "must be in [1, steps = " + std::to_string(p.steps) + "], got " +
                                              std::to_string(p.allocations));
  }
  if (p.windows < 1) throw ConfigError(w + ".windows", "must be >= 1, got " + std::to_string(p.windows));
  if (!(p.sigma > 0.0) || !std::isfinite(p.sigma)) {
    throw ConfigError(w + ".sigma", "must be positive and finite, got " + std::to_string(p.sigma));
  }
  if (!(p.participation > 0.0 && p.participation <= 1.0)) {
    throw ConfigError(w + ".participation", "must be in (0, 1], got " + std::to_string(p.participation));
  }
}

std::string_view ToString(PrivacyDirection direction) {
  return direction == PrivacyDirection::kRemove ? "remove" : "add";
}

std::string_view ToString(AllocationBound bound) {
  switch (bound) {
    case AllocationBound::kRenyiRemove: return "renyi_remove";
    case AllocationBound::kAmGmAdd: return "amgm_add";
    case AllocationBound::kDecomposition: return "decomposition";
    case AllocationBound::kRecursive: return "recursive";
    case AllocationBound::kPld:
      return "pld";
  }
  return "?";
}

std::string_view BoundTheorem(AllocationBound bound) {
  switch (bound) {
    case AllocationBound::kRenyiRemove:
      return "[FS] Thm. 4.4 / Cor. 4.6 (exact integer-order RDP of one window), Lemma 3.2 (k > 1), RDP "
             "composition over windows, Lemma A.1 conversion";
    case AllocationBound::kAmGmAdd:
      return "[FS] Thm. 4.5 / Lemma F.3 / Cor. 4.6 (AM-GM), constant multiplied by k E";
    case AllocationBound::kDecomposition:
      return "[FS] Thm. 4.3 (Lemmas E.1, E.2, Claim E.3) with the Poisson PLD accountant";
    case AllocationBound::kRecursive:
      return "[FS] Thm. 4.1 second part (Lemma C.1, Claims C.7, C.12) with the Poisson PLD accountant, "
             "union bound over k E instances";
    case AllocationBound::kPld:
      return "the PLD of one instance of 1-out-of-floor(m/k) allocation by convex-order discretisation "
             "(docs/random_allocation.md), [FS] Lemma 3.2 (k > 1), PLD composition over k E instances";
  }
  return "?";
}

RandomAllocationResult RandomAllocationEpsilon(const RandomAllocationParams& p, double delta,
                                               const RandomAllocationOptions& o) {
  ValidateRandomAllocationParams(p);
  if (!(delta > 0.0 && delta < 1.0)) throw ConfigError("delta", "must be in (0, 1), got " + std::to_string(delta));
  ValidateOptions(o);
  const Setting s = MakeSetting(p);
  std::vector<AllocationBoundValue> bounds;
  bounds.push_back(RenyiRemoveEpsilon(p, s, delta, o));

  AllocationBoundValue am_gm{AllocationBound::kAmGmAdd, PrivacyDirection::kAdd, true, 0.0, 0, AmGmNote(p, s)};
  am_gm.value = AmGmUsesParticipation(s) ? CheckInAddEpsilon(p.steps, p.sigma, s.participation, delta)
                                         : AllocationAddEpsilon(s.instance_steps, s.instances, p.sigma, delta);
  bounds.push_back(am_gm);

  std::shared_ptr<const DecompositionBound> instance_decomposition;
  if (o.use_decomposition) {
    instance_decomposition =
        std::make_shared<DecompositionBound>(s.instance_steps, p.sigma, s.participation, o.decomposition);
    for (PrivacyDirection d : {PrivacyDirection::kRemove, PrivacyDirection::kAdd}) {
      AllocationBoundValue v{AllocationBound::kDecomposition, d, s.single_window, kInf, 0, ""};
      if (s.single_window) {
        v.value = d == PrivacyDirection::kRemove ? instance_decomposition->RemoveEpsilon(delta)
                                                 : instance_decomposition->AddEpsilon(delta);
      } else {
        v.note = NotSingleWindow();
      }
      bounds.push_back(v);
    }
  }
  if (o.use_recursive) {
    RecursiveBoundInputs in;
    in.instance_steps = s.instance_steps;
    in.instances = s.instances;
    in.sigma = p.sigma;
    in.participation = s.participation;
    in.single_instance_add_delta = SingleInstanceAdd{s.instance_steps, p.sigma, s.participation,
                                                     instance_decomposition};
    in.pld = o.pld;
    in.tail_shares = o.recursive_tail_shares;
    const RecursiveEpsilon r = RecursiveAllocationEpsilon(in, delta);
    bounds.push_back({AllocationBound::kRecursive, PrivacyDirection::kRemove, true, r.remove, 0,
                      s.participation_note});
    bounds.push_back({AllocationBound::kRecursive, PrivacyDirection::kAdd, true, r.add, 0,
                      s.participation_note});
  }
  if (o.use_pld) {
    std::optional<AllocationPld> pld;
    std::string why;
    try {
      pld.emplace(InstancePld(p, s, o));
    } catch (const ConfigError& e) {
      why = e.what();  // the other bounds still apply
    }
    for (PrivacyDirection d : {PrivacyDirection::kRemove, PrivacyDirection::kAdd}) {
      AllocationBoundValue v{AllocationBound::kPld,           d, pld.has_value(), 1.0, 0,
                             pld ? s.participation_note : why};
      if (pld) v.value = d == PrivacyDirection::kRemove ? pld->RemoveEpsilon(delta) : pld->AddEpsilon(delta);
      bounds.push_back(v);
    }
  }
  return Combine(std::move(bounds));
}

RandomAllocationResult RandomAllocationDelta(const RandomAllocationParams& p, double epsilon,
                                             const RandomAllocationOptions& o) {
  ValidateRandomAllocationParams(p);
  if (!(epsilon >= 0.0) || !std::isfinite(epsilon)) {
    throw ConfigError("epsilon", "must be >= 0 and finite, got " + std::to_string(epsilon));
  }
  ValidateOptions(o);
  const Setting s = MakeSetting(p);
  std::vector<AllocationBoundValue> bounds;
  bounds.push_back(RenyiRemoveDelta(p, s, epsilon, o));

  AllocationBoundValue am_gm{AllocationBound::kAmGmAdd, PrivacyDirection::kAdd, true, 0.0, 0, AmGmNote(p, s)};
  am_gm.value = AmGmUsesParticipation(s) ? CheckInAddDelta(p.steps, p.sigma, s.participation, epsilon)
                                         : AllocationAddDelta(s.instance_steps, s.instances, p.sigma, epsilon);
  bounds.push_back(am_gm);

  std::shared_ptr<const DecompositionBound> instance_decomposition;
  if (o.use_decomposition) {
    instance_decomposition =
        std::make_shared<DecompositionBound>(s.instance_steps, p.sigma, s.participation, o.decomposition);
    for (PrivacyDirection d : {PrivacyDirection::kRemove, PrivacyDirection::kAdd}) {
      AllocationBoundValue v{AllocationBound::kDecomposition, d, s.single_window, 1.0, 0, ""};
      if (s.single_window) {
        v.value = d == PrivacyDirection::kRemove ? instance_decomposition->RemoveDelta(epsilon)
                                                 : instance_decomposition->AddDelta(epsilon);
      } else {
        v.note = NotSingleWindow();
      }
      bounds.push_back(v);
    }
  }
  if (o.use_recursive) {
    RecursiveBoundInputs in;
    in.instance_steps = s.instance_steps;
    in.instances = s.instances;
    in.sigma = p.sigma;
    in.participation = s.participation;
    in.single_instance_add_delta = SingleInstanceAdd{s.instance_steps, p.sigma, s.participation,
                                                     instance_decomposition};
    in.pld = o.pld;
    in.tail_shares = o.recursive_tail_shares;
    const RecursiveDelta r = RecursiveAllocationDelta(in, epsilon);
    bounds.push_back({AllocationBound::kRecursive, PrivacyDirection::kRemove, true, r.remove, 0,
                      s.participation_note});
    bounds.push_back({AllocationBound::kRecursive, PrivacyDirection::kAdd, true, r.add, 0,
                      s.participation_note});
  }
  if (o.use_pld) {
    std::optional<AllocationPld> pld;
    std::string why;
    try {
      pld.emplace(InstancePld(p, s, o));
    } catch (const ConfigError& e) {
      why = e.what();  // the other bounds still apply
    }
    for (PrivacyDirection d : {PrivacyDirection::kRemove, PrivacyDirection::kAdd}) {
      AllocationBoundValue v{AllocationBound::kPld,           d, pld.has_value(), 1.0, 0,
                             pld ? s.participation_note : why};
      if (pld) v.value = d == PrivacyDirection::kRemove ? pld->RemoveDelta(epsilon) : pld->AddDelta(epsilon);
      bounds.push_back(v);
    }
  }
  return Combine(std::move(bounds));
}

Schedule PoissonComparisonSchedule(const RandomAllocationParams& p) {
  ValidateRandomAllocationParams(p);
  const double rate = p.participation * static_cast<double>(p.allocations) / static_cast<double>(p.steps);
  return {{rate, p.sigma, p.steps * p.windows}};
}

}  // namespace asyncdp::accounting
