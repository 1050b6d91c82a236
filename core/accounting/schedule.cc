#include "core/accounting/schedule.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"

namespace asyncdp::accounting {

void ValidateRoundGroup(const RoundGroup& g, std::string_view where, size_t index) {
  const auto key = [&] { return std::string(where) + "[" + std::to_string(index) + "]"; };
  if (!(g.q > 0.0 && g.q <= 1.0)) {
    throw ConfigError(key() + ".q", "sampling rate must be in (0, 1], got " + std::to_string(g.q));
  }
  if (!(g.sigma > 0.0) || !std::isfinite(g.sigma)) {
    throw ConfigError(key() + ".sigma",
                      "noise multiplier must be positive and finite, got " + std::to_string(g.sigma));
  }
  if (g.count < 0) throw ConfigError(key() + ".count", "must be >= 0, got " + std::to_string(g.count));
}

void ValidateSchedule(const Schedule& schedule, std::string_view where) {
  for (size_t i = 0; i < schedule.size(); ++i) ValidateRoundGroup(schedule[i], where, i);
}

Schedule CompactSchedule(const Schedule& schedule) {
  Schedule sorted;
  for (const RoundGroup& g : schedule) {
    if (g.count > 0) sorted.push_back(g);
  }
  std::sort(sorted.begin(), sorted.end(), [](const RoundGroup& a, const RoundGroup& b) {
    return a.q != b.q ? a.q < b.q : a.sigma < b.sigma;
  });
  Schedule out;
  for (const RoundGroup& g : sorted) {
    if (!out.empty() && out.back().q == g.q && out.back().sigma == g.sigma) {
      out.back().count += g.count;
    } else {
      out.push_back(g);
    }
  }
  return out;
}

int64_t TotalRounds(const Schedule& schedule) {
  int64_t total = 0;
  for (const RoundGroup& g : schedule) total += g.count;
  return total;
}

}  // namespace asyncdp::accounting
