#include "core/accounting/account.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <utility>

#include "core/accounting/log_math.h"
#include "core/accounting/make_accountant.h"
#include "core/accounting/random_allocation/random_allocation_accountant.h"
#include "core/error.h"

namespace asyncdp::accounting {
namespace {

AccountantOptions OptionsOf(const LoweredEvent& lowered, const AccountingPrecision& precision) {
  AccountantOptions options;
  options.sampling = lowered.sampling;
  options.noise = lowered.noise;
  options.allocation = lowered.allocation;
  options.rdp = precision.rdp;
  options.pld = precision.pld;
  return options;
}

LoweredEvent LowerOrThrow(const DpEvent& event) {
  LoweredEvent lowered = Lower(event);
  if (!lowered.ok) throw ConfigError("event", lowered.unsupported);
  return lowered;
}

// A composed accountant for the event, or the reason there is none.
std::unique_ptr<Accountant> Compose(const LoweredEvent& lowered, AccountantKind kind, const AccountingPrecision& precision,
                                    std::string& reason) {
  std::unique_ptr<Accountant> accountant = MakeAccountant(kind, OptionsOf(lowered, precision));
  reason = accountant->Limitation();
  if (!reason.empty()) return nullptr;
  accountant->AddSchedule(lowered.schedule);
  return accountant;
}

void RequireDelta(double delta) {
  if (!(delta > 0.0 && delta < 1.0)) throw ConfigError("delta", "must be in (0, 1), got " + std::to_string(delta));
}

}  // namespace

std::string ApplicableLimitation(const DpEvent& event, AccountantKind kind) {
  const LoweredEvent lowered = Lower(event);
  if (!lowered.ok) return lowered.unsupported;
  return MakeAccountant(kind, OptionsOf(lowered, {}))->Limitation();
}

Accounted Account(const DpEvent& event, AccountantKind kind, const AccountQuery& query) {
  RequireDelta(query.delta);
  Accounted out;
  out.kind = kind;
  const LoweredEvent lowered = Lower(event);
  if (!lowered.ok) {
    out.reason = lowered.unsupported;
    return out;
  }
  ValidateSchedule(lowered.schedule);
  AccountingPrecision precision = query.precision;
  precision.pld.compute_lower_bound = precision.pld.compute_lower_bound && query.pld_lower_bound;
  std::unique_ptr<Accountant> accountant = MakeAccountant(kind, OptionsOf(lowered, precision));
  out.bound = accountant->bound();
  out.reason = accountant->Limitation();
  if (!out.reason.empty()) return out;
  try {
    accountant->AddSchedule(lowered.schedule);
    out.result = accountant->Epsilon(query.delta);
    if (query.at_epsilon) out.delta_at_epsilon = std::clamp(accountant->Delta(*query.at_epsilon), 0.0, 1.0);
  } catch (const ConfigError& e) {
    // The accountant's own limits (e.g. PLD beyond 2^30 rounds); delta and the rounds were checked.
    out.reason = e.what();
    return out;
  }
  out.available = true;
  out.assumptions = accountant->Describe(query.delta);
  out.composed = std::move(accountant);
  return out;
}

std::vector<Accounted> AccountAll(const DpEvent& event, std::span<const AccountantKind> kinds,
                                  const AccountQuery& query) {
  std::vector<Accounted> out;
  out.reserve(kinds.size());
  for (const AccountantKind kind : kinds) out.push_back(Account(event, kind, query));
  return out;
}

double Delta(const DpEvent& event, AccountantKind kind, double epsilon, const AccountingPrecision& precision) {
  std::string reason;
  const std::unique_ptr<Accountant> accountant = Compose(LowerOrThrow(event), kind, precision, reason);
  if (!accountant) throw ConfigError(std::string(ToString(kind)), reason);
  return accountant->Delta(epsilon);
}

RandomAllocationResult AllocationBounds(const DpEvent& event, double delta) {
  const LoweredEvent lowered = LowerOrThrow(event);
  RandomAllocationAccountant accountant(OptionsOf(lowered, {}));
  if (const std::string why = accountant.Limitation(); !why.empty()) throw ConfigError("random_allocation", why);
  accountant.AddSchedule(lowered.schedule);
  return accountant.Bounds(delta);
}

RandomAllocationResult AllocationDeltaBounds(const DpEvent& event, double epsilon) {
  const LoweredEvent lowered = LowerOrThrow(event);
  RandomAllocationAccountant accountant(OptionsOf(lowered, {}));
  if (const std::string why = accountant.Limitation(); !why.empty())
    throw ConfigError("random_allocation", why);
  accountant.AddSchedule(lowered.schedule);
  return accountant.DeltaBounds(epsilon);
}

EventFamily ScaledFamily(std::vector<DpEventPtr> unit) {
  return [unit = std::move(unit)](double sigma) {
    std::vector<DpEventPtr> scaled;
    scaled.reserve(unit.size());
    for (const DpEventPtr& e : unit) scaled.push_back(ScaleNoise(*e, sigma));
    return scaled;
  };
}

namespace {

// MemoKey spells out every field of the options; a new field must be added there.
static_assert(sizeof(PldOptions) == 40 && sizeof(AllocationWindow) == 24, "a new option must join MemoKey");

void AppendHex(std::string& key, double value) {
  char buffer[40];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::hex).ptr;
  key.append(buffer, end);
  key += ',';
}

void AppendInt(std::string& key, int64_t value) {
  key += std::to_string(value);
  key += ',';
}

// Everything about a lowered event but its q's (members that differ only in q are compared by them).
std::string ShapeKey(const LoweredEvent& lowered) {
  std::string key;
  AppendInt(key, static_cast<int64_t>(lowered.sampling));
  AppendInt(key, static_cast<int64_t>(lowered.noise));
  AppendInt(key, lowered.allocation.steps);
  AppendInt(key, lowered.allocation.allocations);
  AppendHex(key, lowered.allocation.participation);
  key += '|';
  for (const RoundGroup& g : lowered.schedule) {
    AppendHex(key, g.sigma);
    AppendInt(key, g.count);
  }
  return key;
}

std::string MemoKey(const LoweredEvent& lowered, AccountantKind kind, double delta, const AccountingPrecision& p) {
  std::string key = ShapeKey(lowered);
  key += '|';
  for (const RoundGroup& g : lowered.schedule) AppendHex(key, g.q);
  key += '|';
  AppendInt(key, static_cast<int64_t>(kind));
  AppendHex(key, delta);
  AppendHex(key, p.pld.value_discretization);
  AppendHex(key, p.pld.relative_discretization);
  AppendInt(key, p.pld.max_grid_points);
  AppendHex(key, p.pld.tail_mass);
  AppendInt(key, p.pld.compute_lower_bound ? 1 : 0);
  AppendInt(key, p.pld.max_log2_fft_size);
  key += '|';
  for (double order : p.rdp.orders) AppendHex(key, order);
  return key;
}

// The members a calibration composes while it searches: among members with the same rounds but for their
// q's (ShapeKey), one whose every q is the largest of them dominates the others. Poisson or fixed-size
// rounds at rate q' <= q are the rounds at rate q followed by a further subsampling at q'/q, i.e. the pair
// ((1 - r) Q + r P, Q) with r = q'/q, and the hockey-stick divergence is jointly convex, so the dominated
// member's true epsilon is never the larger. Random allocation is left alone (its q is not a rate).
std::vector<bool> SearchMembers(const std::vector<LoweredEvent>& lowered) {
  std::vector<bool> keep(lowered.size(), true);
  std::map<std::string, std::vector<size_t>> buckets;
  for (size_t i = 0; i < lowered.size(); ++i) {
    if (lowered[i].sampling != SamplingModel::kRandomAllocation) buckets[ShapeKey(lowered[i])].push_back(i);
  }
  for (const auto& [shape, members] : buckets) {
    if (members.size() < 2) continue;
    const Schedule& first = lowered[members.front()].schedule;
    std::vector<double> largest(first.size(), 0.0);
    for (size_t i : members) {
      for (size_t g = 0; g < largest.size(); ++g) largest[g] = std::max(largest[g], lowered[i].schedule[g].q);
    }
    for (size_t i : members) {
      bool dominates = true;
      for (size_t g = 0; g < largest.size() && dominates; ++g) dominates = lowered[i].schedule[g].q == largest[g];
      if (!dominates) continue;
      for (size_t j : members) keep[j] = j == i;
      break;
    }
  }
  return keep;
}

// The family with every random-allocation schedule read as Poisson sampling at its rounds' rate p0 k / m
// (the schedule Lower gives it): a starting point for the random-allocation search, never an account.
EventFamily PoissonTwins(const EventFamily& family) {
  return [family](double sigma) {
    std::vector<DpEventPtr> twins;
    for (const DpEventPtr& e : family(sigma)) {
      const LoweredEvent lowered = LowerOrThrow(*e);
      twins.push_back(ScheduleEvent(lowered.schedule, SamplingModel::kPoisson, lowered.noise));
    }
    return twins;
  };
}

struct Search {
  double relative_tolerance = CalibrationPolicy::kRelativeTolerance;
  double sigma_min = CalibrationPolicy::kSigmaMin;
  double sigma_max = CalibrationPolicy::kSigmaMax;
  bool prune = true;  // compose only the members SearchMembers keeps (then check all at the answer)
};

CalibrationResult Bisect(const EventFamily& family, double epsilon, double delta, AccountantKind kind,
                         const AccountingPrecision& given, const Search& search, EpsilonMemo& memo) {
  AccountingPrecision precision = given;
  precision.pld.compute_lower_bound = false;  // only the upper bound certifies
  // The largest epsilon over the family's events at sigma (+inf where the accountant cannot represent
  // it, e.g. a PLD grid beyond its limits: never certified, so the search moves on). `all`: every member,
  // not only those SearchMembers keeps.
  bool pruned = false;
  auto worst = [&](double sigma, bool all) {
    const std::vector<DpEventPtr> members = family(sigma);
    std::vector<LoweredEvent> lowered;
    lowered.reserve(members.size());
    for (const DpEventPtr& e : members) lowered.push_back(LowerOrThrow(*e));
    const std::vector<bool> keep = all || !search.prune ? std::vector<bool>(members.size(), true) : SearchMembers(lowered);
    double eps = 0.0;
    for (size_t i = 0; i < members.size(); ++i) {
      if (!keep[i]) {
        pruned = true;
        continue;
      }
      for (const RoundGroup& g : lowered[i].schedule) {
        if (!(g.sigma > 0.0) || !std::isfinite(g.sigma)) return kInf;
      }
      if (std::string why = MakeAccountant(kind, OptionsOf(lowered[i], precision))->Limitation(); !why.empty()) {
        throw ConfigError(std::string(ToString(kind)), why);
      }
      try {
        eps = std::max(eps, memo.Epsilon(*members[i], kind, delta, precision));
      } catch (const ConfigError&) {
        return kInf;
      }
    }
    return eps;
  };
  // Every member at the sigma the pruned search found; if one is above the target after all (the members'
  // grids differ, so the accountant's numbers need not order as the true epsilons do), search with all.
  auto confirmed = [&](CalibrationResult r) {
    if (!r.found || !pruned) return r;
    const double all = worst(r.sigma, true);
    if (all <= epsilon) return CalibrationResult{r.sigma, all, true};
    Search everyone = search;
    everyone.prune = false;
    return Bisect(family, epsilon, delta, kind, given, everyone, memo);
  };
  CalibrationResult result;
  // Start near the answer: a PLD composition at a small sigma is expensive (heavy-tailed rounds need long
  // grids), so the PLD search starts from the GDP estimate (a closed form; close to the PLD answer for
  // DP-SGD schedules). Bracket [lo, hi] with eps(lo) > target >= eps(hi) by factors of `step`.
  // Random allocation starts from the GDP estimate of its Poisson twin at rate p0 k / m: the allocation's
  // epsilon is close to (mostly below) that of Poisson sampling at the same expected participation
  // ([FS] §1; docs/random_allocation.md §8), and one window's PLD at a small sigma is the costliest
  // evaluation of the search (m = 1000, E = 100, eps = 3: 0.37 s at sigma = 0.5 against 0.1 s near the
  // answer, which the search from 1 by halving visits).
  double start = 1.0, step = 2.0, first_step = 0.0;  // first_step 0: the first step is `step`
  if (kind == AccountantKind::kPld || kind == AccountantKind::kRandomAllocation) {
    Search rough = search;
    rough.relative_tolerance = 1e-2;
    EpsilonMemo gdp_memo;
    const EventFamily estimated = kind == AccountantKind::kPld ? family : PoissonTwins(family);
    CalibrationResult guess;
    try {
      guess = Bisect(estimated, epsilon, delta, AccountantKind::kGdp, precision, rough, gdp_memo);
    } catch (const ConfigError&) {
      guess.found = false;  // no estimate (the twin has no GDP account): start from 1 as before
    }
    if (guess.found) {
      start = guess.sigma;
      step = 1.25;
      // The twin's estimate is within a few % of the allocation's answer where the windows are long
      // (m = 1000, E = 100: 1% at eps = 3, 4.5% at eps = 8): a first step of 5% brackets it with one
      // composition near the answer instead of one 25% away.
      if (kind == AccountantKind::kRandomAllocation) first_step = 1.05;
    }
  }
  // The bracket's first step is first_step (when set), every later one `step`.
  const auto next_step = [&] {
    const double first = std::exchange(first_step, 0.0);
    return first > 0.0 ? first : step;
  };
  double hi = std::clamp(start, search.sigma_min, search.sigma_max);
  double eps_hi = worst(hi, false);
  double lo = hi;
  double eps_lo = eps_hi;
  // Up from a start above the target (the last point passed is the bracket's lower end), else down.
  while (eps_hi > epsilon) {
    if (hi >= search.sigma_max) return result;  // not found
    lo = hi;
    eps_lo = eps_hi;
    hi = std::min(next_step() * hi, search.sigma_max);
    eps_hi = worst(hi, false);
  }
  while (!(eps_lo > epsilon)) {
    if (lo <= search.sigma_min) return confirmed({lo, eps_lo, true});  // even sigma_min suffices
    hi = lo;
    eps_hi = eps_lo;
    lo = std::max(lo / next_step(), search.sigma_min);
    eps_lo = worst(lo, false);
  }
  // Shrink [lo, hi] to the tolerance. ε(σ) is smooth and monotone, nearly a power law, so a false-position
  // step in (log σ, log ε) lands close to the answer. Plain false position keeps one end of the bracket
  // fixed and then converges only linearly (random allocation, m = 1000, E = 100, ε = 3: 12 compositions
  // from [0.5, 1]); the Anderson-Björck weighting of the end that stays restores superlinear convergence
  // (6 compositions; Poisson RDP/PLD searches 5-9 -> 5-8). Once two estimates agree, two probes at
  // (1 ± 0.45 tol) × the estimate close the bracket. Every step keeps ε(lo) > target ≥ ε(hi); a point
  // outside the bracket, an infinite ε, or a search that has not closed in 40 steps bisects instead.
  const double log_target = std::log(epsilon);
  const double half = 0.45 * search.relative_tolerance;
  double previous = std::numeric_limits<double>::quiet_NaN();
  double fa = std::log(eps_lo) - log_target, fb = std::log(eps_hi) - log_target;  // weighted
  int moved_last = 0;  // -1: lo moved at the last step, +1: hi, 0: neither yet
  // Anderson-Björck weight for the end that stays: 1 - f(x)/f(moved end), or 1/2 when that is not positive.
  const auto weight = [](double f_new, double f_old) {
    const double m = 1.0 - f_new / f_old;
    return m > 0.0 && std::isfinite(m) ? m : 0.5;
  };
  for (int step_count = 0; hi / lo - 1.0 > search.relative_tolerance; ++step_count) {
    double x = std::sqrt(lo * hi);
    if (step_count < 40 && std::isfinite(fa) && std::isfinite(fb) && fa > 0.0 && fb <= 0.0) {
      const double a = std::log(lo), b = std::log(hi);
      const double estimate = std::exp(a - fa * (b - a) / (fb - fa));
      if (estimate > lo && estimate < hi) {
        x = estimate;
        if (std::fabs(estimate / previous - 1.0) < 0.5 * half) {
          // Converged: probe beside the estimate, on the side of the farther end of the bracket.
          const double up = estimate * (1.0 + half), down = estimate * (1.0 - half);
          const bool raise_lo = std::log(estimate / lo) > std::log(hi / estimate);
          x = raise_lo ? (down > lo ? down : up) : (up < hi ? up : down);
        }
        previous = estimate;
      }
    }
    const double eps_x = worst(x, false);
    const double fx = std::log(eps_x) - log_target;
    if (eps_x <= epsilon) {
      if (moved_last == 1) fa *= weight(fx, fb);
      hi = x;
      eps_hi = eps_x;
      fb = fx;
      moved_last = 1;
    } else {
      if (moved_last == -1) fb *= weight(fx, fa);
      lo = x;
      eps_lo = eps_x;
      fa = fx;
      moved_last = -1;
    }
  }
  return confirmed({hi, eps_hi, true});
}

}  // namespace

