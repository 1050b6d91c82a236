#include "sim/proactive/phase_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/accounting/account.h"
#include "core/accounting/dp_event.h"
#include "core/accounting/proactive/proactive_calculator.h"
#include "core/error.h"

namespace asyncdp::sim {
namespace {

// Appends T rounds of batch size s and noise σ to `plan`, with η̄_i = η(t_i) continuing t across phases.
void AppendRounds(RoundPlan& plan, const ProactiveOptions& options, int64_t s, int64_t rounds, double sigma) {
  int64_t t = plan.iterations();
  for (int64_t i = 0; i < rounds; ++i) {
    plan.sample_sizes.push_back(s);
    plan.step_sizes.push_back(RoundStep(options.schedule, options.step, t, s));
    plan.noise_multipliers.push_back(sigma);
    t += s;
  }
}

int64_t BudgetRounds(const RoundPlan& plan, const ClientTarget& target, const ProactiveOptions& o) {
  const accounting::Schedule schedule = plan.PrivacySchedule(plan.rounds(), [](double s) { return s; });
  int64_t rounds = plan.rounds();
  for (accounting::AccountantKind kind : o.budget_accountants) {
    rounds = std::min(rounds, accounting::RoundsWithinBudget(
                                  [&](int64_t t) {
                                    return accounting::ScheduleEvent(accounting::SchedulePrefix(schedule, t), o.accounting);
                                  },
                                  accounting::TotalRounds(schedule), target.epsilon, target.delta, kind,
                                  accounting::PrecisionOf(o.accounting)));
  }
  return rounds;
}

void PlanE1(const ProactiveOptions& o, const ClientTarget& target, int64_t n, ClientPhasePlan& out) {
  accounting::MultiPhaseInputs in;
  in.n_records = static_cast<double>(n);
  in.delta = target.delta;
  in.epsilon_target = target.epsilon;
  in.mode = o.gamma_mode;
  for (size_t j = 0; j < o.sigmas.size(); ++j) {
    accounting::CalculatorPhase phase;
    phase.iterations = std::max(1.0, std::round(o.epochs[j] * static_cast<double>(n)));
    if (!(j == 0 && o.sigmas[j] == 0.0)) phase.sigma = o.sigmas[j];
    in.phases.push_back(phase);
  }
  const accounting::MultiPhaseResult r = accounting::RunMultiPhaseCalculator(in);
  for (size_t j = 0; j < r.phases.size(); ++j) {
    const accounting::PhaseResult& p = r.phases[j];
    if (!p.admissible) {
      out.reason = fmt::format("phase {}: no admissible batch size ({})", j, p.stop_reason);
      break;
    }
    PlannedPhase phase;
    phase.sample_size = p.sample_size;
    phase.rounds = std::max<int64_t>(1, static_cast<int64_t>(std::floor(p.rounds)));
    phase.sigma = p.sigma;
    phase.e1_epsilon = p.epsilon;
    phase.e1_gamma = p.gamma;
    phase.e1_theta = p.theta;
    out.phases.push_back(phase);
    out.reason = p.stop_reason;
  }
}

void PlanCalibrated(const ProactiveOptions& o, const ClientTarget& target, int64_t n, ClientPhasePlan& out) {
  const int64_t s = std::min(o.sample_size, n);
  RoundPlan relative;
  relative.n_records = n;
  for (size_t j = 0; j < o.sigmas.size(); ++j) {
    PlannedPhase phase;
    phase.sample_size = s;
    phase.rounds = std::max<int64_t>(1, std::llround(o.epochs[j] * static_cast<double>(n) / static_cast<double>(s)));
    phase.sigma = o.sigmas[j];
    phase.e1_epsilon = phase.e1_gamma = phase.e1_theta = std::numeric_limits<double>::quiet_NaN();
    AppendRounds(relative, o, s, phase.rounds, o.sigmas[j]);
    out.phases.push_back(phase);
  }
  const accounting::Schedule profile = relative.PrivacySchedule(relative.rounds(), [](double m) { return m; });
  double scale = 0.0;
  for (accounting::AccountantKind kind : o.budget_accountants) {
    const accounting::CalibrationResult c =
        accounting::Calibrate(accounting::ScaledFamily({accounting::ScheduleEvent(profile, o.accounting)}),
                              target.epsilon, target.delta, kind, accounting::PrecisionOf(o.accounting));
    if (!c.found) {
      out.phases.clear();
      out.reason = fmt::format("no noise multiplier up to 1e4 meets epsilon_target = {}", target.epsilon);
      return;
    }
    scale = std::max(scale, c.sigma);
  }
  for (PlannedPhase& phase : out.phases) phase.sigma *= scale;
  out.reason = fmt::format("sigma_j = {:.6g} * phase_sigmas[j] spends epsilon_target", scale);
}

}  // namespace

ProactiveOptions ResolveProactiveOptions(const TrainConfig& config, SamplingModel sampling) {
  ProactiveOptions o;
  o.enabled = config.targets.on();
  o.sizing = config.proactive.phase_sizing;
  o.sigmas = config.proactive.phase_sigmas;
  o.epochs = config.proactive.phase_epochs;
  o.gamma_mode = config.proactive.gamma_mode;
  o.holdout_fraction = config.targets.holdout_fraction;
  o.sample_size = config.schedule.sample_size;
  o.step.schedule = config.schedule.step_rule;
  o.step.eta0 = config.schedule.eta0;
  o.step.beta = config.schedule.beta;
  o.schedule = config.schedule;  // the round step's rule (RoundStep): averaging and the large-s cap
  o.accounting.sampling = sampling;
  if (config.targets.enforce == EnforceMode::kDpAccountant) {
    o.budget_accountants = {ToAccountantKind(config.dp.accountant)};
  }
  return o;
}

ClientTarget ResolveClientTarget(const TrainConfig& config, int64_t client, int64_t n_records) {
  const TargetsConfig& t = config.targets;
  ClientTarget target;
  target.accuracy = t.client_accuracy.empty() ? t.accuracy : t.client_accuracy[static_cast<size_t>(client)];
  target.epsilon = t.client_epsilon.empty() ? t.epsilon : t.client_epsilon[static_cast<size_t>(client)];
  target.delta = t.delta > 0 ? t.delta : 1.0 / static_cast<double>(n_records);
  return target;
}

ClientPhasePlan PlanClientPhases(const ProactiveOptions& options, const ClientTarget& target, int64_t n_records) {
  ClientPhasePlan out;
  out.plan.n_records = n_records;
  if (options.sizing == PhaseSizing::kE1) {
    PlanE1(options, target, n_records, out);
  } else {
    PlanCalibrated(options, target, n_records, out);
  }
  out.admitted = !out.phases.empty();
  for (const PlannedPhase& phase : out.phases) {
    AppendRounds(out.plan, options, phase.sample_size, phase.rounds, phase.sigma);
    out.phase_ends.push_back(out.plan.rounds());
  }
  out.budget_rounds = out.admitted ? BudgetRounds(out.plan, target, options) : 0;
  if (out.admitted && out.budget_rounds == 0) {
    out.admitted = false;
    out.reason = "the tight accountants allow no round within epsilon_target";
  }
  return out;
}

PhaseEpsilon EpsilonOfRounds(const RoundPlan& plan, int64_t rounds, double delta,
                             const accounting::AccountantOptions& options) {
  PhaseEpsilon e;
  if (rounds <= 0) return e;
  const accounting::DpEventPtr event =
      accounting::ScheduleEvent(plan.PrivacySchedule(rounds, [](double s) { return s; }), options);
  accounting::AccountQuery query;
  query.delta = delta;
  query.precision = accounting::PrecisionOf(options);
  query.pld_lower_bound = false;
  const accounting::AccountantKind kinds[] = {accounting::AccountantKind::kRdp, accounting::AccountantKind::kPld,
                                              accounting::AccountantKind::kGdp};
  const std::vector<accounting::Accounted> all = accounting::AccountAll(*event, kinds, query);
  for (const accounting::Accounted& a : all) {
    if (!a.available) throw ConfigError(std::string(accounting::ToString(a.kind)), a.reason);
  }
  e.rdp = all[0].result.epsilon;
  e.pld = all[1].result.epsilon;
  e.gdp = all[2].result.epsilon;
  return e;
}

}  // namespace asyncdp::sim
