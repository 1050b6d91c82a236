// What the "no setting silently ignored" tests share (tests/sim/config_usage_test.cc in process, and
// tests/sim/runtime/mpi_config_usage_test.cc over mpirun): changing one configuration key to another valid
// value, and a run's outputs without the wall clock. In asyncdp::testing, beside the other shared test
// helpers: the MPI tests share one unity batch, where a second `testing` namespace inside asyncdp::sim would
// change what their `testing::` names.
#pragma once

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "sim/config_fields.h"

namespace asyncdp::testing {

using sim::ConfigField;
using sim::EnumBinding;

// Keys of summary.json that measure the machine, not the computation (timings and the thread count): the
// only ones two runs of one configuration may disagree on.
inline const std::vector<std::string> kTimingSummaryKeys = {
    "wall_seconds",    "run_seconds",       "compute_seconds",  "eval_seconds", "accounting_seconds",
    "compute_threads", "protocol_overhead", "grads_per_second", "cpu_share"};

// Sets the field to a valid value other than its current one; false when it finds none.
inline bool SetOtherValue(ConfigField& field) {
  const auto in_range = [&](double v) { return !field.range || field.range->Contains(v); };
  auto pick = [&](double current) {
    for (double v : {current + 1, current * 2, current / 2, current + 0.5,
                     field.range ? field.range->min : 0.0, field.range ? field.range->max : 1.0, 0.25, 3.0}) {
      if (v != current && std::isfinite(v) && in_range(v)) return v;
    }
    return current;
  };
  return std::visit(
      [&](const auto& target) -> bool {
        if constexpr (std::is_same_v<std::decay_t<decltype(target)>, EnumBinding>) {  // another of its words
          const std::string current = target.Get();
          for (const std::string& choice : field.choices) {
            if (choice != current) return target.Set(choice);
          }
          return false;
        } else {
          auto* p = target;
          using T = std::decay_t<decltype(*p)>;
          if constexpr (std::is_same_v<T, bool>) {
            *p = !*p;
            return true;
          } else if constexpr (std::is_same_v<T, std::string>) {
            for (const std::string& choice : field.choices) {
              if (choice != *p) {
                *p = choice;
                return true;
              }
            }
            if (!field.choices.empty()) return false;
            *p = *p + "x";
            return true;
          } else if constexpr (std::is_same_v<T, std::vector<int64_t>> ||
                               std::is_same_v<T, std::vector<double>>) {
            if (!p->empty()) {
              p->clear();
            } else if (std::is_same_v<T, std::vector<int64_t>> && field.range &&
                       field.range->Contains(field.range->min)) {
              p->push_back(
                  static_cast<typename T::value_type>(field.range->min));  // client ids: client 0 exists
            } else {
              p->push_back(static_cast<typename T::value_type>(pick(0.0)));
            }
            return true;
          } else {
            const double v = pick(static_cast<double>(*p));
            if (v == static_cast<double>(*p)) return false;
            *p = static_cast<T>(v);
            return true;
          }
        }
      },
      field.target);
}

// A CSV without its timing columns (wall_seconds: the threads runtime's wall clock).
inline std::string WithoutTimings(const std::string& csv) {
  std::istringstream in(csv);
  std::ostringstream out;
  std::vector<bool> keep;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream row(line);
    while (std::getline(row, cell, ',')) cells.push_back(cell);
    if (keep.empty()) {
      for (const std::string& name : cells) keep.push_back(!name.ends_with("seconds"));
    }
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i >= keep.size() || keep[i]) out << cells[i] << ',';
    }
    out << '\n';
  }
  return out.str();
}

// What a run reports (metrics.csv, clients.csv, summary.json), apart from the machine's measurements and
// the echo of its configuration: what changing a key the run reads must change.
inline std::string OutputsWithoutTimings(const std::string& metrics_csv, const std::string& clients_csv,
                                         nlohmann::json summary) {
  summary.erase("config");
  for (const std::string& key : kTimingSummaryKeys) summary.erase(key);
  return WithoutTimings(metrics_csv) + "\n" + WithoutTimings(clients_csv) + "\n" + summary.dump();
}

}  // namespace asyncdp::testing
