// The privacy side of a run, resolved once before training from the configuration and the public plans
// (docs/design.md, threat model: N_c, s_i, q_i = s_i/N_c, T and delta are public): which accountant
// calibrates σ and halts clients, σ itself (calibrated for dp.epsilon when dp.sigma = 0), the round at which
// each client's budget is spent, and how a plan's rounds become an accounting schedule. Everything is
// computed through the accountant facade (core/accounting/accountant.h); this file only adapts the
// simulator's plans to it.
#pragma once

#include <cstdint>
#include <limits>
#include <set>
#include <vector>

#include "core/accounting/account.h"
#include "core/accounting/accountant.h"
#include "core/accounting/dp_event.h"
#include "core/accounting/population.h"
#include "core/accounting/schedule.h"
#include "sim/config.h"
#include "sim/plan_table.h"
#include "sim/round_plan.h"

namespace asyncdp::sim {

struct PrivacySetup {
  bool enabled = false;  // dp.enabled: noise is added and every epsilon is accounted
  // Calibrates σ, halts clients and gives the running epsilon (dp.accountant); the report shows all.
  accounting::AccountantKind accountant = accounting::AccountantKind::kPld;
  accounting::AccountantOptions options;  // sampling model and noise model
  double delta = 0.0;
  double sigma = 0.0;        // the noise multiplier every round uses (0 when disabled)
  bool calibrated = false;   // σ came from dp.epsilon through `accountant`
  double epsilon_budget = std::numeric_limits<double>::infinity();  // halts when finite
  std::vector<int64_t> budget_rounds;  // per client: rounds its budget permits (its plan length if none)
  bool secure_noise = false;
  double clip = 0.0;         // C (secure noise: the lattice depends on it)
  double client_clip = 0.0;  // C_u (user-level DP)
  int64_t dimension = 0;     // parameters d (secure noise: the rounding's sensitivity grows with sqrt(d))
  // Adaptive clipping (dp.clip_mode = "adaptive", resolved once here): on, and the noise std of each round's
  // count of unclipped examples (sensitivity 1; 0 without DP).
  bool adaptive_clip = false;
  double clip_count_sigma = 0.0;
  // User-level DP (dp.unit = "client"): a client's rounds are composed at rate 1 (the server sees every one;
  // the record sampler does not hide a whole client). sigma_scale multiplies every σ before accounting: 1,
  // or C_u / C for the record-level view of a user-level run (noise σ C_u, record sensitivity C).
  bool user_level = false;
  double sigma_scale = 1.0;

  // The multiplier an accountant uses for a round with noise multiplier σ: σ itself; with secure noise the
  // lattice's effective multiplier (core/secure_noise.h), slightly smaller; with adaptive clipping the
  // multiplier of the round's two Gaussian releases together, (σ^-2 + σ_b^-2)^(-1/2) (docs/theory.md §2).
  double AccountedSigma(double sigma) const;
  // A plan's subsampled-Gaussian rounds as this setup accounts them: unchanged, or at rate 1 (user level).
  accounting::Schedule ForUnit(accounting::Schedule schedule) const;
  // The record-level view of a user-level setup (record sensitivity C under noise σ C_u, Poisson rates).
  PrivacySetup RecordLevel() const;
  // A schedule of this setup's rounds as a mechanism description (its sampler and noise; dp_event.h).
  accounting::DpEventPtr EventOf(const accounting::Schedule& schedule) const;
  accounting::AccountingPrecision precision() const { return {options.rdp, options.pld}; }
  SamplingModel sampling() const { return options.sampling; }  // dp.sampling, as the accountants assume it
  // Rounds [0, rounds) of `plan` as an accounting schedule.
  accounting::Schedule ClientSchedule(const RoundPlan& plan, int64_t rounds) const;
  // The rounds of `plan` applied to the global model: [0, prefix) and those in `early`.
  accounting::Schedule AppliedSchedule(const RoundPlan& plan, int64_t prefix, const std::set<int64_t>& early) const;
};

// Throws ConfigError("dp.accountant", ...) unless dp.accountant can account the mechanism the configuration
// describes — the event's own rule (core/accounting/account.h, ApplicableLimitation: random allocation only by
// its own accountant, secure noise only by RDP). Needs no data: configuration validation runs it before
// anything is loaded, and ResolvePrivacy again on the resolved mechanism.
void CheckAccountantApplies(const TrainConfig& config);

// (σ^-2 + σ_b^-2)^(-1/2): the one Gaussian that a round's gradient release (multiplier σ) and its adaptive
// clipping count (noise σ_b, sensitivity 1) are together.
double CombinedSigma(double sigma, double count_sigma);

// Resolves the privacy setup — σ is stored here, once — and fills it into every plan's noise multipliers:
// validates the combination (secure noise needs rdp), calibrates σ by `dp.accountant` for dp.epsilon when
// dp.sigma = 0 (the largest client meets the target exactly), and computes every client's budget round
// when dp.epsilon > 0 and dp.halt_at_budget. Throws ConfigError.
PrivacySetup ResolvePrivacy(const TrainConfig& config, PlanTable& plans, SamplingModel sampling,
                            double delta, int64_t dimension);

// Every client's rounds as run: rounds [0, rounds_done[c]) of its plan.
std::vector<accounting::ClientRounds> ClientRoundsOf(const PrivacySetup& privacy, const PlanTable& plans,
                                                     const std::vector<int64_t>& rounds_done);

// The population report of a finished run: per accountant, the largest epsilon over clients and which
// client attains it; the proactive theorems checked for every client.
accounting::PopulationReport AccountRun(const PrivacySetup& privacy, const PlanTable& plans,
                                        const std::vector<int64_t>& rounds_done);

}  // namespace asyncdp::sim
