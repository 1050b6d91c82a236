// JSON has no infinity or NaN: every output (summary.json, audits, `asyncdp account` / `calc`) writes a
// non-finite number (an unbounded ε, no solution) as null. One rule, one helper.
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>

namespace asyncdp::sim {

template <typename Json = nlohmann::json>
Json FiniteOrNull(double x) {
  return std::isfinite(x) ? Json(x) : Json(nullptr);
}

// The CLI's outputs keep their keys in the order written (ordered_json): the same rule for them.
inline nlohmann::ordered_json OrderedNumber(double x) { return FiniteOrNull<nlohmann::ordered_json>(x); }

}  // namespace asyncdp::sim
