// The per-bound list behind a random-allocation epsilon
// (core/accounting/random_allocation/random_allocation.h: each bound with its direction, whether it applies
// here, its epsilon, the theorem it comes from and, for the Renyi bound, its order), as `asyncdp account
// --sampling random_allocation` and a check-in run's summary.json both write it. One writer, so the two
// outputs cannot drift apart.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/accounting/random_allocation/random_allocation.h"
#include "sim/json_number.h"

namespace asyncdp::sim {

// Json: nlohmann::json (summary.json) or nlohmann::ordered_json (the CLI's outputs keep their key order).
// `value` names each bound's value: "epsilon" (RandomAllocationEpsilon) or "delta" (RandomAllocationDelta).
template <typename Json = nlohmann::json>
Json AllocationBoundsJson(const accounting::RandomAllocationResult& r, const char* value = "epsilon") {
  Json bounds = Json::array();
  for (const accounting::AllocationBoundValue& b : r.bounds) {
    Json entry = {{"bound", std::string(accounting::ToString(b.bound))},
                  {"direction", std::string(accounting::ToString(b.direction))},
                  {"applicable", b.applicable},
                  {value, b.applicable ? FiniteOrNull<Json>(b.value) : Json(nullptr)},
                  {"theorem", std::string(accounting::BoundTheorem(b.bound))}};
    if (b.bound == accounting::AllocationBound::kRenyiRemove) entry["order"] = b.order;
    if (!b.note.empty()) entry["note"] = b.note;
    bounds.push_back(std::move(entry));
  }
  return bounds;
}

}  // namespace asyncdp::sim
