#include "sim/privacy.h"

#include <cmath>
#include <optional>
#include <string>

#include "sim/json_number.h"

namespace asyncdp::sim {
namespace {

using accounting::AccountantKind;

std::string ThreatModel(const Experiment& e) {
  std::string text =
      e.privacy.user_level
          ? "User-level DP: each client's whole local data set, against (a) the server, which sees every (i, U) "
            "the client sends (U = its round's clipped sum, clipped as a whole to dp.client_clip, plus noise "
            "N(0, sigma^2 client_clip^2 I) added by the client; every round of a participating client is seen, so "
            "no sampling amplification applies at the user level), and (b) anyone who sees "
          : "Record-level DP of each client's local data set against (a) the server, which sees every (i, U) a "
            "client sends (U = clipped sum + noise; no batch size or other data-dependent value), and (b) anyone "
            "who sees ";
  text +=
      "the outputs (global models, the released columns of metrics.csv/clients.csv, summary.json except "
      "\"diagnostics\"). Assumes the batch-sampling and noise randomness is secret from both";
  text += e.privacy.secure_noise
              ? " (secure noise: drawn from OS entropy, never written out)"
              : " (reproducible mode: it is derived from the seed, which the outputs record, so the guarantee "
                "holds only against a party that does not know the seed)";
  text +=
      ". Not covered: timing (wall_seconds, run_seconds, compute_seconds, eval_seconds, protocol_overhead, "
      "cpu_share, grads_per_second, and in the threads and MPI runtimes the arrival order behind staleness, "
      "exclusions and global_rounds: they depend on realised batch sizes; public by assumption), the non-private "
      "\"diagnostics\" and diag_* columns (only with output.diagnostics = true), and N_c, s_i, T, delta "
      "(public)";
  if (e.proactive.options.enabled) {
    const bool private_checks =
        !e.proactive.check_plans.empty() && e.proactive.check_plans.front().private_checks;
    text += private_checks
                ? ". With accuracy targets each check releases the held-out accuracy through a Gaussian mechanism "
                  "whose epsilon (proactive.clients[].accuracy_checks) protects the held-out rows; the pause "
                  "pattern is a post-processing of covered outputs, and each client's epsilon is that of every "
                  "round of its admitted plan"
                : ". With accuracy targets and targets.holdout_public = true the held-out rows of each client's "
                  "checks are not protected (public by assumption); the pause pattern depends on them, and each "
                  "client's epsilon is that of every round of its admitted plan, so it bounds every pattern";
  }
  text += ". Every released field and its status: docs/design.md, \"Released fields\"";
  return text;
}

// The mechanism every epsilon below is about: delta, noise, clipping, sampler, neighbours, unit, threat
// model.
void MechanismSection(const Experiment& e, nlohmann::json& out) {
  const PrivacySetup& p = e.privacy;
  out["delta"] = e.privacy.delta;
  out["noise_multiplier"] = e.privacy.sigma;
  out["clip"] = e.config.dp.clip;
  out["sampling"] = std::string(ToString(e.privacy.sampling()));
  out["neighbours"] = std::string(ToString(NaturalNeighbours(e.privacy.sampling())));
  out["noise"] = p.secure_noise ? "secure: lattice rounding + discrete Gaussian from OS entropy (not reproducible)"
                                : "gaussian: Philox stream keyed by the seed (reproducible)";
  out["unit"] = p.user_level ? "client" : "record";
  out["scope"] = p.user_level
                     ? "per client: user-level DP of each client's whole local data set (neighbours add or remove "
                       "one client); every epsilon is the maximum over clients, for each accountant separately"
                     : "per client: record-level DP of each client's local data set; every epsilon is the maximum "
                       "over clients, for each accountant separately";
  out["public"] = kPublicAssumption;
  out["threat_model"] = ThreatModel(e);
}

// Which accountant calibrated sigma and halts clients, and the adaptive-clipping release it composes.
void AccountingSection(const Experiment& e, nlohmann::json& out) {
  const PrivacySetup& p = e.privacy;
  out["accountant"] = std::string(accounting::ToString(p.accountant));  // calibrates, halts, running epsilon
  out["calibrated_by"] = p.calibrated ? nlohmann::json(out["accountant"]) : nlohmann::json(nullptr);
  out["halted_by"] = std::isfinite(p.epsilon_budget) ? nlohmann::json(out["accountant"]) : nlohmann::json(nullptr);
  out["epsilon_budget"] = FiniteOrNull(p.epsilon_budget);
  if (p.secure_noise) out["accounted_noise_multiplier"] = p.AccountedSigma(p.sigma);
  if (p.clip_count_sigma > 0) {
    out["adaptive_clipping"] = {
        {"count_noise_std", p.clip_count_sigma},
        {"accounted_noise_multiplier", p.AccountedSigma(p.sigma)},
        {"note", "each round releases the clipped sum (noise multiplier sigma, sensitivity C) and the count of "
                 "unclipped examples (noise count_noise_std, sensitivity 1) from one sampled batch; together one "
                 "Gaussian mechanism of multiplier (sigma^-2 + count_noise_std^-2)^(-1/2), which every "
                 "accountant composes (Andrew et al. 2021)"}};
  }
}

const accounting::WorstClient* Find(const accounting::PopulationReport& report, AccountantKind kind) {
  auto it = report.worst.find(kind);
  return it == report.worst.end() ? nullptr : &it->second;
}

// The client attaining each accountant's epsilon (the values themselves: HeadlineEpsilons) and the
// assumptions each rests on.
void AccountantsSection(const Experiment& e, const accounting::PopulationReport& report,
                        nlohmann::json& out) {
  const PrivacySetup& p = e.privacy;
  nlohmann::json worst, assumptions;
  auto put = [&](const char* name, const accounting::WorstClient* w) {
    worst[name] = w && w->client >= 0 ? nlohmann::json(w->client) : nlohmann::json(nullptr);
  };
  auto find = [&](AccountantKind kind) { return Find(report, kind); };
  put("rdp", find(AccountantKind::kRdp));
  put("pld", find(AccountantKind::kPld));
  put("pld_lower", find(AccountantKind::kPld) ? &report.pld_lower : nullptr);
  put("gdp", find(AccountantKind::kGdp));
  put("proactive", &report.proactive.epsilon);
  if (e.privacy.sampling() == SamplingModel::kRandomAllocation) {
    put("random_allocation", find(AccountantKind::kRandomAllocation));
    // What ran: the window every client's batches were allocated over (config: dp.allocation_*).
    const accounting::AllocationWindow& w = p.options.allocation;
    nlohmann::json allocation = {{"steps", w.steps}, {"allocations", w.allocations}};
    if (const auto* ra = find(AccountantKind::kRandomAllocation)) {
      allocation["renyi_order"] = FiniteOrNull(ra->result.order);  // null: a PLD-based bound binds
    }
    out["allocation"] = allocation;
  }
  if (const auto* rdp = find(AccountantKind::kRdp)) out["rdp_order"] = FiniteOrNull(rdp->result.order);
  if (const auto* gdp = find(AccountantKind::kGdp)) out["gdp_mu"] = FiniteOrNull(gdp->result.mu);
  for (const auto& [kind, a] : report.assumptions) assumptions[std::string(accounting::ToString(kind))] = a.ToString();
  if (report.assumptions.count(AccountantKind::kPld)) {
    accounting::Assumptions lower = report.assumptions.at(AccountantKind::kPld);
    lower.bound = accounting::BoundKind::kLowerBound;
    assumptions["pld_lower"] = lower.ToString();
  }
  for (const auto& [kind, why] : report.unavailable) assumptions[std::string(accounting::ToString(kind))] = "unavailable: " + why;
  assumptions["proactive"] =
      "Proactive-DP relation (6), sigma = sqrt(2(eps + ln(1/delta))/eps); a guarantee only when Theorem 3.1 or B.4 "
      "holds for every client that ran a round (see proactive.valid) and sampling is Poisson with Gaussian noise; "
      "add_remove neighbours";
  assumptions["public"] = kPublicAssumption;
  out["worst_client"] = worst;
  out["assumptions"] = assumptions;
}

// Relation (6)'s validity: Theorem 3.1 / B.4's conditions for the client shown.
nlohmann::json ProactiveConditionsJson(const accounting::PopulationReport& report) {
  const accounting::ProactiveSummary& pro = report.proactive;
  nlohmann::json proactive;
  proactive["valid"] = pro.valid;
  proactive["invalid_clients"] = pro.invalid_clients;
  if (!pro.not_applicable.empty()) proactive["not_applicable"] = pro.not_applicable;
  if (!pro.undefined.empty()) proactive["undefined"] = pro.undefined;
  if (pro.shown_client >= 0 && !pro.shown.conditions.empty()) {
    proactive["conditions_client"] = pro.shown_client;
    proactive["epsilon_of_sigma"] = FiniteOrNull(pro.shown.epsilon);
    proactive["gamma"] = FiniteOrNull(pro.shown.gamma);
    proactive["theorem_3_1_holds"] = pro.shown.theorem_3_1;
    proactive["theorem_b4_holds"] = pro.shown.theorem_b4;
    for (const auto& cond : pro.shown.conditions) {
      proactive["conditions"][cond.id] = {{"lhs", FiniteOrNull(cond.lhs)},
                                          {"rhs", FiniteOrNull(cond.rhs)},
                                          {"holds", cond.holds},
                                          {"margin", FiniteOrNull(cond.margin)},
                                          {"statement", cond.statement}};
    }
  }
  return proactive;
}

}  // namespace

nlohmann::json PrivacySummaryJson(const Experiment& e, const accounting::PopulationReport& report) {
  nlohmann::json out;
  MechanismSection(e, out);
  if (!e.privacy.enabled) {
    out["assumptions"] = "dp.enabled = false: no noise, no privacy guarantee";
    return out;
  }
  AccountingSection(e, out);
  out["clients_with_rounds"] = report.clients_with_rounds;
  AccountantsSection(e, report, out);
  out["proactive"] = ProactiveConditionsJson(report);
  return out;
}

std::vector<HeadlineEpsilon> HeadlineEpsilons(const Experiment& e,
                                              const accounting::PopulationReport& report) {
  const bool enabled = e.privacy.enabled;
  auto of = [&](const accounting::WorstClient* w) {
    return enabled && w ? FiniteOrNone(w->epsilon) : std::nullopt;
  };
  auto entry = [](const char* accountant, std::optional<double> epsilon, bool lower_bound = false) {
    return HeadlineEpsilon{.accountant = accountant, .epsilon = epsilon, .lower_bound = lower_bound};
  };
  const bool pld = Find(report, AccountantKind::kPld) != nullptr;
  std::vector<HeadlineEpsilon> headline = {
      entry("rdp", of(Find(report, AccountantKind::kRdp))),
      entry("pld", of(Find(report, AccountantKind::kPld))),
      entry("pld_lower", of(pld ? &report.pld_lower : nullptr), true),
      entry("gdp", of(Find(report, AccountantKind::kGdp))),
      // ε(6) is a guarantee only where Theorem 3.1 or B.4 holds for every client: otherwise it is no bound
      // at all (it can sit below the PLD lower bound), so none, with the failed conditions in "proactive".
      entry("proactive", report.proactive.valid ? of(&report.proactive.epsilon) : std::nullopt),
  };
  if (enabled && e.privacy.sampling() == SamplingModel::kRandomAllocation) {
    headline.push_back(entry("random_allocation", of(Find(report, AccountantKind::kRandomAllocation))));
  }
  return headline;
}

}  // namespace asyncdp::sim
