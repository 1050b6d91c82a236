#include "sim/round_plan.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "core/check.h"
#include "core/error.h"
#include "core/step_size.h"

namespace asyncdp::sim {

int64_t SampleSizeAt(const ScheduleConfig& s, int64_t round) {
  if (s.sample_sizes == SampleSizes::kList) {
    const auto& list = s.sample_size_list;
    return list[std::min<size_t>(static_cast<size_t>(round), list.size() - 1)];
  }
  if (s.sample_sizes == SampleSizes::kLinear) {
    return std::max<int64_t>(1, std::llround(static_cast<double>(s.sample_size) + s.sample_size_slope * round));
  }
  return s.sample_size;
}

double RoundPlan::rate(int64_t i) const {
  if (allocation_rate > 0.0) return allocation_rate;
  return std::min(1.0, static_cast<double>(sample_sizes[static_cast<size_t>(i)]) / static_cast<double>(n_records));
}

void SetNoise(RoundPlan& plan, double sigma) { plan.noise_multipliers.assign(plan.sample_sizes.size(), sigma); }

void SetNoise(RoundPlan& plan, double sigma, const std::vector<double>& multipliers) {
  SetNoise(plan, sigma);
  if (multipliers.empty()) return;
  const auto rounds = static_cast<size_t>(plan.rounds());
  for (size_t i = 0; i < rounds; ++i) {
    const size_t part = std::min(multipliers.size() - 1, i * multipliers.size() / rounds);
    plan.noise_multipliers[i] = sigma * multipliers[part];
  }
}

int64_t RoundPlan::iterations() const {
  return std::accumulate(sample_sizes.begin(), sample_sizes.end(), int64_t{0});
}

int64_t RoundPlan::max_sample_size() const {
  return sample_sizes.empty() ? 0 : *std::max_element(sample_sizes.begin(), sample_sizes.end());
}

double RoundStep(const ScheduleConfig& schedule, const StepSizeOptions& step, int64_t t, int64_t s) {
  double eta = RoundStepSize(step, t);
  if (schedule.divide_round_update_by_sample_size) eta /= static_cast<double>(s);
  if (schedule.step_cap_sample_size > 0 && s > schedule.step_cap_sample_size) {
    eta *= static_cast<double>(schedule.step_cap_sample_size) / static_cast<double>(s);
  }
  return eta;
}

RoundPlan MakeRoundPlan(const ScheduleConfig& schedule, int64_t n_records) {
  ASYNCDP_CHECK(n_records > 0);
  RoundPlan plan;
  plan.n_records = n_records;
  const int64_t target_iterations =
      schedule.iterations > 0 ? schedule.iterations
                              : std::max<int64_t>(1, std::llround(schedule.epochs * static_cast<double>(n_records)));
  StepSizeOptions step;
  step.schedule = schedule.step_rule;
  step.eta0 = schedule.eta0;
  step.beta = schedule.beta;
  int64_t t = 0;  // t_i = Σ_{j<i} s_j
  for (int64_t i = 0;; ++i) {
    if (schedule.rounds > 0 ? i >= schedule.rounds : t >= target_iterations) break;
    const int64_t s = SampleSizeAt(schedule, i);
    if (s > n_records) {
      // Sampling draws from the client's own records: a larger s cannot be drawn, and clamping it would
      // run (and account) something other than what the configuration says.
      throw ConfigError(
          schedule.sample_sizes == SampleSizes::kList ? "schedule.sample_size_list" : "schedule.sample_size",
          "round " + std::to_string(i) + " asks for s = " + std::to_string(s) +
              " examples but a client holds only N_c = " + std::to_string(n_records) +
              " records; lower the sample size or give clients more rows");
    }
    plan.sample_sizes.push_back(s);
    plan.step_sizes.push_back(RoundStep(schedule, step, t, s));
    t += s;
  }
  plan.noise_multipliers.assign(plan.sample_sizes.size(), 0.0);
  return plan;
}

}  // namespace asyncdp::sim
