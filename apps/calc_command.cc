// `asyncdp calc`: the Proactive-DP paper's DP calculators (Appendix D.4 and E.1; docs/theory.md) as JSON.
//
//   asyncdp calc --N N --K K --delta D (--sigma S | --epsilon E) [--theta THETA] [--mode paper|exact]
//     Appendix D.4 (Theorem 3.1): {"epsilon", "sigma", "gamma", "T_min", "s_max", "T_min_asym",
//     "s_max_asym", "conditions": {"(7)": {"lhs", "rhs", "holds", "margin"}, ...}, ...}
//   asyncdp calc --N N --delta D --epsilon E_TARGET --phases FILE.csv [--mode paper|exact]
//     Appendix E.1 (Theorem B.4), one "K,sigma" line per phase (sigma empty in the first = derive it):
//     {"N", "delta", "epsilon_target", "mode", "can_participate", "phases": [{...}, ...]}
// Bad input throws asyncdp::InputError; main() prints `error: ...` and exits with code 2.
#include <cmath>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>

#include "apps/calc_request.h"
#include "apps/commands.h"
#include "core/accounting/csv_input.h"
#include "core/accounting/proactive/proactive_calculator.h"
#include "core/error.h"
#include "data/file_contents.h"
#include "sim/config_fields.h"
#include "sim/json_number.h"

