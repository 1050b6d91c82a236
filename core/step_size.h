// Round step sizes of DP-SGD (docs/theory.md §2, Table 1; parameters in §8.3):
//
//   kInverseLinear (schedule A, strongly convex):   eta(t) = eta0 / (1 + beta * t)
//   kInverseSqrt   (schedule B, plain convex / non-convex, used in the experiments):
//                                                    eta(t) = eta0 / (1 + beta * sqrt(t))
//   kConstant:                                       eta(t) = eta0
//
// and the step size of local round i is eta_bar_i = eta(t_i) with t_i = sum_{j<i} s_j (t_0 = 0): t counts
// per-example gradient computations (iterations) before the round, not rounds. With Poisson sampling the
// realised sizes enter t (spec §10 item 15). No 1/s_i factor is applied here (§2.5: the round update is
// eta_bar_i * U with U the noisy sum).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace asyncdp {

enum class StepSizeSchedule {
  kConstant,       // eta0
  kInverseLinear,  // eta0 / (1 + beta t)        (Table 1, strongly convex)
  kInverseSqrt,    // eta0 / (1 + beta sqrt(t))  (Table 1, plain convex and non-convex)
};

std::string_view ToString(StepSizeSchedule schedule);  // "constant", "inverse_linear", "inverse_sqrt"
// Parses the names above; throws ConfigError(key_path, ...) listing the valid names otherwise.
StepSizeSchedule ParseStepSizeSchedule(std::string_view name, std::string_view key_path);

struct StepSizeOptions {
  // Default: the plain-convex experiments of §8.3 (schedule B).
  StepSizeSchedule schedule = StepSizeSchedule::kInverseSqrt;
  // eta0 > 0: the step size of round 0. Table 1 uses 0.1 for every problem.
  double eta0 = 0.1;
  // beta >= 0 (unit: 1/iteration for kInverseLinear, 1/sqrt(iteration) for kInverseSqrt; unused by
  // kConstant). Table 1: 0.001 strongly convex, 0.01 plain convex and non-convex. Larger beta decays faster.
  double beta = 0.01;
};

// Throws ConfigError("<key_prefix>.eta0" / ".beta", ...) for eta0 <= 0, beta < 0 or non-finite values.
void ValidateStepSizeOptions(const StepSizeOptions& options, std::string_view key_prefix);

// eta(t) for t >= 0 iterations (Table 1). Pure.
double StepSize(const StepSizeOptions& options, double iterations);

// eta_bar_i = eta(t_i), t_i = sum_{j<i} s_j, given t_i (§2.3). Pure.
inline double RoundStepSize(const StepSizeOptions& options, int64_t iterations_before_round) {
  return StepSize(options, static_cast<double>(iterations_before_round));
}

// eta_bar_i for round i = earlier_sample_sizes.size(), from the realised sizes s_0 .. s_{i-1}.
double RoundStepSize(const StepSizeOptions& options, std::span<const int64_t> earlier_sample_sizes);

}  // namespace asyncdp
