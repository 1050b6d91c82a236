#include "sim/config_usage.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "core/error.h"
#include "models/factory.h"
#include "sim/config_fields.h"

namespace asyncdp::sim {
namespace {

struct UsageRule {
  std::vector<std::string> keys;  // exact keys, or a section prefix ending in '.'
  // The reason the keys are unused in this configuration, or nullopt when they are read.
  std::function<std::optional<std::string>(const TrainConfig&)> unused;
};

constexpr const char* kDiagnosticsOnly =
    "it only adds non-private diagnostics (diag_* columns), and output.diagnostics = false (set it to true to opt in)";

constexpr const char* kPhasesPlanTheRounds =
    "the proactive framework plans each client's rounds from proactive.phase_epochs";

constexpr const char* kPhasesPlanSigma =
    "the proactive framework plans sigma per phase (proactive.phase_sigmas) within the budget "
    "targets.epsilon";

bool Matches(const std::string& pattern, const std::string& key) {
  return pattern.back() == '.' ? key.rfind(pattern, 0) == 0 : key == pattern;
}

bool ProactiveOn(const TrainConfig& c) { return c.targets.on(); }
bool CheckIns(const TrainConfig& c) { return c.protocol.participation == Participation::kCheckIn; }
std::optional<std::string> When(bool unused, std::string why) {
  return unused ? std::optional<std::string>(std::move(why)) : std::nullopt;
}

const std::vector<UsageRule>& Rules() {
  static const std::vector<UsageRule> rules = {
      // The virtual clock's models of compute time and message latency: the threads and MPI runtimes run in
      // wall time, where compute takes what it takes (clients.straggler_ids / delay_ids slow clients there).
      {{"clients.gradient_cost", "clients.speed", "clients.speed_sigma", "clients.latency",
        "clients.latency_mean"},
       [](const TrainConfig& c) {
         return When(
             c.protocol.runtime != RuntimeKind::kVirtual,
             fmt::format("it shapes only the virtual clock, and protocol.runtime = \"{}\" runs in wall "
                         "time (use clients.straggler_ids / clients.delay_ids to slow clients there, or "
                         "protocol.runtime = \"virtual\")",
                         ToString(c.protocol.runtime)));
       }},
      {{"clients.speed_sigma"},
       [](const TrainConfig& c) {
         return When(c.clients.speed != SpeedModel::kLognormal, "clients.speed is not \"lognormal\"");
       }},
      {{"clients.straggler_factor"},
       [](const TrainConfig& c) {
         return When(c.clients.straggler_ids.empty(), "clients.straggler_ids is empty");
       }},
      {{"clients.dropout_round"},
       [](const TrainConfig& c) {
         return When(c.clients.dropout_ids.empty(), "clients.dropout_ids is empty");
       }},
      {{"clients.delay_extra"},
       [](const TrainConfig& c) { return When(c.clients.delay_ids.empty(), "clients.delay_ids is empty"); }},
      // Random check-ins run on their own driver (sim/checkin/): one record per client, its own sampler
      // (the check-in) and server steps; the asynchronous protocol's keys do not apply. protocol.runtime
      // and protocol.worker_threads do (virtual, threads or mpi: sim/checkin/checkin_server.h).
      {{"clients.gradient_cost", "clients.speed", "clients.speed_sigma", "clients.latency",
        "clients.latency_mean"},
       [](const TrainConfig& c) {
         return When(CheckIns(c),
                     "random check-ins run one server step after another: the virtual clock's "
                     "compute and latency models do not apply to them");
       }},
      {{"protocol.delay_rule",
        "protocol.tau",
        "protocol.exclude_after",
        "protocol.staleness_exponent",
        "protocol.server_step",
        "clients.straggler_ids",
        "clients.dropout_ids",
        "clients.delay_ids",
        "dp.sampling",
        "dp.sigma_schedule",
        "dp.allocation_steps",
        "dp.allocation_k",
        "dp.halt_at_budget",
        "dp.accountant",
        "dp.clip_mode",
        "dp.clip_quantile",
        "dp.clip_lr",
        "dp.clip_count_sigma",
        "schedule.sample_sizes",
        "schedule.sample_size",
        "schedule.sample_size_list",
        "schedule.sample_size_slope",
        "schedule.iterations",
        "schedule.epochs",
        "schedule.rounds",
        "schedule.divide_round_update_by_sample_size",
        "schedule.step_cap_sample_size",
        "eval.reference_optimum",
        "eval.gradient_norm",
        "audit.canaries",
        "output.trace"},
       [](const TrainConfig& c) {
         return When(CheckIns(c),
                     "protocol.participation = \"check_in\" runs random check-ins one server step at a time "
                     "(on any protocol.runtime), the check-in as its sampler and the "
                     "random-allocation accountant ([checkin] configures it; docs/random_allocation.md)");
       }},
      // Check-ins at the record level give client j the j-th training record; only user-level check-ins
      // (dp.unit = "client") partition the rows into client data sets.
      {{"data.partition", "data.rows_per_client", "data.dirichlet_alpha"},
       [](const TrainConfig& c) {
         return When(
             CheckIns(c) && c.dp.unit != PrivacyUnit::kClient,
             "record-level check-ins give each client one record (client j holds training row j); set "
             "dp.unit = \"client\" for clients holding data sets");
       }},
      {{"dp.client_clip"},
       [](const TrainConfig& c) {
         return When(c.dp.unit != PrivacyUnit::kClient, "dp.unit is not \"client\"");
       }},
      {{"dp.clip_quantile", "dp.clip_lr", "dp.clip_count_sigma"},
       [](const TrainConfig& c) {
         return When(c.dp.clip_mode != ClipMode::kAdaptive, "dp.clip_mode is not \"adaptive\"");
       }},
      {{"protocol.worker_threads"},
       [](const TrainConfig& c) {
         return When(CheckIns(c) && c.protocol.runtime == RuntimeKind::kVirtual,
                     "check-ins on the virtual runtime compute each step on the server's own thread; set "
                     "protocol.runtime = \"threads\" to run the step's clients on worker threads");
       }},
      {{"checkin."},
       [](const TrainConfig& c) {
         return When(!CheckIns(c), "it is read only with protocol.participation = \"check_in\"");
       }},
      {{"protocol.tau"},
       [](const TrainConfig& c) {
         return When(c.protocol.delay_rule == DelayRuleKind::kUnbounded,
                     "protocol.delay_rule = \"unbounded\" has no tau");
       }},
      {{"protocol.mpi_timeout", "protocol.mpi_placement"},
       [](const TrainConfig& c) {
         return When(c.protocol.runtime != RuntimeKind::kMpi, "protocol.runtime is not \"mpi\"");
       }},
      {{"data.dirichlet_alpha"},
       [](const TrainConfig& c) {
         return When(c.data.partition != data::PartitionScheme::kDirichlet,
                     "data.partition is not \"dirichlet\"");
       }},
      {{"data.test_fraction"},
       [](const TrainConfig& c) {
         return When(!c.data.test.empty(), "data.test is set (nothing is held out)");
       }},
      {{"schedule.sample_size_list"},
       [](const TrainConfig& c) {
         return When(c.schedule.sample_sizes != SampleSizes::kList, "schedule.sample_sizes is not \"list\"");
       }},
      {{"schedule.sample_size_slope"},
       [](const TrainConfig& c) {
         return When(c.schedule.sample_sizes != SampleSizes::kLinear,
                     "schedule.sample_sizes is not \"linear\"");
       }},
      // How long a client trains: T = schedule.rounds when > 0, else the rounds that reach
      // K = schedule.iterations when > 0, else K = epochs * N_c (MakeRoundPlan, sim/round_plan.cc). The
      // first positive one decides; the ones after it are not read. An override of rounds on a file that
      // gives epochs is the file's key left unread by an override: a warning, not a refusal.
      {{"schedule.epochs"},
       [](const TrainConfig& c) {
         return When(c.schedule.rounds > 0, "schedule.rounds > 0 fixes T, the local rounds (K is not read)");
       }},
      {{"schedule.iterations"},  // 0 ("K from the other keys") agrees with any T
       [](const TrainConfig& c) {
         return When(c.schedule.rounds > 0 && c.schedule.iterations != 0,
                     "schedule.rounds > 0 fixes T, the local rounds (K is not read)");
       }},
      {{"schedule.epochs"},
       [](const TrainConfig& c) {
         return When(c.schedule.rounds == 0 && c.schedule.iterations > 0,
                     "schedule.iterations > 0 fixes K (epochs is not read)");
       }},
      {{"schedule.beta"},
       [](const TrainConfig& c) {
         return When(c.schedule.step_rule == StepSizeSchedule::kConstant,
                     "schedule.step_rule = \"constant\"");
       }},
      // What each model reads is the model registry's statement (models::ReadsOf), for plugins too.
      {{"model.l2_lambda", "model.regularizer_convention", "model.regularize_bias"},
       [](const TrainConfig& c) {
         return When(models::ReadsOf(c.model.kind).l2 == models::ModelReads::L2::kNone,
                     fmt::format("model.kind = \"{}\" has no L2 regulariser (logistic_l2 has; linear, svm, "
                                 "softmax and mlp take a ridge penalty)",
                                 c.model.kind));
       }},
      {{"model.activation"},
       [](const TrainConfig& c) {
         return When(!models::ReadsOf(c.model.kind).activation,
                     fmt::format("model.kind = \"{}\" has no hidden activation (mlp, lenet and alexnet have)",
                                 c.model.kind));
       }},
      {{"model.threads"},
       [](const TrainConfig& c) {
         return When(!models::ReadsOf(c.model.kind).threads,
                     fmt::format("model.kind = \"{}\" has no batch threads (the CNNs lenet and alexnet have)",
                                 c.model.kind));
       }},
      {{"checkin.window_length", "checkin.warmup"},
       [](const TrainConfig& c) {
         return When(CheckIns(c) && c.checkin.variant != checkin::Variant::kSlidingWindow,
                     "it configures checkin.variant = \"sliding_window\" only");
       }},
      {{"model.hidden"},
       [](const TrainConfig& c) {
         return When(!models::ReadsOf(c.model.kind).hidden,
                     fmt::format("model.kind = \"{}\" has no hidden layers (mlp has)", c.model.kind));
       }},
      {{"dp.allocation_steps", "dp.allocation_k"},
       [](const TrainConfig& c) {
         return When(c.dp.sampling != SamplingModel::kRandomAllocation,
                     "dp.sampling is not \"random_allocation\"");
       }},
      // The proactive framework plans each client's phases itself (sim/proactive/phase_plan.h; docs/theory.md
      // §9): their rounds from proactive.phase_epochs, their σ_j from proactive.phase_sigmas (scaled or
      // sized to ε_target), each client stopping at its budget. The keys that would say so for asynchronous
      // rounds are not read; a value that agrees (0, none, the halt on) is accepted.
      // Two rules, one reason: schedule.epochs has no value that agrees (every value sets a K), while
      // iterations and rounds agree at 0 ("from the other keys").
      {{"schedule.epochs"}, [](const TrainConfig& c) { return When(ProactiveOn(c), kPhasesPlanTheRounds); }},
      {{"schedule.iterations", "schedule.rounds"},
       [](const TrainConfig& c) {
         return When(ProactiveOn(c) && (c.schedule.iterations != 0 || c.schedule.rounds != 0),
                     kPhasesPlanTheRounds);
       }},
      {{"schedule.sample_sizes"},
       [](const TrainConfig& c) {
         return When(ProactiveOn(c) && c.schedule.sample_sizes != SampleSizes::kConstant,
                     "the proactive framework runs one sample size per phase (proactive.phase_sizing)");
       }},
      {{"schedule.sample_size"},
       [](const TrainConfig& c) {
         return When(
             ProactiveOn(c) && c.proactive.phase_sizing == PhaseSizing::kE1,
             "proactive.phase_sizing = \"e1\" chooses each phase's sample size (set \"calibrated\" to "
             "give one)");
       }},
      // σ = 0, ε = 0 and no schedule agree ("none": the phases decide); any other value would be ignored.
      {{"dp.sigma"},
       [](const TrainConfig& c) { return When(ProactiveOn(c) && c.dp.sigma != 0.0, kPhasesPlanSigma); }},
      {{"dp.epsilon"},
       [](const TrainConfig& c) { return When(ProactiveOn(c) && c.dp.epsilon != 0.0, kPhasesPlanSigma); }},
      {{"dp.sigma_schedule"},
       [](const TrainConfig& c) {
         return When(ProactiveOn(c) && !c.dp.sigma_schedule.empty(), kPhasesPlanSigma);
       }},
      {{"dp.halt_at_budget"},
       [](const TrainConfig& c) {
         return When(ProactiveOn(c) && !c.dp.halt_at_budget,
                     "the proactive framework always stops a client at its epsilon_target (targets.epsilon)");
       }},
      {{"targets.", "proactive."},
       [](const TrainConfig& c) {
         return When(!ProactiveOn(c),
                     "the proactive framework is off (set targets.accuracy or targets.client_accuracy to use it)");
       }},
      // A non-private run adds no noise and accounts nothing (dp.clip still clips, the sampler still
      // samples).
      {{"dp.sigma_schedule", "dp.accountant", "dp.halt_at_budget", "dp.secure_noise", "dp.delta"},
       [](const TrainConfig& c) {
         return When(!c.dp.enabled, "dp.enabled = false (no noise, no accounting)");
       }},
      // σ = 0 and ε = 0 say "no noise, no target", which a non-private run keeps.
      {{"dp.sigma"},
       [](const TrainConfig& c) {
         return When(!c.dp.enabled && c.dp.sigma != 0.0, "dp.enabled = false (no noise, no accounting)");
       }},
      {{"dp.epsilon"},
       [](const TrainConfig& c) {
         return When(!c.dp.enabled && c.dp.epsilon != 0.0, "dp.enabled = false (no noise, no accounting)");
       }},
      // dp.epsilon is a target σ is calibrated to (dp.sigma = 0) or, for asynchronous rounds, a budget that
      // halts clients (dp.halt_at_budget); with σ given and no halts it decides nothing.
      {{"dp.epsilon"},
       [](const TrainConfig& c) {
         // 0 says "no target", which is true with σ given: only a positive target would be ignored.
         if (!c.dp.enabled || c.dp.sigma == 0.0 || c.dp.epsilon == 0.0) return std::optional<std::string>();
         if (CheckIns(c)) {
           return When(true,
                       "dp.sigma > 0 is given: check-ins calibrate sigma to dp.epsilon only when dp.sigma "
                       "= 0, and have no budget halt");
         }
         return When(!c.dp.halt_at_budget,
                     "dp.sigma > 0 is given (no calibration) and dp.halt_at_budget = false (no budget halt)");
       }},
      // Values computed only for the non-private diagnostics.
      {{"eval.reference_optimum", "eval.gradient_norm"},
       [](const TrainConfig& c) { return When(!c.output.diagnostics, kDiagnosticsOnly); }},
      {{"eval.train_rows"},  // 0 ("no train loss") agrees with diagnostics off
       [](const TrainConfig& c) {
         return When(!c.output.diagnostics && c.eval.train_rows != 0, kDiagnosticsOnly);
       }},
      {{"targets.check_sigma", "targets.paused_checks"},
       [](const TrainConfig& c) {
         return When(c.targets.holdout_public, "targets.holdout_public = true checks accuracy exactly (no noise)");
       }},
      {{"audit.client", "audit.canary", "audit.confidence", "audit.test_noise_scale"},
       [](const TrainConfig& c) { return When(c.audit.canaries == 0, "audit.canaries = 0 (no audit)"); }},
  };
  return rules;
}

}  // namespace

std::optional<std::string> UnusedKeyReason(const std::string& key, const TrainConfig& config) {
  for (const UsageRule& rule : Rules()) {
    for (const std::string& pattern : rule.keys) {
      if (!Matches(pattern, key)) continue;
      if (auto why = rule.unused(config)) return why;
    }
  }
  return std::nullopt;
}

namespace {

// What the usage rules say about each key of `config` that its run does not read and that was written, or
// set (in code) away from its default.
struct UnreadKey {
  std::string key, value, why;
  bool at_default = false;
  bool refused = false;  // false: a base key only an override left unread (a warning)
};

std::vector<UnreadKey> UnreadKeys(const TrainConfig& config) {
  TrainConfig copy = config;
  TrainConfig defaults_config;
  auto fields = ConfigFields(copy);
  auto defaults = ConfigFields(defaults_config);
  const GivenKeys& given = config.given;
  std::vector<UnreadKey> out;
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string& key = fields[i].key;
    const std::string value = FieldValueText(fields[i]);
    const bool at_default = value == FieldValueText(defaults[i]);
    const bool written = IsGivenKey(config, key);
    // A key the user wrote counts even at its default value: writing `dp.sampling = "poisson"` into a
    // check-in configuration says the user believes Poisson sampling happens, and it does not.
    if (at_default && !written) continue;
    auto why = UnusedKeyReason(key, config);
    if (!why) continue;
    // Refused: an override the run does not read; a base key the file alone does not read (the file
    // contradicts itself); a key set in code. A base key that only the overrides (or code editing a loaded
    // file) left unread is their doing (`--set dp.enabled=false` on a DP configuration): reported.
    const bool refused = !written || given.InOverrides(key) || given.UnreadInBase(key);
    out.push_back({key, value, std::move(*why), at_default, refused});
  }
  return out;
}

}  // namespace

