#include "core/accounting/assumptions.h"

#include <cstdio>
#include <string>

#include "core/error.h"

namespace asyncdp::accounting {

std::string_view ToString(AccountantKind kind) {
  switch (kind) {
    case AccountantKind::kRdp:
      return "rdp";
    case AccountantKind::kPld:
      return "pld";
    case AccountantKind::kGdp:
      return "gdp";
    case AccountantKind::kProactive:
      return "proactive";
    case AccountantKind::kComposition:
      return "composition";
    case AccountantKind::kRandomAllocation:
      return "random_allocation";
  }
  return "?";
}

std::string_view ToString(BoundKind kind) {
  switch (kind) {
    case BoundKind::kUpperBound:
      return "upper_bound";
    case BoundKind::kLowerBound:
      return "lower_bound";
    case BoundKind::kApproximation:
      return "approximation";
  }
  return "?";
}

AccountantKind ParseAccountantKind(std::string_view text, std::string_view key_path) {
  if (text == "rdp") return AccountantKind::kRdp;
  if (text == "pld") return AccountantKind::kPld;
  if (text == "gdp") return AccountantKind::kGdp;
  if (text == "random_allocation") return AccountantKind::kRandomAllocation;
  throw ConfigError(std::string(key_path),
                    "expected rdp, pld, gdp or random_allocation, got '" + std::string(text) + "'");
}

std::string Assumptions::ToString() const {
  char delta_text[32];
  std::snprintf(delta_text, sizeof(delta_text), "%.6g", delta);
  std::string out = std::string(accounting::ToString(accountant)) + " " +
                    std::string(accounting::ToString(bound)) +
                    ": sampling=" + std::string(asyncdp::ToString(sampling)) +
                    " neighbours=" + std::string(asyncdp::ToString(neighbours)) + " delta=" + delta_text;
  if (!method.empty()) out += " (" + method + ")";
  return out;
}

}  // namespace asyncdp::accounting
