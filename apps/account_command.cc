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
#include <charconv>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "apps/account_request.h"
#include "apps/commands.h"
#include "core/accounting/accountant.h"
#include "core/accounting/csv_input.h"
#include "core/error.h"
#include "data/file_contents.h"

namespace asyncdp::apps {
namespace {

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

void RunAccount(const AccountArgs& args, const CLI::App& command) {
  AccountRequest request;
  if (command.count("--accountant") && args.accountant != "all" &&
      ParseAccountSampling(args.sampling, "--sampling") == SamplingModel::kRandomAllocation) {
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
                      "CSV of heterogeneous rounds: q,sigma[,count] per line")
      ->check(NonEmptyPath());
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
