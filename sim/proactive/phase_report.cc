#include "sim/proactive/phase_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>

#include "core/check.h"

namespace asyncdp::sim {
namespace {

std::string Number(double value) { return std::isfinite(value) ? fmt::format("{:.6g}", value) : std::string(); }

double HoldoutAccuracy(const Experiment& e, size_t c, const Eigen::VectorXf& w) {
  return e.model
      ->Evaluate(std::span<const float>(w.data(), static_cast<size_t>(w.size())), e.proactive.holdouts[c])
      .accuracy;
}

// First round of phase j.
int64_t PhaseStart(const ClientPhasePlan& plan, size_t j) { return j == 0 ? 0 : plan.phase_ends[j - 1]; }

// "pause@k=12", with the held-out accuracy "(acc=0.7812)" only as a diagnostic (output.diagnostics). The
// last phase's end says whether the check met the target ("target_reached" / "target_missed", as the stop
// column of clients.csv), so a client that ends below its target is never logged as a plain stop.
std::string EventText(const TargetEvent& event, double target, bool diagnostics) {
  const char* kind = event.kind == TargetEventKind::kPause    ? "pause"
                     : event.kind == TargetEventKind::kResume ? "rejoin"
                     : event.kind == TargetEventKind::kStop   ? (event.accuracy >= target ? "target_reached"
                                                                                            : "target_missed")
                                                              : "check";
  if (!diagnostics) return fmt::format("{}@k={}", kind, event.global_round);
  return fmt::format("{}@k={}(acc={:.4f})", kind, event.global_round, event.accuracy);
}

int64_t CountEvents(const ClientOutcome& client, TargetEventKind kind) {
  if (!client.tracker) return 0;
  const TargetTracker* tracker = &*client.tracker;
  return std::count_if(tracker->events().begin(), tracker->events().end(),
                       [&](const TargetEvent& ev) { return ev.kind == kind; });
}

// ε ≤ ε_target under every accountant the budget is enforced under.
bool WithinTarget(const Experiment& e, const PhaseEpsilon& eps, double target) {
  for (accounting::AccountantKind kind : e.proactive.options.budget_accountants) {
    if ((kind == accounting::AccountantKind::kRdp ? eps.rdp : eps.pld) > target) return false;
  }
  return true;
}

}  // namespace

int64_t AdmittedRounds(const Experiment& e, size_t client) {
  const ClientPhasePlan& plan = e.proactive.phase_plans[client];
  if (!plan.admitted) return 0;
  const int64_t budget = e.privacy.budget_rounds[client];
  return budget >= 0 ? std::min(plan.plan.rounds(), budget) : plan.plan.rounds();
}

std::string PhasesCsv(const Experiment& e, const std::vector<ClientOutcome>& outcomes, bool diagnostics) {
  // epsilon_*_realised_tally: the rounds run up to the end of the phase, composed — a tally, not a guarantee
  // (the guarantee is the admitted plan's, summary.json); accuracy_at_end only as a diagnostic.
  std::string out =
      "client,target_accuracy,target_epsilon,delta,phase,sigma,clip,s,planned_rounds,rounds_run,gradients_run,"
      "e1_epsilon,e1_gamma,e1_theta,epsilon_rdp_realised_tally,epsilon_pld_realised_tally,"
      "epsilon_gdp_realised_tally,";
  out += diagnostics ? "diag_accuracy_at_end,events\n" : "events\n";
  for (size_t c = 0; c < outcomes.size(); ++c) {
    const ClientPhasePlan& plan = e.proactive.phase_plans[c];
    const ClientTarget& target = e.proactive.targets[c];
    const ClientOutcome& client = outcomes[c];
    if (!plan.admitted) {
      out += fmt::format("{},{},{},{:.6g},,,,,,0,0,,,,,,,{}not admitted: {}\n", c, target.accuracy, target.epsilon,
                         target.delta, diagnostics ? "," : "", plan.reason);
      continue;
    }
    ASYNCDP_CHECK(client.tracker.has_value());
    const TargetTracker* tracker = &*client.tracker;
    for (size_t j = 0; j < plan.phases.size(); ++j) {
      const PlannedPhase& phase = plan.phases[j];
      const int64_t start = PhaseStart(plan, j);
      const int64_t run = std::clamp<int64_t>(client.rounds - start, 0, phase.rounds);
      std::string eps_cells = ",,";
      if (run > 0) {
        const PhaseEpsilon eps = EpsilonOfRounds(plan.plan, start + run, target.delta, e.privacy.options);
        eps_cells = fmt::format("{},{},{}", Number(eps.rdp), Number(eps.pld), Number(eps.gdp));
      } else {
        eps_cells = ",,";
      }
      double accuracy = std::nan("");
      std::string events;
      for (const TargetEvent& ev : tracker->events()) {
        const bool ends_here = ev.phase == static_cast<int64_t>(j) && ev.kind != TargetEventKind::kResume;
        const bool starts_here = ev.phase == static_cast<int64_t>(j) && ev.kind == TargetEventKind::kResume;
        if (ev.kind == TargetEventKind::kPhaseEnd && ends_here) accuracy = ev.accuracy;
        if ((ends_here && ev.kind != TargetEventKind::kPhaseEnd) || starts_here) {
          events += (events.empty() ? "" : ";") + EventText(ev, tracker->target(), diagnostics);
        }
      }
      out += fmt::format("{},{},{},{:.6g},{},{:.6g},{},{},{},{},{},{},{},{},{},{}{}\n", c, target.accuracy,
                         target.epsilon, target.delta, j, phase.sigma, e.config.dp.clip, phase.sample_size,
                         phase.rounds, run, run * phase.sample_size, Number(phase.e1_epsilon),
                         Number(phase.e1_gamma), Number(phase.e1_theta), eps_cells,
                         diagnostics ? Number(accuracy) + "," : std::string(), events);
    }
  }
  return out;
}

std::string ProactiveClientsHeader(bool diagnostics) {
  return std::string(",target_accuracy,target_epsilon,phases_planned,phase,pauses,rejoins,admitted_rounds") +
         (diagnostics ? ",diag_holdout_accuracy" : "");
}

std::string ProactiveClientCells(const Experiment& e, const ClientOutcome& client,
                                 const Eigen::VectorXf& final_model, bool diagnostics) {
  const auto c = static_cast<size_t>(client.id);
  const TargetTracker* tracker = client.tracker ? &*client.tracker : nullptr;
  const int64_t phase = tracker == nullptr ? -1 : std::min(tracker->phase(), tracker->phases() - 1);
  std::string cells = fmt::format(",{},{},{},{},{},{},{}", e.proactive.targets[c].accuracy,
                                  e.proactive.targets[c].epsilon, e.proactive.phase_plans[c].phases.size(),
                                  phase, CountEvents(client, TargetEventKind::kPause),
                                  CountEvents(client, TargetEventKind::kResume), AdmittedRounds(e, c));
  if (diagnostics) cells += fmt::format(",{:.6g}", HoldoutAccuracy(e, c, final_model));
  return cells;
}

nlohmann::json ProactiveSummaryJson(const Experiment& e, const std::vector<ClientOutcome>& outcomes,
                                    const Eigen::VectorXf& final_model, bool diagnostics) {
  nlohmann::json list = nlohmann::json::array();
  for (size_t c = 0; c < outcomes.size(); ++c) {
    const ClientPhasePlan& plan = e.proactive.phase_plans[c];
    const ClientTarget& target = e.proactive.targets[c];
    const ClientOutcome& client = outcomes[c];
    // The guarantee: every round the client could have run (AdmittedRounds); the tally of the rounds that
    // ran is kept beside it, labelled.
    const int64_t admitted = AdmittedRounds(e, c);
    const PhaseEpsilon eps = EpsilonOfRounds(plan.plan, admitted, target.delta, e.privacy.options);
    const PhaseEpsilon tally = EpsilonOfRounds(plan.plan, client.rounds, target.delta, e.privacy.options);
    nlohmann::json entry = {{"client", c},
                            {"target_accuracy", target.accuracy},
                            {"target_epsilon", target.epsilon},
                            {"delta", target.delta},
                            {"admitted", plan.admitted},
                            {"plan_note", plan.reason},
                            {"rounds", client.rounds},
                            {"budget_rounds", plan.budget_rounds},
                            {"pauses", CountEvents(client, TargetEventKind::kPause)},
                            {"rejoins", CountEvents(client, TargetEventKind::kResume)},
                            {"paused_at_end", client.paused},
                            {"admitted_rounds", admitted},
                            {"epsilon_rdp", eps.rdp},
                            {"epsilon_pld", eps.pld},
                            {"epsilon_gdp_approximation", eps.gdp},
                            {"epsilon_realised_tally",
                             {{"rounds", client.rounds},
                              {"rdp", tally.rdp},
                              {"pld", tally.pld},
                              {"gdp_approximation", tally.gdp},
                              {"note",
                               "the rounds that ran, composed: not a guarantee (the rounds run depend on "
                               "the client's outputs); epsilon_* above is"}}},
                            {"within_target", WithinTarget(e, eps, target.epsilon)}};
    if (diagnostics) entry["diag_holdout_accuracy_final_model"] = HoldoutAccuracy(e, c, final_model);
    const CheckPlan& checks = e.proactive.check_plans[c];
    const int64_t checks_run =
        client.tracker ? CountEvents(client, TargetEventKind::kPhaseEnd) + client.tracker->paused_checks()
                       : 0;
    entry["accuracy_checks"] =
        checks.private_checks
            ? nlohmann::json{{"private", true},
                             {"noise_multiplier", checks.sigma},
                             {"noise_std", checks.noise_std()},
                             {"sensitivity", checks.sensitivity},
                             {"planned", checks.planned},
                             {"run", checks_run},
                             {"paused_check_stride", checks.stride},
                             {"epsilon", checks.epsilon},
                             {"delta", checks.delta},
                             {"training_epsilon_budget", target.epsilon - checks.epsilon},
                             {"per_record",
                              "a held-out row: (epsilon, delta) of the checks; a training row: epsilon_* of the "
                              "admitted plan, within training_epsilon_budget; any record of the client, on either "
                              "side of the split: (target_epsilon, delta) by basic composition"}}
            : nlohmann::json{{"private", false},
                             {"run", checks_run},
                             {"note", "targets.holdout_public = true: exact checks; the held-out rows are public by "
                                      "assumption and not covered by any epsilon"}};
    if (const TargetTracker* tracker = client.tracker ? &*client.tracker : nullptr; tracker != nullptr) {
      nlohmann::json checks = nlohmann::json::array();
      for (const TargetEvent& ev : tracker->events()) checks.push_back(EventText(ev, tracker->target(), diagnostics));
      entry["events"] = checks;
      int64_t phases_run = 0;
      for (size_t j = 0; j < plan.phases.size(); ++j)
        phases_run += client.rounds > PhaseStart(plan, j) ? 1 : 0;
      entry["phases_run"] = phases_run;
      if (phases_run > 0) entry["e1_epsilon"] = plan.phases[static_cast<size_t>(phases_run - 1)].e1_epsilon;
    }
    list.push_back(std::move(entry));
  }
  return {
      {"clients", list},
      {"phase_sizing", std::string(ToString(e.proactive.options.sizing))},
      {"budget_enforced_under", e.proactive.options.budget_accountants.size() == 2
                                    ? nlohmann::json({"rdp", "pld"})
                                    : nlohmann::json({std::string(ToString(e.config.dp.accountant))})},
      {"note",
       "epsilon_* of a client is that of every round of its admitted plan (up to its budget): pausing and "
       "re-joining depend on its outputs, and a paused round is the trivial mechanism, so the whole plan "
       "bounds every pattern of pauses (docs/theory.md, \"The proactive guarantee\"). Accuracy checks use "
       "each "
       "client's held-out rows: by default each check is private (a Gaussian mechanism, accuracy_checks: its "
       "epsilon protects the held-out rows and was taken from epsilon_target before the phases were "
       "planned); "
       "with targets.holdout_public they are exact and the held-out rows public by assumption. The "
       "accuracies "
       "themselves are diagnostics (output.diagnostics). e1_epsilon is the "
       "paper's Theorem B.4 analysis (Poisson sampling) treating earlier phases as if run at the newest "
       "sigma"}};
}

}  // namespace asyncdp::sim