double EpsilonMemo::Epsilon(const DpEvent& event, AccountantKind kind, double delta,
                            const AccountingPrecision& precision) {
  const LoweredEvent lowered = LowerOrThrow(event);
  std::string key = MemoKey(lowered, kind, delta, precision);
  if (const auto it = values_.find(key); it != values_.end()) return it->second;
  std::string reason;
  const std::unique_ptr<Accountant> accountant = Compose(lowered, kind, precision, reason);
  if (!accountant) throw ConfigError(std::string(ToString(kind)), reason);
  const double eps = accountant->Epsilon(delta).epsilon;
  values_.emplace(std::move(key), eps);
  return eps;
}

CalibrationResult Calibrate(const EventFamily& family, double epsilon, double delta, AccountantKind kind,
                            const AccountingPrecision& precision, EpsilonMemo* memo) {
  if (!(epsilon > 0.0) || !std::isfinite(epsilon)) {
    throw ConfigError("calibration.epsilon", "must be a positive finite number");
  }
  if (!(delta > 0.0 && delta < 1.0)) throw ConfigError("calibration.delta", "must be in (0, 1)");
  for (const DpEventPtr& e : family(1.0)) {
    const LoweredEvent lowered = LowerOrThrow(*e);
    ValidateSchedule(lowered.schedule, "calibration.schedule");
    const std::string limitation = MakeAccountant(kind, OptionsOf(lowered, precision))->Limitation();
    if (!limitation.empty()) throw ConfigError(std::string(ToString(kind)), limitation);
  }
  EpsilonMemo own;
  return Bisect(family, epsilon, delta, kind, precision, Search{}, memo != nullptr ? *memo : own);
}

int64_t RoundsWithinBudget(const std::function<DpEventPtr(int64_t)>& prefix, int64_t total, double budget,
                           double delta, AccountantKind kind, const AccountingPrecision& given, EpsilonMemo* memo) {
  EpsilonMemo own;
  EpsilonMemo& remembered = memo != nullptr ? *memo : own;
  AccountingPrecision precision = given;
  precision.pld.compute_lower_bound = false;  // only the upper bound certifies
  if (!(budget > 0.0)) throw ConfigError("budget", "must be positive (or +inf for none)");
  RequireDelta(delta);
  if (total < 0) throw ConfigError("budget.rounds", "must be >= 0");
  if (std::isinf(budget) || total == 0) return total;
  auto fits = [&](int64_t rounds) {
    const DpEventPtr event = prefix(rounds);
    ValidateSchedule(LowerOrThrow(*event).schedule, "budget.schedule");
    return remembered.Epsilon(*event, kind, delta, precision) <= budget;
  };
  if (fits(total)) return total;
  // Invariant: `lo` rounds certified (0 rounds release nothing), `hi` rounds not.
  int64_t lo = 0;
  int64_t hi = total;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace asyncdp::accounting
