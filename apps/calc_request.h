// What `asyncdp calc` computes, apart from how its arguments arrive: the CLI (calc_command.cc) and the
// Python module (python/src/accounting_bindings.cc) both fill a CalcRequest and print / convert the JSON
// CalcJson returns, so the two give the same fields and bit-identical numbers.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/accounting/proactive/proactive_calculator.h"

namespace asyncdp::apps {

struct CalcRequest {
  double n_records = 0.0;             // N
  std::optional<double> iterations;   // K (D.4 only)
  double delta = 0.0;
  std::optional<double> sigma;        // D.4: exactly one of sigma / epsilon
  std::optional<double> epsilon;      // D.4: target epsilon; E.1: the budget
  std::optional<double> theta;        // D.4: s_max / s_bar (default 1)
  std::string mode = "paper";         // paper | exact
  // E.1 (Appendix E.1): one (K_j, sigma_j) per phase; sigma NaN in the first = derive it. Absent = D.4.
  std::optional<std::vector<accounting::CalculatorPhase>> phases;
  std::string option_prefix = "--";  // as in AccountRequest
};

// The JSON object `asyncdp calc` prints (fields in calc_command.cc). Throws ConfigError for bad input.
nlohmann::ordered_json CalcJson(const CalcRequest& request);

}  // namespace asyncdp::apps
