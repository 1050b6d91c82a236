// Private accuracy checks of the proactive framework (Figure 15, step 4; docs/theory.md §9, "Private
// accuracy checks"). Each check releases a client's held-out accuracy through the Gaussian mechanism:
// accuracy + N(0, (σ_check Δ)²), Δ = 1/(n_h − 1) the most one held-out row (added or removed) can move an
// accuracy over n_h rows. A client's checks are planned before training from public values: one at each
// phase end, and while paused at most `paused_checks` re-checks, on the global rounds that are multiples of
// a stride (⌈T_max / paused_checks⌉, so G ≤ T_max bounds them). Their composition, by the PLD accountant,
// is the held-out rows' ε; by default σ_check is calibrated so that it is 5% of the client's ε_target and
// the phases get the rest (ε_target − ε_check, with δ split 95% / 5%): by basic composition every record of
// the client — in the training rows or the held-out rows, whichever side of the split it lands on — is
// covered by (ε_target, δ_target), and the pause / re-join pattern is a post-processing of covered outputs.
// targets.holdout_public = true restores exact checks: the held-out rows are then public by assumption.
#pragma once

#include <cstdint>

#include "sim/config.h"

namespace asyncdp::sim {

// The share of ε_target (and of δ_target) the checks get by default.
inline constexpr double kCheckBudgetShare = 0.05;

struct CheckPlan {
  bool private_checks = false;  // false: exact checks, held-out rows public by assumption
  double sigma = 0.0;           // σ_check, the noise multiplier
  double sensitivity = 0.0;     // Δ = 1/(n_h − 1)
  int64_t phase_checks = 0;     // one per phase
  int64_t paused_checks = 0;    // re-checks while paused, at most
  int64_t planned = 0;          // phase_checks + paused_checks: what the accounting composes
  int64_t stride = 1;           // paused clients re-check on global rounds k ≡ 0 (mod stride); set once T is known
  double epsilon = 0.0;         // of the planned checks, PLD, at delta
  double delta = 0.0;
  double noise_std() const { return sigma * sensitivity; }
};

// ε of `checks` Gaussian releases with noise multiplier `sigma` (add/remove neighbours), PLD upper bound.
double ChecksEpsilon(double sigma, int64_t checks, double delta);

// The check plan of a client with `holdout_rows` held-out rows, `phases` phases and (ε_target, δ_target);
// targets.check_sigma > 0 fixes σ_check, 0 calibrates it to kCheckBudgetShare · ε_target. Throws
// ConfigError (targets.check_sigma) when a given σ_check costs more than ε_target.
CheckPlan PlanChecks(const TargetsConfig& targets, int64_t phases, int64_t holdout_rows, double epsilon_target,
                     double delta_target);

// Sets the paused re-check stride once the longest plan (T_max, a bound on G) is known.
void SetCheckStride(CheckPlan& plan, int64_t longest_plan_rounds);

}  // namespace asyncdp::sim
