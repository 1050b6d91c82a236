// The headline ε of a run, typed: summary.json's "epsilon" (and privacy.epsilon) is written from it, and so
// is the CLI's closing "done:" line, so the two cannot disagree and no caller reads the JSON back by key.
// Every participation policy writes the same shape, one value per accountant: asynchronous rounds the
// maximum over clients of each (docs/theory.md §7), a check-in run its random_allocation bound
// (docs/theory.md §7, "Random check-ins"), so a script reads summary["epsilon"]["..."] whatever the policy.
// An absent value means "no bound": an unbounded accountant, relation (6) outside Theorems 3.1/B.4, or no
// privacy.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace asyncdp::sim {

struct HeadlineEpsilon {
  std::string accountant;         // rdp, pld, pld_lower, gdp, proactive, random_allocation
  std::optional<double> epsilon;  // none: no bound (written as null); always finite when present
  bool lower_bound = false;       // pld_lower: a lower bound beside the upper bounds, not a guarantee
};

// A finite value, or none for ±inf and NaN (JSON has neither; they mean no bound).
std::optional<double> FiniteOrNone(double epsilon);

// {accountant: ε or null, ...}.
nlohmann::json HeadlineJson(const std::vector<HeadlineEpsilon>& headline);

// For a log line: the upper bounds, "rdp 1.23 / pld 1.1 / gdp 1.05 / proactive none", or "none".
std::string HeadlineText(const std::vector<HeadlineEpsilon>& headline);

}  // namespace asyncdp::sim
