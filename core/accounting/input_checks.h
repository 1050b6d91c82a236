// Checks of the accountants' numeric inputs at the boundary (a CLI flag or a configuration key): a clear
// ConfigError naming the key, exit 2 in the CLI (core/error.h). One definition for the closed forms and the
// calculators of the Proactive-DP paper.
#pragma once

#include <cmath>
#include <string>
#include <string_view>

#include "core/error.h"

namespace asyncdp::accounting {

// value > 0 and finite.
inline void RequirePositive(double value, std::string_view key) {
  if (!(value > 0.0) || !std::isfinite(value)) {
    throw ConfigError(std::string(key), "must be a positive finite number, got " + std::to_string(value));
  }
}

// delta in (0, 1).
inline void RequireDelta(double delta, std::string_view key) {
  if (!(delta > 0.0 && delta < 1.0)) {
    throw ConfigError(std::string(key), "must be in (0, 1), got " + std::to_string(delta));
  }
}

}  // namespace asyncdp::accounting
