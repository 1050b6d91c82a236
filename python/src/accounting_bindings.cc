// Accounting from Python through the CLI's own code path: account_json / calc_json fill the same request
// structs as `asyncdp account` / `asyncdp calc` (apps/account_request.h, apps/calc_request.h) and return
// the same JSON object as a dict, so every number is bit-identical to the CLI's. The GIL is released while
// the accountants compute (a PLD composition of 10^5 rounds takes tens of milliseconds).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "apps/account_request.h"
#include "apps/calc_request.h"
#include "core/accounting/csv_input.h"
#include "core/error.h"
#include "python/src/bindings.h"
#include "python/src/json_to_python.h"

namespace asyncdp::python {
namespace py = pybind11;

namespace {

std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot open file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

using Group = std::tuple<double, double, int64_t>;  // (q, sigma, count)

py::object AccountJson(std::optional<double> q, std::optional<double> sigma, std::optional<double> epsilon,
                       std::optional<int64_t> steps, std::optional<std::vector<Group>> groups,
                       std::optional<std::string> schedule_path, double delta, const std::string& accountant,
                       const std::string& sampling, std::optional<int64_t> allocations,
                       std::optional<int64_t> windows, std::optional<double> participation,
                       std::optional<double> at_epsilon, bool curve, std::optional<std::vector<double>> curve_deltas,
                       std::optional<std::vector<double>> curve_epsilons,
                       std::optional<std::vector<double>> curve_alphas) {
  apps::AccountRequest request;
  request.curve = curve;
  request.curve_deltas = curve_deltas.value_or(std::vector<double>{});
  request.curve_epsilons = curve_epsilons.value_or(std::vector<double>{});
  request.curve_alphas = curve_alphas.value_or(std::vector<double>{});
  request.at_epsilon = at_epsilon;
  request.allocations = allocations;
  request.windows = windows;
  request.participation = participation;
  request.q = q;
  request.sigma = sigma;
  request.epsilon = epsilon;
  request.steps = steps;
  request.delta = delta;
  request.accountant = accountant;
  request.sampling = sampling;
  request.option_prefix = "";
  if (schedule_path) {
    request.schedule = accounting::ParseScheduleCsv(ReadTextFile(*schedule_path), *schedule_path);
  } else if (groups) {
    accounting::Schedule schedule;
    for (size_t i = 0; i < groups->size(); ++i) {
      const auto& [group_q, group_sigma, count] = (*groups)[i];
      // The CSV reader's checks, with the list index in place of FILE:LINE:COL.
      const std::string where = "schedule[" + std::to_string(i) + "]";
      if (!(group_q > 0.0 && group_q <= 1.0)) throw ConfigError(where, "q must be in (0, 1]");
      if (!(group_sigma > 0.0 && std::isfinite(group_sigma))) {
        throw ConfigError(where, "sigma must be a positive finite number");
      }
      if (count < 0 || count > 9'000'000'000'000'000) throw ConfigError(where, "count must be a non-negative integer");
      schedule.push_back({group_q, group_sigma, count});
    }
    if (schedule.empty()) throw ConfigError("schedule", "expected at least one (q, sigma, count) group");
    request.schedule = std::move(schedule);
  }
  nlohmann::ordered_json out;
  {
    py::gil_scoped_release release;
    out = apps::AccountJson(request);
  }
  return ToPython(out);
}

using Phase = std::tuple<double, std::optional<double>>;  // (K_j, sigma_j or None in the first phase)

py::object CalcJson(double n_records, std::optional<double> iterations, double delta, std::optional<double> sigma,
                    std::optional<double> epsilon, std::optional<double> theta, const std::string& mode,
                    std::optional<std::vector<Phase>> phases, std::optional<std::string> phases_path) {
  apps::CalcRequest request;
  request.n_records = n_records;
  request.iterations = iterations;
  request.delta = delta;
  request.sigma = sigma;
  request.epsilon = epsilon;
  request.theta = theta;
  request.mode = mode;
  request.option_prefix = "";
  if (phases_path) {
    request.phases = accounting::ParsePhasesCsv(ReadTextFile(*phases_path), *phases_path);
  } else if (phases) {
    std::vector<accounting::CalculatorPhase> parsed;
    for (size_t j = 0; j < phases->size(); ++j) {
      const auto& [k, phase_sigma] = (*phases)[j];
      const std::string where = "phases[" + std::to_string(j) + "]";
      accounting::CalculatorPhase phase;
      phase.iterations = k;
      if (!(k > 0.0 && std::isfinite(k))) throw ConfigError(where, "K must be positive");
      if (phase_sigma) {
        if (!(*phase_sigma > 0.0 && std::isfinite(*phase_sigma))) throw ConfigError(where, "sigma must be positive");
        phase.sigma = *phase_sigma;
      } else if (j > 0) {
        throw ConfigError(where, "every phase after the first needs sigma_j");
      }
      parsed.push_back(phase);
    }
    if (parsed.empty()) throw ConfigError("phases", "expected at least one (K, sigma) phase");
    request.phases = std::move(parsed);
  }
  nlohmann::ordered_json out;
  {
    py::gil_scoped_release release;
    out = apps::CalcJson(request);
  }
  return ToPython(out);
}

}  // namespace

void RegisterAccounting(py::module_& m) {
  m.def("account_json", &AccountJson, py::arg("q"), py::arg("sigma"), py::arg("epsilon"), py::arg("steps"),
        py::arg("schedule"), py::arg("schedule_path"), py::arg("delta"), py::arg("accountant"),
        py::arg("sampling"), py::arg("k") = py::none(), py::arg("windows") = py::none(),
        py::arg("p0") = py::none(), py::arg("at_epsilon") = py::none(), py::arg("curve") = false,
        py::arg("curve_deltas") = py::none(), py::arg("curve_epsilons") = py::none(),
        py::arg("curve_alphas") = py::none(),
        "The JSON object of `asyncdp account` as a dict (`asyncdp account --at-epsilon` with at_epsilon, "
        "`--curve` with curve).");
  m.def("calc_json", &CalcJson, py::arg("N"), py::arg("K"), py::arg("delta"), py::arg("sigma"), py::arg("epsilon"),
        py::arg("theta"), py::arg("mode"), py::arg("phases"), py::arg("phases_path"),
        "The JSON object of `asyncdp calc` as a dict.");
}

}  // namespace asyncdp::python
