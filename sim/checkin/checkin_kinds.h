// The words of the [checkin] section as enums (sim/config_enum.h): the random check-in variant and the
// server's rule per step (Balle et al. 2020; docs/random_allocation.md, docs/theory.md §7).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "sim/config_enum.h"

namespace asyncdp::sim {
namespace checkin {

// fixed_window (Alg. 1, §3) | averaged (Alg. 2, §4) | sliding_window (§5)
enum class Variant : uint8_t { kFixedWindow, kAveraged, kSlidingWindow };
// The rule the run uses: one uniform checked-in client per step (+ a dummy update when empty), or the
// average of every checked-in client (empty steps skipped).
enum class StepRule : uint8_t { kOneClient, kAverage };
// checkin.step_rule as configured: auto picks by variant (CheckInOptions::step_rule is the resolved rule).
enum class StepRuleChoice : uint8_t { kAuto, kOneClient, kAverage };

}  // namespace checkin

template <>
struct EnumNames<checkin::Variant> {
  static constexpr std::array<std::string_view, 3> kNames{"fixed_window", "averaged", "sliding_window"};
};
template <>
struct EnumNames<checkin::StepRule> {
  static constexpr std::array<std::string_view, 2> kNames{"one_client", "average"};
};
template <>
struct EnumNames<checkin::StepRuleChoice> {
  static constexpr std::array<std::string_view, 3> kNames{"auto", "one_client", "average"};
};

}  // namespace asyncdp::sim
