#include "apps/account_random_allocation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/accounting/account.h"
#include "core/accounting/accountant.h"
#include "core/accounting/dp_event.h"
#include "core/accounting/random_allocation/allocation_pld_lower.h"
#include "core/accounting/random_allocation/random_allocation_accountant.h"
#include "core/accounting/report.h"
#include "core/accounting/shuffle/clones.h"
#include "core/error.h"
#include "sim/allocation_bounds_json.h"
#include "sim/json_number.h"

namespace asyncdp::apps {
namespace {

// Validates everything but sigma (calibration does not take one), and delta unless it is not asked for.
void ValidateWindow(const RandomAllocationCliArgs& a, bool with_delta = true) {
  const std::string& dash = a.option_prefix;
  if (a.steps < 1) throw ConfigError(dash + "steps", "random allocation needs m >= 1 steps per window");
  if (a.allocations < 1 || a.allocations > a.steps) {
    throw ConfigError(dash + "k", "must be in [1, " + dash + "steps]");
  }
  if (a.windows < 1) throw ConfigError(dash + "windows", "must be >= 1");
  if (a.windows > accounting::Accountant::kMaxRounds / a.steps) {
    throw ConfigError(dash + "windows", "steps x windows exceeds 2^53 rounds");
  }
  if (!(a.participation > 0.0 && a.participation <= 1.0)) throw ConfigError(dash + "p0", "must be in (0, 1]");
  if (with_delta && !(a.delta > 0.0 && a.delta < 1.0)) throw ConfigError(dash + "delta", "must be in (0, 1)");
}

void Validate(const RandomAllocationCliArgs& a) {
  ValidateWindow(a);
  accounting::ValidateNoiseMultiplier(a.sigma, a.option_prefix + "sigma");  // positive, finite, in domain
}

// The mechanism: random allocation of the Gaussian randomizer (multiplier sigma) over E windows of m steps.
accounting::DpEventPtr AllocationEvent(const RandomAllocationCliArgs& a, double sigma) {
  return accounting::RandomAllocation({a.steps, a.allocations, a.participation}, a.steps * a.windows,
                                      accounting::Gaussian(sigma));
}

double Rate(const RandomAllocationCliArgs& a) {
  return a.participation * static_cast<double>(a.allocations) / static_cast<double>(a.steps);
}

// The inputs every output starts with.
nlohmann::ordered_json Header(const RandomAllocationCliArgs& a) {
  nlohmann::ordered_json out;
  out["sampling"] = "random_allocation";
  out["steps"] = a.steps;
  out["k"] = a.allocations;
  out["windows"] = a.windows;
  out["p0"] = a.participation;
  return out;
}

nlohmann::ordered_json AllocationSection(const accounting::RandomAllocationAccountant& accountant, double delta,
                                         double seconds) {
  const accounting::RandomAllocationResult& r = accountant.Bounds(delta);  // computed by Account, cached
  const accounting::Assumptions assumptions = accountant.Describe(delta);
  nlohmann::ordered_json section = {
      {"epsilon", sim::OrderedNumber(r.value)},
      {"binding_bound", std::string(accounting::ToString(r.binding_bound))},
      {"binding_direction", std::string(accounting::ToString(r.binding_direction))},
      {"theorem", std::string(accounting::BoundTheorem(r.binding_bound))},
      {"bound", std::string(accounting::ToString(assumptions.bound))},
      {"assumptions", std::string(accounting::kRandomAllocationAssumptions)},
      {"method", assumptions.method},
      {"bounds", sim::AllocationBoundsJson<nlohmann::ordered_json>(r)},
      {"seconds", seconds}};
  return section;
}

// The certified lower bound beside the reported upper one (k = 1 only: there the pair bounded is attained,
// allocation_pld_lower.h). Not a guarantee: it says how far above the truth the guarantee can be.
nlohmann::ordered_json LowerBoundSection(const RandomAllocationCliArgs& a) {
  if (a.allocations != 1) {
    return {{"epsilon", nullptr},
            {"unavailable",
             "k > 1 is bounded through k E instances of 1-out-of-floor(m/k) ([FS] Lemma 3.2), a "
             "pair not known to be attained, so no lower bound on the true epsilon follows"}};
  }
  const auto start = std::chrono::steady_clock::now();
  std::optional<accounting::AllocationPldLower> computed;
  try {
    computed.emplace(a.steps, a.windows, a.sigma, a.participation);
  } catch (const ConfigError& e) {
    return {{"epsilon", nullptr}, {"unavailable", e.what()}};  // the upper bound stands without it
  }
  const accounting::AllocationPldLower& lower = *computed;
  const double epsilon = lower.EpsilonLower(a.delta);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {
      {"epsilon", sim::OrderedNumber(epsilon)},
      {"remove_epsilon", sim::OrderedNumber(lower.RemoveEpsilonLower(a.delta))},
      {"add_epsilon", sim::OrderedNumber(lower.AddEpsilonLower(a.delta))},
      {"bound", "lower_bound"},
      {"method",
       "the true epsilon of this mechanism is at least this: the dominated (pooled) PLD of the worst-case "
       "pair, which a one-dimensional data set attains, composed over the windows (docs/random_allocation.md "
       "§5c); 0 below delta = 1e-9"},
      {"seconds", seconds}};
}

nlohmann::ordered_json PoissonSection(const accounting::Schedule& schedule, double delta) {
  accounting::ReportOptions options;
  options.delta = delta;
  options.gdp = false;
  // The grid of the allocation bounds' own Poisson PLDs: an upper bound at any spacing, and 3-5x faster
  // than the default for the m E rounds compared here (random_allocation.h, CoarsePld).
  options.pld_options = accounting::RandomAllocationOptions::CoarsePld();
  const accounting::PrivacyReport report = accounting::ComputePrivacyReport(schedule, options);
  nlohmann::ordered_json section = {{"q", schedule.front().q}, {"steps", schedule.front().count}};
  if (report.rdp) {
    section["rdp"] = {{"epsilon", sim::OrderedNumber(report.rdp->epsilon)},
                      {"order", report.rdp->order},
                      {"bound", "upper_bound"},
                      {"method", report.rdp->assumptions.method}};
  }
  if (report.pld) {
    section["pld"] = {{"epsilon", sim::OrderedNumber(report.pld->epsilon)},
                      {"discretization", report.pld->discretization},
                      {"bound", "upper_bound"},
                      {"method", report.pld->assumptions.method}};
  }
  for (const auto& [kind, why] : report.unavailable) {
    section[std::string(accounting::ToString(kind))] = {{"epsilon", nullptr}, {"unavailable", why}};
  }
  return section;
}

// One shuffled pass of n = m records, one per step ([FMT21]); only meaningful for E = 1, k = 1.
nlohmann::ordered_json ShuffleSection(const RandomAllocationCliArgs& a) {
  nlohmann::ordered_json section = {{"records", a.steps}};
  if (a.windows != 1 || a.allocations != 1) {
    section["epsilon"] = nullptr;
    section["unavailable"] = "FMT21 bounds one shuffled pass (k = 1, E = 1); composition is not provided";
    return section;
  }
  const accounting::ShuffleGaussianEpsilon s = accounting::ShuffledGaussianEpsilon(a.steps, a.sigma, 2.0, a.delta);
  section["epsilon"] = sim::OrderedNumber(s.numerical);
  section["closed_form_epsilon"] = sim::OrderedNumber(s.closed_form);
  section["no_amplification_epsilon"] = sim::OrderedNumber(s.no_amplification);
  section["local_epsilon"] = sim::OrderedNumber(s.local_epsilon);
  section["local_delta"] = s.local_delta;
  section["neighbors"] = "replace_one";
  section["method"] =
      "Feldman, McMillan, Talwar 2021 Thm. 3.2 (numerical clones pair) + Thm. 3.8 ((eps0, delta0) "
      "randomizers), local sensitivity 2C; every record in exactly one step of a uniformly random order";
  return section;
}

}  // namespace

accounting::DpEventPtr RandomAllocationEvent(const RandomAllocationCliArgs& a) {
  Validate(a);
  return AllocationEvent(a, a.sigma);
}

nlohmann::ordered_json AccountRandomAllocation(const RandomAllocationCliArgs& a) {
  Validate(a);
  const auto start = std::chrono::steady_clock::now();
  accounting::AccountQuery query;
  query.delta = a.delta;
  const accounting::Accounted accounted =
      accounting::Account(*AllocationEvent(a, a.sigma), accounting::AccountantKind::kRandomAllocation, query);
  if (!accounted.available) throw ConfigError(a.option_prefix + "sampling", accounted.reason);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto& allocation = static_cast<const accounting::RandomAllocationAccountant&>(*accounted.composed);
  const accounting::Schedule schedule = {{Rate(a), a.sigma, a.steps * a.windows}};  // Poisson at the same rate

  nlohmann::ordered_json out = Header(a);
  out["sigma"] = a.sigma;
  out["delta"] = a.delta;
  out["neighbors"] = std::string(ToString(NaturalNeighbours(SamplingModel::kRandomAllocation)));
  out["public"] = "m, k, p0, the number of windows and delta are treated as public";
  out["random_allocation"] = AllocationSection(allocation, a.delta, seconds);
  out["random_allocation"]["lower_bound"] = LowerBoundSection(a);
  out["poisson"] = PoissonSection(schedule, a.delta);
  out["shuffle"] = ShuffleSection(a);
  return out;
}

nlohmann::ordered_json RandomAllocationAtEpsilon(const RandomAllocationCliArgs& a, double epsilon) {
  ValidateWindow(a, false);
  accounting::ValidateNoiseMultiplier(a.sigma, a.option_prefix + "sigma");
  if (!(epsilon >= 0.0 && std::isfinite(epsilon))) {
    throw ConfigError(a.option_prefix + "at-epsilon", "must be a finite number >= 0");
  }
  // Through the privacy service on the event, as every other number of the command.
  const accounting::RandomAllocationResult r =
      accounting::AllocationDeltaBounds(*AllocationEvent(a, a.sigma), epsilon);
  nlohmann::ordered_json out = Header(a);
  out["sigma"] = a.sigma;
  out["at_epsilon"] = epsilon;
  out["neighbors"] = std::string(ToString(NaturalNeighbours(SamplingModel::kRandomAllocation)));
  out["public"] = "m, k, p0, the number of windows and epsilon are treated as public";
  out["random_allocation"] = {{"delta", std::min(r.value, 1.0)},
                              {"binding_bound", std::string(accounting::ToString(r.binding_bound))},
                              {"binding_direction", std::string(accounting::ToString(r.binding_direction))},
                              {"theorem", std::string(accounting::BoundTheorem(r.binding_bound))},
                              {"bound", "upper_bound"},
                              {"assumptions", std::string(accounting::kRandomAllocationAssumptions)},
                              {"bounds", sim::AllocationBoundsJson<nlohmann::ordered_json>(r, "delta")}};
  return out;
}

nlohmann::ordered_json CalibrateRandomAllocation(const RandomAllocationCliArgs& a, double epsilon) {
  ValidateWindow(a);
  if (!(epsilon > 0.0 && std::isfinite(epsilon))) throw ConfigError(a.option_prefix + "epsilon", "must be positive");
  const accounting::CalibrationResult r = accounting::Calibrate(
      [&a](double sigma) { return std::vector<accounting::DpEventPtr>{AllocationEvent(a, sigma)}; }, epsilon, a.delta,
      accounting::AccountantKind::kRandomAllocation);
  nlohmann::ordered_json out = Header(a);
  out["epsilon"] = epsilon;
  out["delta"] = a.delta;
  out["neighbors"] = std::string(ToString(NaturalNeighbours(SamplingModel::kRandomAllocation)));
  out["public"] = "m, k, p0, the number of windows and delta are treated as public";
  out["random_allocation"] = {
      {"sigma", r.found ? nlohmann::ordered_json(r.sigma) : nlohmann::ordered_json(nullptr)},
      {"epsilon", r.found ? sim::OrderedNumber(r.epsilon) : nlohmann::ordered_json(nullptr)},
      {"bound", "upper_bound"},
      {"assumptions", std::string(accounting::kRandomAllocationAssumptions)}};
  return out;
}

}  // namespace asyncdp::apps
