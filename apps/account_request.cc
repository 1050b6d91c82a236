// What `asyncdp account` computes from an AccountRequest (account_request.h): the JSON object of
// account_command.cc's header, for the CLI and the Python module alike.
#include "apps/account_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "apps/account_random_allocation.h"
#include "core/accounting/account.h"
#include "core/accounting/accountant.h"
#include "core/accounting/dp_event.h"
#include "core/accounting/pld/pld.h"
#include "core/accounting/privacy_curve.h"
#include "core/accounting/report.h"
#include "core/error.h"
#include "sim/json_number.h"

namespace asyncdp::apps {
namespace {

using accounting::AccountantKind;

std::vector<AccountantKind> RequestedAccountants(const std::string& name, const std::string& key) {
  if (name == "all") return {AccountantKind::kRdp, AccountantKind::kPld, AccountantKind::kGdp};
  return {accounting::ParseAccountantKind(name, key)};
}

// An unbounded epsilon (sigma -> 0) is written as null.
void AddAssumptions(nlohmann::ordered_json& section, const accounting::Assumptions& a) {
  section["bound"] = std::string(accounting::ToString(a.bound));
  section["method"] = a.method;
}

nlohmann::ordered_json Calibrate(const AccountRequest& args, int64_t steps, SamplingModel sampling,
                                 const std::vector<AccountantKind>& accountants, bool requested_alone) {
  nlohmann::ordered_json out;
  const accounting::EventFamily family = accounting::ScaledFamily(
      {accounting::ScheduleEvent({accounting::RoundGroup{*args.q, 1.0, steps}}, sampling)});
  for (AccountantKind kind : accountants) {
    nlohmann::ordered_json section;
    try {
      const accounting::CalibrationResult r = accounting::Calibrate(family, *args.epsilon, args.delta, kind);
      section["sigma"] = r.found ? nlohmann::ordered_json(r.sigma) : nlohmann::ordered_json(nullptr);
      section["epsilon"] = r.found ? nlohmann::ordered_json(r.epsilon) : nlohmann::ordered_json(nullptr);
    } catch (const ConfigError& e) {
      if (requested_alone) throw;
      section["sigma"] = nullptr;
      section["unavailable"] = e.what();
    }
    section["bound"] = kind == AccountantKind::kGdp ? "approximation" : "upper_bound";
    out[std::string(accounting::ToString(kind))] = std::move(section);
  }
  return out;
}

// --curve: every requested accountant's whole curve (core/accounting/privacy_curve.h), from the event of
// the schedule; an accountant that cannot account it says why.
nlohmann::ordered_json CurveJson(const AccountRequest& args, const accounting::DpEvent& event,
                                 const std::vector<AccountantKind>& accountants) {
  const std::vector<double> deltas =
      args.curve_deltas.empty() ? accounting::DefaultCurveDeltas() : args.curve_deltas;
  const std::vector<double> alphas =
      args.curve_alphas.empty() ? accounting::DefaultTradeoffAlphas() : args.curve_alphas;
  accounting::AccountQuery query;
  query.delta = *std::min_element(deltas.begin(), deltas.end());
  query.pld_lower_bound = false;
  nlohmann::ordered_json out;
  for (AccountantKind kind : accountants) {
    const std::string name(accounting::ToString(kind));
    const accounting::Accounted accounted = accounting::Account(event, kind, query);
    if (!accounted.available) {
      out[name] = {{"unavailable", accounted.reason}};
      continue;
    }
    // Random allocation's delta(eps) takes every bound at each point (4-20 ms): a quarter of the profile.
    const int profile = kind == AccountantKind::kRandomAllocation ? accounting::kTradeoffProfilePoints / 4
                                                                  : accounting::kTradeoffProfilePoints;
    const accounting::PrivacyCurve curve =
        accounting::CurveOf(*accounted.composed, deltas, args.curve_epsilons, alphas, profile);
    nlohmann::ordered_json section;
    section["bound"] = std::string(accounting::ToString(accounted.bound));
    nlohmann::ordered_json eps = nlohmann::ordered_json::array(), del = nlohmann::ordered_json::array(),
                           trade = nlohmann::ordered_json::array();
    for (const auto& p : curve.epsilon_of_delta)
      eps.push_back({{"delta", p.x}, {"epsilon", sim::OrderedNumber(p.y)}});
    for (const auto& p : curve.delta_of_epsilon) del.push_back({{"epsilon", p.x}, {"delta", p.y}});
    for (const auto& p : curve.tradeoff) trade.push_back({{"alpha", p.x}, {"beta", p.y}});
    section["epsilon_of_delta"] = std::move(eps);
    section["delta_of_epsilon"] = std::move(del);
    section["tradeoff"] = std::move(trade);
    section["tradeoff_profile_points"] = curve.profile_points;
    section["tradeoff_is"] = accounted.bound == accounting::BoundKind::kUpperBound
                                 ? "a lower bound on the type-II error of any test at type-I error alpha"
                                 : "an approximation (this accountant's epsilon is not a bound)";
    out[name] = std::move(section);
  }
  return out;
}

// sampling = random_allocation: the window (steps = m, k, windows, p0) with sigma or a target epsilon.
nlohmann::ordered_json RandomAllocationJson(const AccountRequest& args) {
  const std::string& dash = args.option_prefix;
  const std::string takes = "takes " + dash + "steps (m), " + dash + "k, " + dash + "windows, " + dash +
                            "p0, " + dash + "sigma (or " + dash + "epsilon) and " + dash + "delta";
  if (args.q || args.schedule || (args.accountant != "all" && args.accountant != "random_allocation")) {
    throw ConfigError(dash + "sampling random_allocation",
                      takes + "; not " + dash + "q, " + dash + "schedule or another " + dash +
                          "accountant (q = p0 k / m; the random-allocation bounds account it)");
  }
  if (!args.steps || args.sigma.has_value() == args.epsilon.has_value()) {
    throw ConfigError(dash + "sampling random_allocation", "needs " + dash + "steps (m) and exactly one of " +
                                                               dash + "sigma / " + dash + "epsilon");
  }
  RandomAllocationCliArgs a;
  a.steps = *args.steps;
  a.allocations = args.allocations.value_or(1);
  a.windows = args.windows.value_or(1);
  a.participation = args.participation.value_or(1.0);
  a.sigma = args.sigma.value_or(0.0);
  a.delta = args.delta;
  a.option_prefix = dash;
  // The random-allocation bounds compose the m·E rounds through the PLD (its comparison bound too), which
  // composes at most 2^30 rounds; the rdp accountant does not cover random allocation, so the remedy is
  // fewer rounds.
  if (a.windows > 0 && a.steps > 0 && a.steps > accounting::kMaxPldRounds / a.windows) {
    throw ConfigError(
        dash + "windows",
        fmt::format("m·E = {}·{} rounds is more than the random-allocation bounds compose ({} rounds, "
                    "through the PLD; the rdp accountant does not cover random allocation): use at "
                    "most {} windows of {} steps",
                    a.steps, a.windows, accounting::kMaxPldRounds, accounting::kMaxPldRounds / a.steps,
                    a.steps));
  }
  if (args.epsilon) return CalibrateRandomAllocation(a, *args.epsilon);
  if (args.at_epsilon) return RandomAllocationAtEpsilon(a, *args.at_epsilon);
  nlohmann::ordered_json out = AccountRandomAllocation(a);
  if (args.curve)
    out["curve"] = CurveJson(args, *RandomAllocationEvent(a), {AccountantKind::kRandomAllocation});
  return out;
}

// The checks of a request that is not random allocation (RandomAllocationJson has its own), each naming
// the option to change.
void ValidateAccountRequest(const AccountRequest& args) {
  const std::string& dash = args.option_prefix;
  if (args.allocations || args.windows || args.participation) {
    // Name the option that was given (the first of them), not always the first of the three.
    const std::string given = args.allocations ? "k" : args.windows ? "windows" : "p0";
    throw ConfigError(dash + given, dash + "k, " + dash + "windows and " + dash +
                                        "p0 apply to sampling random_allocation only");
  }
  const bool from_file = args.schedule.has_value();
  const bool calibrate = args.epsilon.has_value();
  const bool has_sigma = args.sigma.has_value();
  if (args.at_epsilon) {
    if (calibrate) {
      throw ConfigError(dash + "at-epsilon",
                        "gives delta at an epsilon; it does not calibrate (drop " + dash + "epsilon)");
    }
    if (!(*args.at_epsilon >= 0.0 && std::isfinite(*args.at_epsilon))) {
      throw ConfigError(dash + "at-epsilon", "must be a finite number >= 0");
    }
  } else if (!(args.delta > 0.0 && args.delta < 1.0)) {
    throw ConfigError(dash + "delta", "must be in (0, 1)");
  }
  if (from_file && (args.q || has_sigma || args.steps || calibrate)) {
    throw ConfigError(dash + "schedule", "give either " + dash + "schedule or " + dash + "q/" + dash +
                                             "sigma/" + dash + "steps (or " + dash + "epsilon), not both");
  }
  if (!from_file && (!args.q || !args.steps || has_sigma == calibrate)) {
    throw ConfigError(dash + "sigma", "needs " + dash + "q, " + dash + "steps and exactly one of " + dash +
                                          "sigma / " + dash + "epsilon (or " + dash + "schedule)");
  }
  if (from_file) return;
  const int64_t steps = *args.steps;
  if (steps < 0 || steps > accounting::Accountant::kMaxRounds) {
    throw ConfigError(
        dash + "steps",
        "expected a whole number of rounds in [0, 2^53 = 9007199254740992], got " + std::to_string(steps));
  }
  if (!(*args.q > 0.0 && *args.q <= 1.0)) throw ConfigError(dash + "q", "must be in (0, 1]");
  accounting::ValidateSamplingRate(*args.q, dash + "q");
  if (has_sigma)
    accounting::ValidateNoiseMultiplier(*args.sigma, dash + "sigma");  // positive, finite, in domain
  if (calibrate && !(*args.epsilon > 0.0 && std::isfinite(*args.epsilon))) {
    throw ConfigError(dash + "epsilon", "must be positive");
  }
}

// The request as the output echoes it (schedule or q/sigma/steps, delta or at_epsilon, sampler, neighbours,
// what is public), and the schedule it describes.
accounting::Schedule EchoRequest(const AccountRequest& args, SamplingModel sampling,
                                 nlohmann::ordered_json& out) {
  accounting::Schedule schedule;
  if (args.schedule) {
    schedule = *args.schedule;
    nlohmann::ordered_json groups = nlohmann::ordered_json::array();
    for (const accounting::RoundGroup& g : schedule)
      groups.push_back({{"q", g.q}, {"sigma", g.sigma}, {"count", g.count}});
    out["schedule"] = std::move(groups);
    out["steps"] = accounting::TotalRounds(schedule);
  } else {
    out["q"] = *args.q;
    if (args.epsilon) {
      out["epsilon"] = *args.epsilon;
    } else {
      out["sigma"] = *args.sigma;
    }
    out["steps"] = *args.steps;
    schedule = {{*args.q, args.sigma.value_or(0.0), *args.steps}};
  }
  if (args.at_epsilon) {
    out["at_epsilon"] = *args.at_epsilon;
  } else {
    out["delta"] = args.delta;
  }
  out["sampling"] = std::string(ToString(sampling));
  out["neighbors"] = std::string(ToString(NaturalNeighbours(sampling)));
  out["public"] = "q (hence N behind q = s/N), the number of rounds and delta are treated as public";
  return schedule;
}

// One accountant's section: its epsilon at delta (with what it rests on), or with --at-epsilon its delta.
nlohmann::ordered_json AccountantSection(const accounting::PrivacyReport& report, AccountantKind kind,
                                         bool at_epsilon) {
  nlohmann::ordered_json section;
  if (at_epsilon) {
    // --at-epsilon: each accountant's delta(eps) and what it rests on (PLD: the upper bound).
    const accounting::Assumptions& a = kind == AccountantKind::kRdp   ? report.rdp->assumptions
                                       : kind == AccountantKind::kPld ? report.pld->assumptions
                                                                      : report.gdp->assumptions;
    section = {{"delta", kind == AccountantKind::kRdp   ? report.rdp->delta_at_epsilon
                         : kind == AccountantKind::kPld ? report.pld->delta_at_epsilon
                                                        : report.gdp->delta_at_epsilon}};
    AddAssumptions(section, a);
  } else if (kind == AccountantKind::kRdp) {
    section = {{"epsilon", sim::OrderedNumber(report.rdp->epsilon)}, {"order", report.rdp->order}};
    AddAssumptions(section, report.rdp->assumptions);
  } else if (kind == AccountantKind::kPld) {
    section = {{"epsilon", sim::OrderedNumber(report.pld->epsilon)},
               {"epsilon_lower", sim::OrderedNumber(report.pld->epsilon_lower)},
               {"discretization", report.pld->discretization}};
    AddAssumptions(section, report.pld->assumptions);
  } else {
    section = {{"epsilon", sim::OrderedNumber(report.gdp->epsilon)},
               {"mu", sim::OrderedNumber(report.gdp->mu)}};
    AddAssumptions(section, report.gdp->assumptions);
  }
  return section;
}

}  // namespace

SamplingModel ParseAccountSampling(const std::string& text, const std::string& key) {
  if (text == "poisson") return SamplingModel::kPoisson;
  if (text == "fixed") return SamplingModel::kFixedSizeWithoutReplacement;
  if (text == "shuffle") return SamplingModel::kShuffle;
  if (text == "random_allocation") return SamplingModel::kRandomAllocation;
  throw ConfigError(key, "expected poisson, fixed, shuffle or random_allocation, got '" + text + "'");
}

nlohmann::ordered_json AccountJson(const AccountRequest& args) {
  const std::string& dash = args.option_prefix;
  const SamplingModel sampling = ParseAccountSampling(args.sampling, dash + "sampling");
  if (sampling == SamplingModel::kRandomAllocation) {
    if (args.at_epsilon && (args.epsilon || args.curve)) {
      throw ConfigError(dash + "at-epsilon", "gives delta at an epsilon for a given sigma; not with " + dash +
                                                 "epsilon or " + dash + "curve");
    }
    if (args.curve && args.epsilon) {
      throw ConfigError(dash + "curve",
                        "describes a given sigma; it does not calibrate (drop " + dash + "epsilon)");
    }
    return RandomAllocationJson(args);
  }
  const std::vector<AccountantKind> accountants = RequestedAccountants(args.accountant, dash + "accountant");
  ValidateAccountRequest(args);
  const bool requested_alone = args.accountant != "all";
  const bool at_epsilon = args.at_epsilon.has_value();
  nlohmann::ordered_json out;
  const accounting::Schedule schedule = EchoRequest(args, sampling, out);
  if (args.epsilon) {
    if (args.curve)
      throw ConfigError(dash + "curve",
                        "describes a given sigma; it does not calibrate (drop " + dash + "epsilon)");
    out.update(Calibrate(args, args.schedule ? 0 : *args.steps, sampling, accountants, requested_alone));
    return out;
  }
  accounting::ReportOptions options;
  options.delta = at_epsilon ? 0.5 : args.delta;  // --at-epsilon: delta is not asked for; any valid one
  if (at_epsilon) options.at_epsilon = *args.at_epsilon;
  options.sampling = sampling;
  options.rdp = options.pld = options.gdp = false;
  for (AccountantKind kind : accountants) {
    (kind == AccountantKind::kRdp   ? options.rdp
     : kind == AccountantKind::kPld ? options.pld
                                    : options.gdp) = true;
  }
  const accounting::PrivacyReport report = accounting::ComputePrivacyReport(schedule, options);
  for (const auto& [kind, why] : report.unavailable) {
    if (requested_alone)
      throw ConfigError(dash + "accountant " + std::string(accounting::ToString(kind)), why);
  }
  for (AccountantKind kind : accountants) {
    const std::string name(accounting::ToString(kind));
    if (auto it = report.unavailable.find(kind); it != report.unavailable.end()) {
      out[name] = {{at_epsilon ? "delta" : "epsilon", nullptr}, {"unavailable", it->second}};
      continue;
    }
    out[name] = AccountantSection(report, kind, at_epsilon);
  }
  if (args.curve) out["curve"] = CurveJson(args, *accounting::ScheduleEvent(schedule, sampling), accountants);
  return out;
}

}  // namespace asyncdp::apps