void RefuseUnusedKeys(const TrainConfig& config) {
  for (const UnreadKey& u : UnreadKeys(config)) {
    if (!u.refused) continue;
    throw ConfigError(u.key, fmt::format("is set to {}{} but this run does not read it: {}; remove the key "
                                         "or change the setting that makes it unused",
                                         u.value, u.at_default ? " (its default)" : "", u.why));
  }
}

void RefuseUnreadOverrides(const TrainConfig& config, std::string_view command,
                           const std::function<std::optional<std::string>(const std::string& key)>& unread) {
  for (const std::string& key : config.given.overrides) {
    if (const std::optional<std::string> why = unread(key)) {
      throw ConfigError(key, fmt::format("is set by --set but `asyncdp {}` does not read it: {}; remove the "
                                         "override",
                                         command, *why));
    }
  }
}

void RequireAsyncRounds(const TrainConfig& config, std::string_view command, std::string_view why) {
  if (config.protocol.participation != Participation::kAsyncRounds) {
    throw ConfigError(
        "protocol.participation",
        fmt::format("`asyncdp {}` runs asynchronous rounds (async_rounds) only: {}", command, why));
  }
}

std::vector<std::string> UnreadKeyWarnings(const TrainConfig& config) {
  std::vector<std::string> out;
  for (const UnreadKey& u : UnreadKeys(config)) {
    if (u.refused) continue;
    out.push_back(
        fmt::format("{} = {} from the configuration file is not read by this run: {} (an override "
                    "changed what it decides)",
                    u.key, u.value, u.why));
  }
  return out;
}

}  // namespace asyncdp::sim
