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

}  // namespace asyncdp::sim
