// `asyncdp account --sampling random_allocation`: every random-allocation / check-in bound of
// core/accounting/random_allocation (through the accountant facade) beside Poisson subsampling at the same
// expected rate p0 k / m, and for one window the shuffling baseline of Feldman, McMillan & Talwar 2021.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/accounting/dp_event.h"

namespace asyncdp::apps {

struct RandomAllocationCliArgs {
  int64_t steps = 0;           // m, rounds per window
  int64_t allocations = 1;     // k, rounds each participating record joins per window
  int64_t windows = 1;         // E
  double participation = 1.0;  // p0
  double sigma = 0.0;
  double delta = 0.0;
  // Prefix of the argument names in error messages: "--" for the CLI, "" for Python keyword arguments.
  std::string option_prefix = "--";
};

// The mechanism: random allocation of the Gaussian randomizer (multiplier args.sigma) over E windows of m
// steps, as an event for the accountant facade (validated: ConfigError names the flag).
accounting::DpEventPtr RandomAllocationEvent(const RandomAllocationCliArgs& args);

// The JSON object printed by the command (inputs validated here; ConfigError names the flag).
nlohmann::ordered_json AccountRandomAllocation(const RandomAllocationCliArgs& args);

// `account --sampling random_allocation --sigma S --at-epsilon E`: the smallest delta at E (a point of the
// privacy curve delta(epsilon)): per direction the best bound, the worse direction, and every bound.
nlohmann::ordered_json RandomAllocationAtEpsilon(const RandomAllocationCliArgs& args, double epsilon);

// `account --sampling random_allocation --epsilon E`: the smallest sigma (1e-4 relative, by bisection
// through the accountant facade, accounting/calibration.h) whose reported epsilon is <= `epsilon`;
// args.sigma is ignored. Fields: the inputs, then random_allocation {sigma, epsilon, ...} (sigma null when
// no sigma up to 1e4 suffices).
nlohmann::ordered_json CalibrateRandomAllocation(const RandomAllocationCliArgs& args, double epsilon);

}  // namespace asyncdp::apps
