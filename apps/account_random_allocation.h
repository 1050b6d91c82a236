// `asyncdp account --sampling random_allocation`: every random-allocation / check-in bound of
// core/accounting/random_allocation (through the accountant facade) beside Poisson subsampling at the same
// expected rate p0 k / m, and for one window the shuffling baseline of Feldman, McMillan & Talwar 2021.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

namespace asyncdp::apps {

struct RandomAllocationCliArgs {
  int64_t steps = 0;           // m, rounds per window
  int64_t allocations = 1;     // k, rounds each participating record joins per window
  int64_t windows = 1;         // E
  double participation = 1.0;  // p0
  double sigma = 0.0;
  double delta = 0.0;
};

// The JSON object printed by the command (inputs validated here; ConfigError names the flag).
nlohmann::ordered_json AccountRandomAllocation(const RandomAllocationCliArgs& args);

}  // namespace asyncdp::apps
