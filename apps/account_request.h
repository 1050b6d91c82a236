// What `asyncdp account` computes, apart from how its arguments arrive: the CLI (account_command.cc) and
// the Python module (python/src/accounting_bindings.cc) both fill an AccountRequest and print / convert the
// JSON AccountJson returns, so the two give the same fields and bit-identical numbers.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/accounting/schedule.h"
#include "core/privacy_assumptions.h"

namespace asyncdp::apps {

struct AccountRequest {
  // A homogeneous schedule: q, steps and exactly one of sigma (account) / epsilon (calibrate sigma) ...
  std::optional<double> q;
  std::optional<double> sigma;
  std::optional<double> epsilon;
  std::optional<int64_t> steps;
  // ... or heterogeneous rounds (q, sigma, count), e.g. read from a --schedule CSV.
  std::optional<accounting::Schedule> schedule;
  double delta = 0.0;                // target delta in (0, 1)
  // Instead of epsilon at `delta`: the smallest delta at this epsilon >= 0 by each accountant (the
  // privacy curve delta(epsilon); `delta` is then not used). Account only, no calibration.
  std::optional<double> at_epsilon;
  std::string accountant = "all";    // rdp | pld | gdp | all (random_allocation: all | random_allocation)
  std::string sampling = "poisson";  // poisson | fixed | shuffle | random_allocation
  // sampling = random_allocation: `steps` is m (rounds per window), with sigma (account) or epsilon
  // (calibrate sigma), and these (defaults 1); q and schedule do not apply (q = p0 k / m).
  std::optional<int64_t> allocations;  // k, rounds each record joins per window
  std::optional<int64_t> windows;      // E, windows composed
  std::optional<double> participation; // p0, probability a record takes part in a window
  // Also the whole curve of each requested accountant, under "curve" (core/accounting/privacy_curve.h):
  // ε(δ) at curve_deltas, δ(ε) at curve_epsilons and the trade-off β(α) at curve_alphas (empty: defaults).
  bool curve = false;
  std::vector<double> curve_deltas;
  std::vector<double> curve_epsilons;
  std::vector<double> curve_alphas;
  // Prefix of the argument names in error messages: "--" for the CLI ("--q: must be in (0, 1]"), "" for
  // keyword arguments in Python ("q: must be in (0, 1]").
  std::string option_prefix = "--";
};

// The JSON object `asyncdp account` prints (its fields are listed in account_command.cc). Throws
// ConfigError for invalid or conflicting inputs, and for an accountant requested alone that cannot account
// them.
nlohmann::ordered_json AccountJson(const AccountRequest& request);

// AccountRequest::sampling as an enum (poisson | fixed | shuffle | random_allocation); ConfigError(key)
// for any other word.
SamplingModel ParseAccountSampling(const std::string& text, const std::string& key);

}  // namespace asyncdp::apps
