// PlanClientPhases, where a proactive client's batch sizes s_j, rounds T_j and noise σ_j are decided
// (Appendix E.1; docs/theory.md §9): the plan it builds is the phases it reports, steps continue t across
// phases, and the client halts at the last round within ε_target under every enforced accountant.
#include "sim/proactive/phase_plan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "core/accounting/account.h"
#include "core/accounting/dp_event.h"
#include "core/sampling.h"
#include "sim/round_plan.h"

namespace asyncdp::sim {
namespace {

ProactiveOptions CalibratedOptions() {
  ProactiveOptions o;
  o.enabled = true;
  o.sizing = PhaseSizing::kCalibrated;
  o.sigmas = {1.0, 1.5};
  o.epochs = {2.0, 1.0};
  o.sample_size = 40;
  o.step.schedule = StepSizeSchedule::kInverseLinear;
  o.step.eta0 = 0.1;
  o.step.beta = 0.001;
  o.schedule.step_rule = StepSizeSchedule::kInverseLinear;
  o.accounting.sampling = SamplingModel::kPoisson;
  return o;
}

// ε of the first `rounds` rounds of `plan` under `kind` at δ, composed directly from the plan's rounds.
double EpsilonOf(const RoundPlan& plan, int64_t rounds, double delta, accounting::AccountantKind kind,
                 const accounting::AccountantOptions& options) {
  const accounting::DpEventPtr event =
      accounting::ScheduleEvent(plan.PrivacySchedule(rounds, [](double s) { return s; }), options);
  accounting::AccountQuery query;
  query.delta = delta;
  query.precision = accounting::PrecisionOf(options);
  query.pld_lower_bound = false;
  return accounting::Account(*event, kind, query).result.epsilon;
}

// The plan holds exactly the phases reported: s_j, σ_j for T_j rounds each, phase_ends cumulative, and
// η̄_i = RoundStep at t_i = Σ_{j<i} s_j, continuing across phases.
void ExpectPlanIsThePhases(const ClientPhasePlan& p, const ProactiveOptions& o) {
  int64_t round = 0, t = 0;
  for (size_t j = 0; j < p.phases.size(); ++j) {
    const PlannedPhase& phase = p.phases[j];
    for (int64_t i = 0; i < phase.rounds; ++i, ++round) {
      const auto r = static_cast<size_t>(round);
      ASSERT_LT(r, p.plan.sample_sizes.size());
      EXPECT_EQ(p.plan.sample_sizes[r], phase.sample_size) << "round " << round;
      EXPECT_EQ(p.plan.noise_multipliers[r], phase.sigma) << "round " << round;
      EXPECT_DOUBLE_EQ(p.plan.step_sizes[r], RoundStep(o.schedule, o.step, t, phase.sample_size)) << round;
      t += phase.sample_size;
    }
    EXPECT_EQ(p.phase_ends[j], round);
  }
  EXPECT_EQ(p.plan.rounds(), round);
}

TEST(PlanClientPhases, CalibratedPhasesSpendTheTargetAndTheClientHaltsAtTheBudget) {
  const ProactiveOptions o = CalibratedOptions();
  const ClientTarget target{.accuracy = 0.8, .epsilon = 2.0, .delta = 1e-5};
  const int64_t n = 2000;
  const ClientPhasePlan p = PlanClientPhases(o, target, n);
  ASSERT_TRUE(p.admitted) << p.reason;
  ASSERT_EQ(p.phases.size(), 2u);
  // s_j = schedule.sample_size; T_j = round(k_j N / s); σ_j = c · phase_sigmas[j] for one c.
  EXPECT_EQ(p.phases[0].sample_size, 40);
  EXPECT_EQ(p.phases[0].rounds, 100);
  EXPECT_EQ(p.phases[1].rounds, 50);
  const double c = p.phases[0].sigma / o.sigmas[0];
  EXPECT_GT(c, 0.0);
  EXPECT_NEAR(p.phases[1].sigma, c * o.sigmas[1], 1e-12 * c);
  EXPECT_TRUE(std::isnan(p.phases[0].e1_epsilon));  // no E.1 analysis in this sizing
  ExpectPlanIsThePhases(p, o);

  // c is the smallest multiplier that meets ε_target over every phase, under RDP and PLD (the enforced
  // accountants): the whole plan fits, and so the client may run it all.
  double worst = 0.0;
  for (const auto kind : o.budget_accountants) {
    worst = std::max(worst, EpsilonOf(p.plan, p.plan.rounds(), target.delta, kind, o.accounting));
  }
  EXPECT_LE(worst, target.epsilon * (1 + 1e-9));
  EXPECT_GT(worst, 0.95 * target.epsilon);  // and spends it: a calibrated c, not a safe overestimate
  EXPECT_EQ(p.budget_rounds, p.plan.rounds());
}

TEST(PlanClientPhases, E1PhasesAreTheCalculatorsAndTheTightAccountantsCapThePlan) {
  ProactiveOptions o = CalibratedOptions();
  o.sizing = PhaseSizing::kE1;
  o.sigmas = {0.0, 2.0};  // σ_0 = 0: derived by the calculator
  o.epochs = {1.0, 1.0};
  const ClientTarget target{.accuracy = 0.8, .epsilon = 0.45, .delta = 1e-5};
  const int64_t n = 60000;
  const ClientPhasePlan p = PlanClientPhases(o, target, n);
  ASSERT_TRUE(p.admitted) << p.reason;
  ASSERT_FALSE(p.phases.empty());
  ExpectPlanIsThePhases(p, o);
  for (const PlannedPhase& phase : p.phases) {
    EXPECT_GE(phase.sample_size, 1);
    EXPECT_LE(phase.sample_size, n);
    // T_j = floor(K_j / s_j): never more gradients than the E.1 analysis covers (K_j = k_j N).
    EXPECT_LE(phase.rounds * phase.sample_size, n);
    EXPECT_LE(phase.e1_epsilon, target.epsilon * (1 + 1e-12));
    EXPECT_GT(phase.sigma, 0.0);
  }
  // The budget: the largest prefix within ε_target under RDP and PLD, computed here from the plan.
  ASSERT_GE(p.budget_rounds, 1);
  ASSERT_LE(p.budget_rounds, p.plan.rounds());
  for (const auto kind : o.budget_accountants) {
    EXPECT_LE(EpsilonOf(p.plan, p.budget_rounds, target.delta, kind, o.accounting), target.epsilon * (1 + 1e-9))
        << accounting::ToString(kind);
  }
  if (p.budget_rounds < p.plan.rounds()) {
    double next = 0.0;
    for (const auto kind : o.budget_accountants) {
      next = std::max(next, EpsilonOf(p.plan, p.budget_rounds + 1, target.delta, kind, o.accounting));
    }
    EXPECT_GT(next, target.epsilon);
  }
}

TEST(PlanClientPhases, AClientWithoutAnAdmissibleFirstPhaseDoesNotJoinAndSaysWhy) {
  ProactiveOptions o = CalibratedOptions();
  o.sizing = PhaseSizing::kE1;
  o.sigmas = {8.0};
  o.epochs = {1.0};
  // At σ = 8 no batch size meets ε = 0.01 (E.1): the client is not admitted and takes no round.
  const ClientPhasePlan p = PlanClientPhases(o, ClientTarget{.accuracy = 0.8, .epsilon = 0.01, .delta = 1e-5}, 2000);
  EXPECT_FALSE(p.admitted);
  EXPECT_TRUE(p.phases.empty());
  EXPECT_EQ(p.plan.rounds(), 0);
  EXPECT_EQ(p.budget_rounds, 0);
  EXPECT_NE(p.reason.find("no admissible"), std::string::npos) << p.reason;
}

TEST(PlanClientPhases, CalibratedBatchesNeverExceedTheClientsRecords) {
  ProactiveOptions o = CalibratedOptions();
  o.sample_size = 500;
  const ClientPhasePlan p = PlanClientPhases(o, ClientTarget{.accuracy = 0.8, .epsilon = 4.0, .delta = 1e-5}, 300);
  ASSERT_TRUE(p.admitted) << p.reason;
  for (const PlannedPhase& phase : p.phases) EXPECT_EQ(phase.sample_size, 300);
  ExpectPlanIsThePhases(p, o);
}

}  // namespace
}  // namespace asyncdp::sim
