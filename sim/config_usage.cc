#include "sim/config_usage.h"

#include <fmt/format.h>

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
                     "only mlp, lenet and alexnet have hidden activations");
       }},
      {{"model.threads"},
       [](const TrainConfig& c) {
         return When(!models::ReadsOf(c.model.kind).threads, "only the CNNs (lenet, alexnet) use it");
       }},
      {{"checkin.window_length", "checkin.warmup"},
       [](const TrainConfig& c) {
         return When(CheckIns(c) && c.checkin.variant != checkin::Variant::kSlidingWindow,
                     "it configures checkin.variant = \"sliding_window\" only");
       }},
      {{"model.hidden"},
       [](const TrainConfig& c) {
         return When(!models::ReadsOf(c.model.kind).hidden, "only model.kind = \"mlp\" has hidden layers");
       }},
      {{"dp.allocation_steps", "dp.allocation_k"},
       [](const TrainConfig& c) {
         return When(c.dp.sampling != SamplingModel::kRandomAllocation,
                     "dp.sampling is not \"random_allocation\"");
       }},
      {{"targets.", "proactive."},
       [](const TrainConfig& c) {
         return When(!ProactiveOn(c),
                     "the proactive framework is off (set targets.accuracy or targets.client_accuracy to use it)");
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

void RefuseUnusedKeys(const TrainConfig& config) {
  TrainConfig copy = config;
  TrainConfig defaults_config;
  auto fields = ConfigFields(copy);
  auto defaults = ConfigFields(defaults_config);
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string value = FieldValueText(fields[i]);
    // A key the user wrote is refused even at its default value: writing `dp.sampling = "poisson"` into a
    // check-in run says the user believes Poisson sampling happens, and it does not.
    const bool at_default = value == FieldValueText(defaults[i]);
    if (at_default && !IsGivenKey(config, fields[i].key)) continue;
    if (auto why = UnusedKeyReason(fields[i].key, config)) {
      throw ConfigError(fields[i].key,
                        fmt::format("is set to {}{} but this run does not read it: {}; remove the key "
                                    "or change the setting that makes it unused",
                                    value, at_default ? " (its default)" : "", *why));
    }
  }
}

}  // namespace asyncdp::sim
