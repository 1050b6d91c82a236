#include "core/accounting/schedule.h"

#include <cstdio>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"

namespace asyncdp::accounting {

namespace {

std::string G(double x) {  // %g: what a user typed, not std::to_string's fixed 6 decimals (0.000000)
  char text[32];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}

}  // namespace

void ValidateSamplingRate(double q, std::string_view key) {
  if (!(q > 0.0 && q <= 1.0)) {
    throw ConfigError(std::string(key), "sampling rate must be in (0, 1], got " + G(q));
  }
  if (q < kMinSamplingRate) {
    throw ConfigError(std::string(key), "sampling rate " + G(q) + " is below the accountants' domain [" +
                                            G(kMinSamplingRate) +
                                            ", 1] (more than 10^12 records per expected example)");
  }
}

void ValidateNoiseMultiplier(double sigma, std::string_view key) {
  if (!(sigma > 0.0) || !std::isfinite(sigma)) {
    throw ConfigError(std::string(key), "noise multiplier must be positive and finite, got " + G(sigma));
  }
  if (sigma < kMinNoiseMultiplier || sigma > kMaxNoiseMultiplier) {
    throw ConfigError(std::string(key), "noise multiplier " + G(sigma) + " is outside the accountants' domain [" +
                                            G(kMinNoiseMultiplier) + ", " + G(kMaxNoiseMultiplier) + "] (below " +
                                            G(kMinNoiseMultiplier) +
                                            " one release's epsilon exceeds 1e11; for a non-private run set "
                                            "dp.enabled = false)");
  }
}

void ValidateRoundGroup(const RoundGroup& g, std::string_view where, size_t index) {
  const auto key = [&] { return std::string(where) + "[" + std::to_string(index) + "]"; };
  ValidateSamplingRate(g.q, key() + ".q");
  ValidateNoiseMultiplier(g.sigma, key() + ".sigma");
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

Schedule SchedulePrefix(const Schedule& rounds_in_order, int64_t rounds) {
  Schedule prefix;
  for (const RoundGroup& g : rounds_in_order) {
    if (rounds <= 0) break;
    const int64_t take = std::min(g.count, rounds);
    if (take > 0) prefix.push_back({g.q, g.sigma, take});
    rounds -= take;
  }
  return prefix;
}

}  // namespace asyncdp::accounting
