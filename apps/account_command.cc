// `asyncdp account`: privacy of a DP-SGD schedule under the RDP, PLD and GDP accountants, as JSON.
//
//   asyncdp account --q Q --sigma S --steps T --delta D [--accountant rdp|pld|gdp|all]
//                   [--sampling poisson|fixed|shuffle]
//   asyncdp account --schedule FILE.csv --delta D [...]        heterogeneous rounds (q,sigma,count lines)
//   asyncdp account --q Q --epsilon E --steps T --delta D [...] calibration: smallest sigma meeting E
//   asyncdp account --sampling random_allocation --steps M --k K --windows E [--p0 P] --sigma S --delta D
//                   random allocation / random check-ins: every bound beside Poisson at rate p0 K / M
//                   (apps/account_random_allocation.h)
//
// Output (one JSON object on stdout; only the requested accountants appear):
//   {"q", "sigma", "steps", "delta", "sampling", "neighbors", "public",
//    "rdp": {"epsilon", "order", "bound", "method"},
//    "pld": {"epsilon", "epsilon_lower", "discretization", "bound", "method"},
//    "gdp": {"epsilon", "mu", "bound", "method"}}
// With --at-epsilon E instead of --delta: "at_epsilon" replaces "delta" and each accountant reports
// {"delta", "bound", "method"}, the smallest delta at E (a point of the privacy curve delta(epsilon));
// random allocation too (random_allocation.delta and every bound's delta).
// With --curve: also "curve": {<accountant>: {"bound", "epsilon_of_delta": [{"delta", "epsilon"}],
// "delta_of_epsilon": [{"epsilon", "delta"}], "tradeoff": [{"alpha", "beta"}], "tradeoff_profile_points"}}
// (core/accounting/privacy_curve.h; lists from --curve-deltas, --curve-epsilons, --curve-alphas).
// With --schedule, "q"/"sigma" are replaced by "schedule": [{"q", "sigma", "count"}, ...].
// With --epsilon, each accountant reports {"sigma", "epsilon"} (or {"sigma": null} if none up to 1e4).
// An accountant that cannot account the input (e.g. PLD beyond 2^30 rounds) reports {"epsilon": null,
// "unavailable": why} under --accountant all, and is an error when requested alone.
// Every number goes through the accountant facade (core/accounting/accountant.h).
// Bad input throws asyncdp::InputError; main() prints `error: ...` and exits with code 2.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "apps/account_random_allocation.h"
#include "apps/account_request.h"
#include "apps/commands.h"
#include "core/accounting/accountant.h"
#include "core/accounting/account.h"
#include "core/accounting/dp_event.h"
#include "core/accounting/csv_input.h"
#include "core/accounting/privacy_curve.h"
#include "core/accounting/report.h"
#include <fmt/format.h>

#include "core/accounting/pld/pld.h"
#include "core/error.h"
#include "data/file_contents.h"
#include "sim/json_number.h"

