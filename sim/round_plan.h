// The a-priori per-client plan of Algorithm 2 (Setup): the sample-size sequence {s_i}, the sampling rates
// q_i = s_i / N_c, the noise multipliers σ_i and the round step sizes {η̄_i}, all fixed before training
// (Algorithm 2, Appendix A; docs/theory.md §3). η̄_i = η(t_i) with t_i = Σ_{j<i} s_j (§2.3, Table 1); with Poisson sampling s_i is
// the expected batch size, so the plan stays a priori. The plan is public (docs/design.md, threat model):
// the runtimes and the server use it instead of anything a round realises.
#pragma once

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "core/accounting/schedule.h"
#include "core/step_size.h"
#include "sim/config.h"

namespace asyncdp::sim {

// η̄_i of a round of s examples that starts after t gradient computations (docs/theory.md §2): η(t), scaled
// by 1/s when the round's update is averaged (schedule.divide_round_update_by_sample_size), and by cap/s
// above schedule.step_cap_sample_size. The one rule every plan (constant, list, proactive phases) follows.
double RoundStep(const ScheduleConfig& schedule, const StepSizeOptions& step, int64_t t, int64_t s);

struct RoundPlan {
  int64_t n_records = 0;                  // N_c
  std::vector<int64_t> sample_sizes;      // s_i, i = 0..T-1
  std::vector<double> step_sizes;         // η̄_i (divided by s_i when that option is on)
  std::vector<double> noise_multipliers;  // σ_i (0 = no noise); set once σ is known (SetNoise)
  // Random allocation (dp.sampling = random_allocation): every round's rate is k/m, whatever s_i is (s_i
  // then only sets the plan's length and step sizes); 0 = q_i = s_i / N_c.
  double allocation_rate = 0.0;
  int64_t rounds() const { return static_cast<int64_t>(sample_sizes.size()); }
  double rate(int64_t i) const;           // q_i = s_i / N_c, or allocation_rate when set
  int64_t iterations() const;             // K = Σ s_i
  int64_t max_sample_size() const;        // s_max
  bool operator==(const RoundPlan&) const = default;

  // The subsampled-Gaussian rounds an accountant composes: rounds [0, rounds) as run-length groups (q_i,
  // σ_i) in order, with each σ replaced by accounted_sigma(σ) (the identity, or secure noise's effective
  // multiplier). Needs σ_i > 0.
  template <typename SigmaMap>
  accounting::Schedule PrivacySchedule(int64_t rounds, const SigmaMap& accounted_sigma) const;
  // Rounds [0, prefix) plus the rounds in `extra` (delivered out of order), grouped (not in order).
  template <typename SigmaMap>
  accounting::Schedule PrivacySchedule(int64_t prefix, const std::set<int64_t>& extra,
                                       const SigmaMap& accounted_sigma) const;
};

// Builds the plan for a client with n_records records: T from schedule.rounds, or the smallest T with
// Σ s_i ≥ K where K = schedule.iterations or round(epochs·N_c), at least 1. A round whose s_i exceeds
// n_records is refused (ConfigError on schedule.sample_size or schedule.sample_size_list): it cannot be
// drawn from the client's records, and a clamped s would run and account another plan. Noise multipliers
// start at 0 (SetNoise).
RoundPlan MakeRoundPlan(const ScheduleConfig& schedule, int64_t n_records);

// s_i of round i as the schedule configures it, before the check against N_c: the one definition that
// MakeRoundPlan and the configuration check of the implied round count (config_io.cc) both use. Linear
// sizes are rounded to nearest and never below 1.
int64_t SampleSizeAt(const ScheduleConfig& schedule, int64_t round);

// σ_i = sigma for every round.
void SetNoise(RoundPlan& plan, double sigma);
// σ_i = sigma · m_j for round i in part j = floor(i·J / T) of the plan's T rounds (dp.sigma_schedule:
// J = multipliers.size() equal parts, J = T is a per-round list); empty multipliers = constant σ.
void SetNoise(RoundPlan& plan, double sigma, const std::vector<double>& multipliers);

template <typename SigmaMap>
accounting::Schedule RoundPlan::PrivacySchedule(int64_t rounds, const SigmaMap& accounted_sigma) const {
  accounting::Schedule schedule;
  for (int64_t i = 0; i < std::min(rounds, this->rounds()); ++i) {
    const double q = rate(i), sigma = accounted_sigma(noise_multipliers[static_cast<size_t>(i)]);
    if (!schedule.empty() && schedule.back().q == q && schedule.back().sigma == sigma) {
      ++schedule.back().count;
    } else {
      schedule.push_back({q, sigma, 1});
    }
  }
  return schedule;
}

template <typename SigmaMap>
accounting::Schedule RoundPlan::PrivacySchedule(int64_t prefix, const std::set<int64_t>& extra,
                                                const SigmaMap& accounted_sigma) const {
  accounting::Schedule schedule = PrivacySchedule(prefix, accounted_sigma);
  for (int64_t i : extra) {
    if (i < prefix || i >= rounds()) continue;
    schedule.push_back({rate(i), accounted_sigma(noise_multipliers[static_cast<size_t>(i)]), 1});
  }
  return schedule;
}

}  // namespace asyncdp::sim