namespace asyncdp::apps {
namespace {

struct CalcArgs {
  double n_records = 0.0;
  double iterations = 0.0;
  double delta = 0.0;
  double sigma = 0.0;
  double epsilon = 0.0;
  double theta = 1.0;
  std::string mode = "paper";
  std::string phases_path;
};

// JSON has no infinity: non-finite numbers (e.g. gamma when no solution exists) become null.
// The accepted range of every number `calc` takes, checked once where it enters (here), so the calculators
// never see NaN, an infinity or a magnitude whose s_max cannot be represented. N and K are counts.
constexpr sim::NumericRange kRecordsRange{1, 1e9};          // --N: records in one client's data set
constexpr sim::NumericRange kIterationsRange{1, 1e12};      // --K: gradient computations
constexpr sim::NumericRange kDeltaRange{0, 1, true, true};  // --delta
constexpr sim::NumericRange kSigmaRange{0, 1e6, true};      // --sigma (6) further needs sigma^2 > 2
constexpr sim::NumericRange kEpsilonRange{0, 1e3, true};    // --epsilon
constexpr sim::NumericRange kThetaRange{1, 1e3};            // --theta = s_max / s_bar
// Sample sizes are printed as integers only while a double holds them exactly.
constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53

void RequireInRange(const std::string& option, double value, const sim::NumericRange& range, bool integer) {
  const bool in_range = range.Contains(value);
  if (in_range && (!integer || value == std::floor(value))) return;
  throw ConfigError(option, std::string("must be ") + (integer ? "an integer" : "a finite number") + " in " +
                                range.ToString() + ", got " + sim::NumberText(value));
}

// The calculators (core) name their inputs calc.N, calc.sigma, ...; whoever called knows them as --sigma
// (the CLI) or sigma (Python's keyword), so an error they raise is re-named with the caller's prefix.
template <typename Run>
auto NamedAsGiven(const std::string& dash, Run&& run) {
  try {
    return run();
  } catch (const ConfigError& error) {
    constexpr std::string_view kCore = "calc.";
    if (!error.where().starts_with(kCore)) throw;
    throw ConfigError(dash + error.where().substr(kCore.size()), error.message());
  }
}

// floor(x) as a JSON integer, or null when x is not finite or beyond 2^53 (the calculators' s_max when T_min
// is tiny: no sample size means anything there).
nlohmann::ordered_json FloorOrNull(double x) {
  if (!std::isfinite(x) || std::fabs(x) >= kMaxExactInteger) return nullptr;
  return static_cast<int64_t>(std::floor(x));
}

nlohmann::ordered_json ConditionsJson(const accounting::ProactiveCheck& check) {
  nlohmann::ordered_json conditions;
  for (const accounting::ConditionResult& c : check.conditions) {
    conditions[c.id] = {{"lhs", sim::OrderedNumber(c.lhs)},
                        {"rhs", sim::OrderedNumber(c.rhs)},
                        {"holds", c.holds},
                        {"margin", sim::OrderedNumber(c.margin)},
                        {"relation", std::string(ToString(c.relation))},
                        {"statement", c.statement}};
  }
  return conditions;
}

nlohmann::ordered_json SimplifiedJson(const CalcRequest& args) {
  const std::string& dash = args.option_prefix;
  accounting::CalculatorInputs in;
  in.n_records = args.n_records;
  in.iterations = args.iterations.value_or(0.0);
  in.delta = args.delta;
  in.theta = args.theta.value_or(1.0);
  in.mode = accounting::ParseGammaMode(args.mode, dash + "mode");
  if (args.sigma) in.sigma = *args.sigma;
  if (args.epsilon) in.epsilon = *args.epsilon;
  if (!args.iterations) throw ConfigError(dash + "K", "required (total gradient computations)");
  RequireInRange(dash + "K", *args.iterations, kIterationsRange, true);
  RequireInRange(dash + "theta", in.theta, kThetaRange, false);
  const accounting::CalculatorResult r = NamedAsGiven(dash, [&] { return accounting::RunSimplifiedCalculator(in); });
  nlohmann::ordered_json out;
  out["epsilon"] = sim::OrderedNumber(r.epsilon);
  out["sigma"] = sim::OrderedNumber(r.sigma);
  out["gamma"] = sim::OrderedNumber(r.gamma);
  out["T_min"] = sim::OrderedNumber(r.t_min);
  out["s_max"] = FloorOrNull(r.s_max_real);
  out["T_min_asym"] = sim::OrderedNumber(r.t_min_asym);
  out["s_max_asym"] = FloorOrNull(r.s_max_asym_real);
  out["conditions"] = ConditionsJson(r.check);
  out["theorem_3_1"] = r.check.theorem_3_1;
  out["theorem_b4"] = r.check.theorem_b4;
  out["delta"] = r.delta;
  out["N"] = args.n_records;
  out["K"] = in.iterations;
  out["epochs"] = r.epochs;
  out["theta"] = in.theta;
  out["mode"] = std::string(accounting::ToString(in.mode));
  out["s_max_real"] = sim::OrderedNumber(r.s_max_real);
  out["s_max_asym_real"] = sim::OrderedNumber(r.s_max_asym_real);
  out["eps_fdp"] = {{"s_max", sim::OrderedNumber(r.eps_fdp_s_max)},
                    {"s_max_asym", sim::OrderedNumber(r.eps_fdp_s_max_asym)},
                    {"s_max_asym_paper", sim::OrderedNumber(r.eps_fdp_s_max_asym_paper)},
                    {"bound", "approximation"}};
  out["factor"] = {{"s_max", sim::OrderedNumber(r.epsilon / r.eps_fdp_s_max)},
                   {"s_max_asym_paper", sim::OrderedNumber(r.epsilon / r.eps_fdp_s_max_asym_paper)}};
  out["sampling"] = "poisson";
  out["neighbors"] = "add_remove";
  return out;
}

nlohmann::ordered_json MultiPhaseJson(const CalcRequest& args) {
  const std::string& dash = args.option_prefix;
  if (args.sigma || args.iterations || args.theta) {
    throw ConfigError(dash + "phases", "takes K and sigma from each phase; drop " + dash + "sigma/" + dash +
                                           "K/" + dash + "theta");
  }
  if (!args.epsilon) throw ConfigError(dash + "epsilon", "the E.1 calculator needs the target epsilon");
  accounting::MultiPhaseInputs in;
  in.n_records = args.n_records;
  in.delta = args.delta;
  in.epsilon_target = *args.epsilon;
  in.mode = accounting::ParseGammaMode(args.mode, dash + "mode");
  in.phases = *args.phases;
  for (const accounting::CalculatorPhase& phase : in.phases) {
    RequireInRange(dash + "phases K", phase.iterations, kIterationsRange, true);
    if (!std::isnan(phase.sigma)) RequireInRange(dash + "phases sigma", phase.sigma, kSigmaRange, false);
  }
  const accounting::MultiPhaseResult r = NamedAsGiven(dash, [&] { return accounting::RunMultiPhaseCalculator(in); });
  nlohmann::ordered_json phases = nlohmann::ordered_json::array();
  for (size_t j = 0; j < r.phases.size(); ++j) {
    const accounting::PhaseResult& p = r.phases[j];
    nlohmann::ordered_json phase;
    phase["K"] = in.phases[j].iterations;
    phase["admissible"] = p.admissible;
    if (p.admissible) {
      phase["s"] = p.sample_size;
      phase["T"] = p.rounds;
      phase["epsilon"] = sim::OrderedNumber(p.epsilon);
      phase["sigma"] = sim::OrderedNumber(p.sigma);
      phase["gamma"] = sim::OrderedNumber(p.gamma);
      phase["theta"] = p.theta;
      phase["s_bar"] = p.mean_sample_size;
    }
    phase["stop_reason"] = p.admissible ? p.stop_reason : "cannot participate: " + p.stop_reason;
    phases.push_back(std::move(phase));
  }
  nlohmann::ordered_json out;
  out["N"] = args.n_records;
  out["delta"] = args.delta;
  out["epsilon_target"] = *args.epsilon;
  out["mode"] = std::string(accounting::ToString(in.mode));
  out["can_participate"] = r.can_participate;
  out["phases"] = std::move(phases);
  return out;
}

constexpr const char* kCalcFooter =
    R"(Inputs: --N an integer in [1, 1e9], --K an integer in [1, 1e12], --delta in (0, 1),
--sigma in (0, 1e6] (the D.4 calculator needs sigma^2 > 2), --epsilon in (0, 1000], --theta in [1, 1000].
Output of the D.4 calculator (one JSON object):
  epsilon              eps = 2 ln(1/delta) / (sigma^2 - 2) from --sigma, or --epsilon as given
  sigma                --sigma, or sqrt(2 (eps + ln(1/delta)) / eps) (6) from --epsilon
  gamma                paper: one-sided fixed-point iteration from 2 (reproduces Tables 9-11);
                       exact: the smallest solution of gamma >= F_gamma (bisection)
  T_min, s_max         gamma theta^2 k^2 / eps and floor(k N / T_min), k = K / N (s_max, s_max_asym: null
                       when not finite or above 2^53)
  T_min_asym, s_max_asym  theta^2 k^2 / (2 eps) and floor(k N / T_min_asym)
  conditions           per condition of Theorems 3.1 / B.4 at s = s_max: lhs, rhs, holds, margin
                       (margin >= 0 iff it holds), relation, statement
  theorem_3_1, theorem_b4  whether all conditions of the theorem hold
  delta, N, K, epochs, theta, mode, s_max_real, s_max_asym_real   inputs and unrounded values
  eps_fdp              uniform-sampling GDP CLT epsilon (approximation): s_max over k epochs,
                       s_max_asym over k epochs, and over 2k epochs as the paper printed it
  factor               epsilon / eps_fdp (the paper's multiplication factor)
  sampling, neighbors  poisson, add_remove: the paper's analysis assumptions
With --phases FILE (E.1): {N, delta, epsilon_target, mode, can_participate, phases: [{K, admissible,
s, T, epsilon, sigma, gamma, theta, s_bar, stop_reason}]}; a phase where no batch size works is reported
with admissible=false ("cannot participate") and later phases are not planned.)";

}  // namespace

nlohmann::ordered_json CalcJson(const CalcRequest& request) {
  // Every number is range-checked here, once, for the CLI and the Python module alike.
  const std::string& dash = request.option_prefix;
  RequireInRange(dash + "N", request.n_records, kRecordsRange, true);
  RequireInRange(dash + "delta", request.delta, kDeltaRange, false);
  if (request.sigma) RequireInRange(dash + "sigma", *request.sigma, kSigmaRange, false);
  if (request.epsilon) RequireInRange(dash + "epsilon", *request.epsilon, kEpsilonRange, false);
  return request.phases ? MultiPhaseJson(request) : SimplifiedJson(request);
}

void RegisterCalcCommand(CLI::App& app) {
  CLI::App* calc = app.add_subcommand("calc", "The Proactive-DP paper's DP calculators (D.4, E.1) as JSON");
  auto args = std::make_shared<CalcArgs>();
  calc->add_option("--N", args->n_records, "Records in the client's data set")->required();
  calc->add_option("--K", args->iterations, "Total gradient computations K (k = K / N epochs)");
  calc->add_option("--delta", args->delta, "Target delta (the paper uses 1/N)")->required();
  calc->add_option("--sigma", args->sigma, "Noise multiplier (D.4 step 1 derives eps from it)");
  calc->add_option("--epsilon", args->epsilon, "Target epsilon (D.4: sigma from (6); E.1: the budget)");
  calc->add_option("--theta", args->theta, "s_max / s_bar (1 for a constant batch size)")
      ->capture_default_str();
  calc->add_option("--mode", args->mode, "gamma: paper (Tables 9-11) | exact (smallest solution)")
      ->check(CLI::IsMember({"paper", "exact"}))
      ->capture_default_str();
  calc->add_option("--phases", args->phases_path, "E.1 multi-phase calculator: CSV of K,sigma per phase")
      ->check(NonEmptyPath());
  calc->footer(kCalcFooter);
  calc->callback([args, calc] {
    CalcRequest request;
    request.n_records = args->n_records;
    request.delta = args->delta;
    request.mode = args->mode;
    if (calc->count("--K")) request.iterations = args->iterations;
    if (calc->count("--sigma")) request.sigma = args->sigma;
    if (calc->count("--epsilon")) request.epsilon = args->epsilon;
    if (calc->count("--theta")) request.theta = args->theta;
    if (!args->phases_path.empty()) {
      if (request.sigma || request.iterations || request.theta) {
        throw ConfigError("--phases", "takes K and sigma from each phase; drop --sigma/--K/--theta");
      }
      if (!request.epsilon) throw ConfigError("--epsilon", "the E.1 calculator needs the target epsilon");
      request.phases = accounting::ParsePhasesCsv(data::ReadTextFile(args->phases_path), args->phases_path);
    }
    std::cout << CalcJson(request).dump() << '\n';
  });
}

}  // namespace asyncdp::apps
