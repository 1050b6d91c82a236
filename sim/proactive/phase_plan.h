// A client's phases (Appendix E.1 and Figure 15; docs/theory.md §9), planned before training from
// public quantities only (N_c, the targets, the phases' σ_j and K_j): each phase's batch size s_j, rounds
// T_j and noise σ_j, concatenated into the client's RoundPlan. Which phases actually run is decided during
// training by the accuracy checks (sim/proactive/target_tracker.h).
//
// Two sizings (ProactiveOptions::sizing):
//   kE1         the paper's E.1 calculator (core/accounting/proactive/proactive_calculator.h) picks the
//               largest admissible s_j for the given σ_j, so the Theorem B.4 analysis certifies
//               ε ≤ ε_target after every phase; T_j = floor(K_j / s_j) (never more gradients than analysed).
//               A client whose first phase is not admissible does not join (§6.4 step 2).
//   kCalibrated s_j = schedule.sample_size, σ_j = c·phase_sigmas[j] with c the smallest multiplier such that
//               running every phase meets ε_target under each enforced accountant (budget allocation over
//               phases, docs/theory.md).
// In both, the tight accountants cap the plan: the client halts before the first round that would take it
// past ε_target under any upper-bound accountant it reports (RDP, PLD), whatever the E.1 analysis says.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/accounting/accountant.h"
#include "core/accounting/proactive/proactive.h"
#include "core/step_size.h"
#include "sim/config.h"
#include "sim/round_plan.h"

namespace asyncdp::sim {

// Typed options of the proactive framework, resolved once from the configuration.
struct ProactiveOptions {
  bool enabled = false;                      // targets.accuracy > 0 (or per-client targets)
  PhaseSizing sizing = PhaseSizing::kE1;
  std::vector<double> sigmas;                // σ_j (kE1: absolute, first 0 = derive; kCalibrated: relative)
  std::vector<double> epochs;                // k_j
  accounting::GammaMode gamma_mode = accounting::GammaMode::kExact;
  double holdout_fraction = 0.2;
  int64_t sample_size = 26;                  // kCalibrated: s_j for every phase
  StepSizeOptions step;                      // η̄_i = η(t_i), t continuing across phases
  ScheduleConfig schedule;                   // the round step's rule (RoundStep): 1/s averaging, large-s cap
  accounting::AccountantOptions accounting;  // sampling model of the rounds
  // The accountants under which ε_target is never exceeded (targets.enforce): RDP and PLD, or dp.accountant.
  std::vector<accounting::AccountantKind> budget_accountants = {accounting::AccountantKind::kRdp,
                                                                accounting::AccountantKind::kPld};
};

ProactiveOptions ResolveProactiveOptions(const TrainConfig& config, SamplingModel sampling);

// One client's targets: overrides first, then the common values; δ = 1/N_c unless set.
struct ClientTarget {
  double accuracy = 0.0;
  double epsilon = 0.0;
  double delta = 0.0;
};
ClientTarget ResolveClientTarget(const TrainConfig& config, int64_t client, int64_t n_records);

struct PlannedPhase {
  int64_t sample_size = 0;  // s_j
  int64_t rounds = 0;       // T_j
  double sigma = 0.0;       // σ_j
  // The E.1 analysis after this phase (kE1; NaN for kCalibrated): ε covering all phases so far, γ, θ.
  double e1_epsilon = 0.0;
  double e1_gamma = 0.0;
  double e1_theta = 0.0;
};

struct ClientPhasePlan {
  bool admitted = false;
  std::string reason;                // why not admitted, or how the last phase's batch size was bounded
  std::vector<PlannedPhase> phases;  // the admissible phases, in order
  std::vector<int64_t> phase_ends;   // cumulative rounds at the end of each phase
  RoundPlan plan;                    // every phase's rounds (s_i, σ_i, η̄_i)
  // Rounds within ε_target under every budget accountant: the client halts there.
  int64_t budget_rounds = 0;
};

// Plans one client's phases. Throws ConfigError for invalid combinations.
ClientPhasePlan PlanClientPhases(const ProactiveOptions& options, const ClientTarget& target, int64_t n_records);

// ε of rounds [0, rounds) of `plan` under each accountant.
struct PhaseEpsilon {
  double rdp = 0.0;
  double pld = 0.0;
  double gdp = 0.0;  // approximation, never a guarantee
};
PhaseEpsilon EpsilonOfRounds(const RoundPlan& plan, int64_t rounds, double delta,
                             const accounting::AccountantOptions& options);

}  // namespace asyncdp::sim