namespace asyncdp::apps {
namespace {

using accounting::AccountantKind;

struct AccountArgs {
  double q = 0.0;
  double sigma = 0.0;
  double epsilon = 0.0;
  std::string steps;  // parsed by ParseSteps: CLI11 would saturate an out-of-range integer silently
  double delta = 0.0;
  std::string accountant = "all";
  std::string sampling = "poisson";
  std::string schedule_path;
  int64_t allocations = 1;  // --k (random allocation)
  int64_t windows = 1;      // --windows (random allocation)
  double participation = 1.0;  // --p0 (random allocation)
  double at_epsilon = 0.0;     // --at-epsilon: delta(epsilon) instead of epsilon(delta)
  bool curve = false;          // --curve
  std::vector<double> curve_deltas, curve_epsilons, curve_alphas;
};

SamplingModel ParseSampling(const std::string& text, const std::string& key) {
  if (text == "poisson") return SamplingModel::kPoisson;
  if (text == "fixed") return SamplingModel::kFixedSizeWithoutReplacement;
  if (text == "shuffle") return SamplingModel::kShuffle;
  if (text == "random_allocation") return SamplingModel::kRandomAllocation;
  throw ConfigError(key, "expected poisson, fixed, shuffle or random_allocation, got '" + text + "'");
}

// A whole number of rounds in [0, 2^53]; anything else (a fraction, a sign, digits beyond the range) is a
// clear error rather than a saturated or truncated value.
int64_t ParseSteps(const std::string& text) {
  int64_t steps = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, steps);
  if (text.empty() || ec != std::errc() || ptr != end || steps < 0 ||
      steps > accounting::Accountant::kMaxRounds) {
    const std::string shown = text.size() > 40 ? text.substr(0, 40) + "..." : text;
    throw ConfigError("--steps", "expected a whole number of rounds in [0, 2^53 = 9007199254740992], got '" +
                                     shown + "'");
  }
  return steps;
}

// A schedule file: plain or gzip-compressed text (a leading UTF-8 BOM dropped); a directory, a missing or
// unreadable file gets an error that says which (data::ReadTextFile).
std::string ReadFile(const std::string& path) { return data::ReadTextFile(path); }

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
  const std::vector<double> deltas = args.curve_deltas.empty() ? accounting::DefaultCurveDeltas() : args.curve_deltas;
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
    throw ConfigError(dash + "k", dash + "k, " + dash + "windows and " + dash +
                                      "p0 apply to sampling random_allocation only");
  }
  const bool from_file = args.schedule.has_value();
  const bool calibrate = args.epsilon.has_value();
  const bool has_sigma = args.sigma.has_value();
  if (args.at_epsilon) {
    if (calibrate) {
      throw ConfigError(dash + "at-epsilon", "gives delta at an epsilon; it does not calibrate (drop " + dash +
                                                 "epsilon)");
    }
    if (!(*args.at_epsilon >= 0.0 && std::isfinite(*args.at_epsilon))) {
      throw ConfigError(dash + "at-epsilon", "must be a finite number >= 0");
    }
  } else if (!(args.delta > 0.0 && args.delta < 1.0)) {
    throw ConfigError(dash + "delta", "must be in (0, 1)");
  }
  if (from_file && (args.q || has_sigma || args.steps || calibrate)) {
    throw ConfigError(dash + "schedule", "give either " + dash + "schedule or " + dash + "q/" + dash + "sigma/" +
                                             dash + "steps (or " + dash + "epsilon), not both");
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

nlohmann::ordered_json AccountJson(const AccountRequest& args) {
  const std::string& dash = args.option_prefix;
  const SamplingModel sampling = ParseSampling(args.sampling, dash + "sampling");
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
    if (args.curve) throw ConfigError(dash + "curve", "describes a given sigma; it does not calibrate (drop " + dash + "epsilon)");
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
    if (requested_alone) throw ConfigError(dash + "accountant " + std::string(accounting::ToString(kind)), why);
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

namespace {

void RunAccount(const AccountArgs& args, const CLI::App& command) {
  AccountRequest request;
  if (command.count("--accountant") && args.accountant != "all" &&
      ParseSampling(args.sampling, "--sampling") == SamplingModel::kRandomAllocation) {
    throw ConfigError("--sampling random_allocation", "takes no --accountant: the random-allocation bounds "
                                                      "account it (every one is printed)");
  }
  if (command.count("--k")) request.allocations = args.allocations;
  if (command.count("--windows")) request.windows = args.windows;
  if (command.count("--p0")) request.participation = args.participation;
  if (command.count("--q")) request.q = args.q;
  if (command.count("--sigma")) request.sigma = args.sigma;
  if (command.count("--epsilon")) request.epsilon = args.epsilon;
  if (command.count("--steps")) request.steps = ParseSteps(args.steps);
  if (!args.schedule_path.empty()) {
    request.schedule = accounting::ParseScheduleCsv(ReadFile(args.schedule_path), args.schedule_path);
  }
  if (command.count("--at-epsilon")) {
    if (command.count("--delta")) {
      throw ConfigError("--at-epsilon", "gives delta at an epsilon: give either --delta or --at-epsilon");
    }
    request.at_epsilon = args.at_epsilon;
  } else if (!command.count("--delta")) {
    throw ConfigError("--delta", "required (or --at-epsilon E for the smallest delta at E)");
  }
  if (!args.curve && (command.count("--curve-deltas") || command.count("--curve-epsilons") ||
                      command.count("--curve-alphas"))) {
    throw ConfigError("--curve-deltas", "--curve-deltas, --curve-epsilons and --curve-alphas need --curve");
  }
  request.curve = args.curve;
  request.curve_deltas = args.curve_deltas;
  request.curve_epsilons = args.curve_epsilons;
  request.curve_alphas = args.curve_alphas;
  request.delta = args.delta;
  request.accountant = args.accountant;
  request.sampling = args.sampling;
  std::cout << AccountJson(request).dump() << '\n';
}

constexpr const char* kAccountFooter = R"(Output: one JSON object.
  q, sigma, steps, delta   the inputs (with --schedule: "schedule" [{q, sigma, count}] and total "steps")
  sampling                 poisson | fixed_size_without_replacement | shuffle
  neighbors                add_remove (poisson) | replace_one (fixed size, shuffle): what every epsilon assumes
  public                   what the accounting treats as public (q, hence N; the rounds; delta)
  rdp.epsilon, rdp.order   Renyi-DP upper bound and the order attaining it (MTZ19 / WBK19, CKS20 conversion)
  pld.epsilon              privacy-loss-distribution upper bound (connect-the-dots, FFT)
  pld.epsilon_lower        lower bound on the true epsilon of the same mechanism (pooled discretisation)
  pld.discretization       loss grid spacing used (nats)
  gdp.epsilon, gdp.mu      mu-GDP central-limit APPROXIMATION (not a guarantee)
  <accountant>.bound       upper_bound | approximation;  <accountant>.method: the exact method used
  <accountant>.epsilon     null when no finite epsilon holds (sigma -> 0), or with "unavailable": why not
Fixed-size sampling is accounted with the pair ((1-q)N(0)+qN(2C), N(0)) and its reverse; shuffled batches
as one full-batch Gaussian (sensitivity 2C) per started epoch.
With --epsilon E: <accountant>.sigma is the smallest noise multiplier (1e-4 relative) with epsilon <= E,
<accountant>.epsilon its epsilon; null if no sigma up to 1e4 suffices.
With --at-epsilon E (instead of --delta): "at_epsilon" E, and <accountant>.delta the smallest delta at E
(a point of the privacy curve; PLD: upper bound from the same connect-the-dots composition).
Schedule CSV: lines "q,sigma[,count]" (count defaults to 1), optional header, '#' comments.
--sampling random_allocation --steps M --k K --windows E [--p0 P] --sigma S --delta D (random check-ins):
  (with --epsilon in place of --sigma: random_allocation.sigma is the smallest sigma, 1e-4 relative, whose
  reported epsilon is <= the target, random_allocation.epsilon that epsilon; null if none up to 1e4)
  random_allocation.epsilon        the reported upper bound: per direction (add/remove of one record) the
                                   best applicable bound, the worse direction; binding_bound, theorem
  random_allocation.bounds[]       every bound: renyi_remove, amgm_add, decomposition, recursive, pld, each with
                                   direction, epsilon (null: outside its theorem or above delta), theorem
  random_allocation.assumptions    what every number above rests on (docs/random_allocation.md)
  random_allocation.seconds        wall seconds spent on the allocation bounds
  random_allocation.lower_bound    k = 1: a certified lower bound on the true epsilon (epsilon, remove_epsilon,
                                   add_epsilon, method, seconds): the guarantee is at most epsilon / it above
                                   the truth; k > 1: epsilon null and why
  poisson                          Poisson subsampling at rate q = p0 K / M over M E rounds (rdp, pld)
  shuffle                          one shuffled pass of M records (FMT21, replace-one, sensitivity 2C); E = 1, K = 1
  (with --at-epsilon E in place of --delta: random_allocation.delta, the smallest delta at E, per direction the
  best bound and the worse direction, and bounds[] with each bound's delta)
  (with --curve: curve.random_allocation as for the other accountants, from the reported bound; its trade-off
  from a profile of 100 points, not 400: each delta(epsilon) takes every bound))";

}  // namespace

void RegisterAccountCommand(CLI::App& app) {
  CLI::App* account = app.add_subcommand("account", "Epsilon of a DP-SGD schedule (RDP, PLD, GDP) as JSON");
  auto args = std::make_shared<AccountArgs>();
  account->add_option("--q", args->q, "Sampling rate q = expected batch / N, in (0, 1]");
  account->add_option("--sigma", args->sigma, "Noise multiplier (noise N(0, C^2 sigma^2 I) per round)");
  account->add_option("--epsilon", args->epsilon,
                      "Target epsilon: calibrate sigma instead of taking --sigma");
  account->add_option("--steps", args->steps, "Number of rounds T (a whole number up to 2^53)");
  account->add_option("--delta", args->delta, "Target delta in (0, 1)");
  account->add_option("--at-epsilon", args->at_epsilon,
                      "Instead of --delta: each accountant's smallest delta at this epsilon (delta(epsilon))");
  account->add_option("--accountant", args->accountant, "rdp | pld | gdp | all")
      ->check(CLI::IsMember({"rdp", "pld", "gdp", "all"}))
      ->capture_default_str();
  account->add_option("--sampling", args->sampling,
                      "poisson (add/remove) | fixed (fixed-size, replace-one) | shuffle (replace-one) | "
                      "random_allocation (check-ins, add/remove)")
      ->check(CLI::IsMember({"poisson", "fixed", "shuffle", "random_allocation"}))
      ->capture_default_str();
  account->add_option("--schedule", args->schedule_path,
                      "CSV of heterogeneous rounds: q,sigma[,count] per line");
  account->add_option("--k", args->allocations, "random_allocation: rounds each record joins per window")
      ->capture_default_str();
  account->add_option("--windows", args->windows, "random_allocation: number of windows E composed")
      ->capture_default_str();
  account->add_option("--p0", args->participation,
                      "random_allocation: probability that a record checks in to a window, in (0, 1]")
      ->capture_default_str();
  account->add_flag("--curve", args->curve,
                    "Also each accountant's whole curve: epsilon(delta), delta(epsilon) and the trade-off beta(alpha)");
  account->add_option("--curve-deltas", args->curve_deltas, "--curve: the deltas of epsilon(delta) (default 1e-1 ... 1e-10)")
      ->delimiter(',');
  account->add_option("--curve-epsilons", args->curve_epsilons,
                      "--curve: the epsilons of delta(epsilon) (default 21 from 0 to epsilon(min delta))")
      ->delimiter(',');
  account->add_option("--curve-alphas", args->curve_alphas,
                      "--curve: the type-I errors alpha of the trade-off curve (default 0, 1e-6 ... 1e-3, 0.01 ... 1)")
      ->delimiter(',');
  account->footer(kAccountFooter);
  account->callback([args, account] { RunAccount(*args, *account); });
}

}  // namespace asyncdp::apps
