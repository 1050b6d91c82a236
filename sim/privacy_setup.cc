#include "sim/privacy_setup.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include "core/error.h"
#include "core/sampling.h"
#include "core/secure_noise.h"

namespace asyncdp::sim {

// dp.sigma_schedule spreads its entries over equal parts of each plan: with more entries than a plan has
// rounds, some entries would never be used — refused, naming the key.
void CheckSigmaScheduleFits(const std::vector<double>& schedule, const PlanTable& plans) {
  for (const RoundPlan& plan : plans) {
    if (schedule.size() > static_cast<size_t>(plan.rounds())) {
      throw ConfigError("dp.sigma_schedule",
                        fmt::format("has {} entries but a client's plan has {} rounds: entries would be skipped "
                                    "(each entry covers an equal part of the plan); give at most {} (one per round "
                                    "is a per-round list)",
                                    schedule.size(), plan.rounds(), plan.rounds()));
    }
  }
}

namespace {

using ScheduleKey = std::vector<std::tuple<double, double, int64_t>>;

ScheduleKey KeyOf(const accounting::Schedule& schedule) {
  ScheduleKey key;
  for (const accounting::RoundGroup& g : schedule) key.emplace_back(g.q, g.sigma, g.count);
  return key;
}

}  // namespace

namespace {

void ThrowUnlessApplies(const PrivacySetup& p) {
  const std::string why = accounting::ApplicableLimitation(*p.EventOf({}), p.accountant);
  if (why.empty()) return;
  throw ConfigError("dp.accountant",
                    why + (p.secure_noise ? " (dp.secure_noise = true: set dp.accountant = \"rdp\")"
                           : p.options.sampling == SamplingModel::kRandomAllocation
                               ? " (dp.sampling = random_allocation: set dp.accountant = \"random_allocation\")"
                               : ""));
}

}  // namespace

void CheckAccountantApplies(const TrainConfig& config) {
  if (!config.dp.enabled) return;
  PrivacySetup p;
  p.accountant = ToAccountantKind(config.dp.accountant);
  p.options.sampling = config.dp.sampling;
  // The window's size does not decide which accountant applies (m and k are resolved from the data later).
  if (p.options.sampling == SamplingModel::kRandomAllocation) p.options.allocation = {1, 1, 1.0};
  p.secure_noise = config.dp.secure_noise;
  p.options.noise = p.secure_noise ? accounting::NoiseModel::kDiscreteGaussian : accounting::NoiseModel::kGaussian;
  ThrowUnlessApplies(p);
}

accounting::DpEventPtr PrivacySetup::EventOf(const accounting::Schedule& schedule) const {
  return accounting::ScheduleEvent(schedule, options);
}

double PrivacySetup::AccountedSigma(double sigma) const {
  sigma *= sigma_scale;
  if (clip_count_sigma > 0) return CombinedSigma(sigma, clip_count_sigma);
  if (!secure_noise) return sigma;
  return ChooseSecureNoiseLattice(sigma, clip, dimension).effective_sigma;
}

// A round of adaptive clipping releases the clipped sum + N(0, σ²C²I) (sensitivity C) and the unclipped
// count + N(0, σ_b²) (sensitivity 1) from the same sampled batch. Scaled to unit noise the two are one
// Gaussian mechanism whose sensitivity vector has norm sqrt(σ^-2 + σ_b^-2): a Gaussian of multiplier
// (σ^-2 + σ_b^-2)^(-1/2), subsampled like the batch (Andrew et al. 2021, Theorem 1; docs/theory.md §2).
double CombinedSigma(double sigma, double count_sigma) {
  return 1.0 / std::sqrt(1.0 / (sigma * sigma) + 1.0 / (count_sigma * count_sigma));
}

accounting::Schedule PrivacySetup::ForUnit(accounting::Schedule schedule) const {
  if (!user_level) return schedule;
  // docs/theory.md §4, "User-level DP": neighbours differ in a whole client, and the server sees every
  // round that client sends: T Gaussian releases (sensitivity C_u, noise σ C_u), composed without
  // amplification.
  for (accounting::RoundGroup& g : schedule) g.q = 1.0;
  return accounting::CompactSchedule(schedule);
}

PrivacySetup PrivacySetup::RecordLevel() const {
  PrivacySetup record = *this;
  record.user_level = false;
  record.sigma_scale = sigma_scale * client_clip / clip;
  record.epsilon_budget = std::numeric_limits<double>::infinity();
  return record;
}

accounting::Schedule PrivacySetup::ClientSchedule(const RoundPlan& plan, int64_t rounds) const {
  return ForUnit(plan.PrivacySchedule(rounds, [this](double sigma) { return AccountedSigma(sigma); }));
}

accounting::Schedule PrivacySetup::AppliedSchedule(const RoundPlan& plan, int64_t prefix,
                                                   const std::set<int64_t>& early) const {
  if (options.sampling == SamplingModel::kRandomAllocation && !early.empty()) {
    // The allocation accountant counts started windows as ceil(rounds / m); a round delivered early may
    // start a window the prefix has not reached, so account every round up to the last one applied (a
    // superset of the applied rounds: more rounds never lower epsilon).
    return ClientSchedule(plan, std::max(prefix, *early.rbegin() + 1));
  }
  return ForUnit(plan.PrivacySchedule(prefix, early, [this](double sigma) { return AccountedSigma(sigma); }));
}

PrivacySetup ResolvePrivacy(const TrainConfig& config, PlanTable& plans, SamplingModel sampling,
                            double delta, int64_t dimension) {
  PrivacySetup p;
  p.enabled = config.dp.enabled;
  p.accountant = ToAccountantKind(config.dp.accountant);
  p.options.sampling = sampling;
  if (sampling == SamplingModel::kRandomAllocation) {
    // m and k are resolved (config.dp.allocation_steps > 0) by BuildExperiment before this runs.
    p.options.allocation = {config.dp.allocation_steps, config.dp.allocation_k, 1.0};
  }
  p.secure_noise = config.dp.secure_noise;
  p.options.noise = p.secure_noise ? accounting::NoiseModel::kDiscreteGaussian : accounting::NoiseModel::kGaussian;
  p.delta = delta;
  p.clip = config.dp.clip;
  p.dimension = dimension;
  p.adaptive_clip = config.dp.clip_mode == ClipMode::kAdaptive;
  if (p.adaptive_clip && p.enabled) p.clip_count_sigma = config.dp.clip_count_sigma;
  if (config.dp.unit == PrivacyUnit::kClient) {
    p.user_level = true;
    p.client_clip = config.dp.client_clip;
  }
  for (const RoundPlan& plan : plans) p.budget_rounds.push_back(plan.rounds());
  // A non-private run adds no noise: its σ is 0 whatever dp.sigma says (that key is then not read), so no
  // report states a noise multiplier the run did not use.
  p.sigma = p.enabled ? config.dp.sigma : 0.0;
  if (!p.enabled) return p;
  ThrowUnlessApplies(p);
  // The calibration's last probes are the budget halts' whole plans at the calibrated σ: composed once.
  accounting::EpsilonMemo memo;
  if (config.dp.sigma == 0.0) {
    // Calibrate the accounted multiplier σ_acc over every distinct plan, then the configured σ whose
    // lattice (secure noise) reaches it.
    std::vector<accounting::DpEventPtr> clients;
    std::map<ScheduleKey, bool> seen;
    for (const RoundPlan& plan : plans) {
      // σ relative to the calibrated multiplier: 1, or the dp.sigma_schedule profile (heterogeneous rounds
      // compose exactly, so every allocation spends exactly dp.epsilon).
      RoundPlan profile = plan;
      SetNoise(profile, 1.0, config.dp.sigma_schedule);
      accounting::Schedule relative = p.ForUnit(profile.PrivacySchedule(profile.rounds(), [](double m) { return m; }));
      if (seen.emplace(KeyOf(relative), true).second) clients.push_back(p.EventOf(relative));
    }
    const accounting::CalibrationResult r = accounting::Calibrate(
        accounting::ScaledFamily(std::move(clients)), config.dp.epsilon, delta, p.accountant, p.precision(), &memo);
    if (!r.found) {
      throw ConfigError("dp.epsilon", "no noise multiplier up to 1e4 meets epsilon = " +
                                          std::to_string(config.dp.epsilon) + " for the planned rounds");
    }
    double sigma = r.sigma;
    if (p.clip_count_sigma > 0) {
      // The gradient's σ such that it and the count together are the calibrated multiplier.
      if (p.clip_count_sigma <= r.sigma) {
        throw ConfigError("dp.clip_count_sigma",
                          fmt::format("the count's noise {} alone spends more than epsilon = {} allows (the "
                                      "rounds need a combined multiplier of {:.6g}): raise dp.clip_count_sigma",
                                      p.clip_count_sigma, config.dp.epsilon, r.sigma));
      }
      sigma = 1.0 / std::sqrt(1.0 / (r.sigma * r.sigma) - 1.0 / (p.clip_count_sigma * p.clip_count_sigma));
      while (p.AccountedSigma(sigma) < r.sigma) sigma *= 1.0 + 1e-12;  // round-off: never below the target
    } else if (p.secure_noise) {
      // σ_acc = s γ / (C + γ sqrt(d)) with s ≈ σ C / γ: scale up, then step until the lattice reaches it.
      const SecureNoiseLattice lattice = ChooseSecureNoiseLattice(sigma, p.clip, dimension);
      sigma *= 1.0 + lattice.granularity * std::sqrt(static_cast<double>(dimension)) / p.clip;
      while (p.AccountedSigma(sigma) < r.sigma) sigma *= 1.0 + 1e-9;
    }
    p.sigma = sigma;
    p.calibrated = true;
    spdlog::info("calibrated sigma = {:.6g} for epsilon = {} (delta = {:.3g}) by the {} accountant", sigma,
                 config.dp.epsilon, delta, ToString(config.dp.accountant));
  }
  plans.ForEachDistinct([&](RoundPlan& plan) { SetNoise(plan, p.sigma, config.dp.sigma_schedule); });
  CheckSigmaScheduleFits(config.dp.sigma_schedule, plans);
  if (config.dp.epsilon > 0.0 && config.dp.halt_at_budget) {
    // The halt round of each distinct plan, from the public schedule before training.
    p.epsilon_budget = config.dp.epsilon;
    std::map<ScheduleKey, int64_t> halts;
    int64_t halted = 0, never_started = 0;
    for (size_t c = 0; c < plans.size(); ++c) {
      const accounting::Schedule schedule = p.ClientSchedule(plans[c], plans[c].rounds());
      auto [it, fresh] = halts.emplace(KeyOf(schedule), 0);
      if (fresh) {
        it->second = accounting::RoundsWithinBudget(
            [&](int64_t t) { return p.EventOf(accounting::SchedulePrefix(schedule, t)); },
            accounting::TotalRounds(schedule), p.epsilon_budget, delta, p.accountant, p.precision(), &memo);
      }
      p.budget_rounds[c] = it->second;
      halted += it->second < plans[c].rounds() ? 1 : 0;
      never_started += it->second == 0 ? 1 : 0;
    }
    if (never_started > 0) {
      spdlog::warn("dp.epsilon = {}: the budget does not allow a single round for {} of {} clients; they will "
                   "not train", config.dp.epsilon, never_started, plans.size());
    } else if (halted > 0) {
      spdlog::info("dp.epsilon = {}: {} of {} clients halt before the end of their plan ({} accountant)",
                   config.dp.epsilon, halted, plans.size(), ToString(config.dp.accountant));
    }
  }
  return p;
}

std::vector<accounting::ClientRounds> ClientRoundsOf(const PrivacySetup& privacy, const PlanTable& plans,
                                                     const std::vector<int64_t>& rounds_done) {
  std::vector<accounting::ClientRounds> clients;
  clients.reserve(plans.size());
  for (size_t c = 0; c < plans.size(); ++c) {
    clients.push_back({static_cast<int64_t>(c), static_cast<double>(plans[c].n_records),
                       privacy.ClientSchedule(plans[c], rounds_done[c])});
  }
  return clients;
}

accounting::PopulationReport AccountRun(const PrivacySetup& privacy, const PlanTable& plans,
                                        const std::vector<int64_t>& rounds_done) {
  accounting::PopulationOptions options;
  options.delta = privacy.delta;
  options.accounting = privacy.options;
  if (privacy.sampling() == SamplingModel::kRandomAllocation) {
    // The subsampled-Gaussian accountants are listed too: the report says why they do not apply.
    options.accountants = {accounting::AccountantKind::kRandomAllocation, accounting::AccountantKind::kRdp,
                           accounting::AccountantKind::kPld, accounting::AccountantKind::kGdp};
  }
  return accounting::ReportPopulation(ClientRoundsOf(privacy, plans, rounds_done), options);
}

}  // namespace asyncdp::sim
