#include "sim/run_summary.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

#include "sim/audit/train_audit.h"
#include "sim/config_io.h"
#include "sim/json_number.h"
#include "sim/privacy.h"
#include "sim/privacy_setup.h"
#include "sim/proactive/phase_report.h"
#include "sim/protocol/run_outcome.h"
#include "sim/summary.h"

namespace asyncdp::sim {
namespace {

std::string_view StopName(ClientStop stop) {
  switch (stop) {
    case ClientStop::kRunning: return "running";
    case ClientStop::kCompleted: return "completed";
    case ClientStop::kBudgetExhausted: return "budget_exhausted";
    case ClientStop::kDroppedOut: return "dropped_out";
    case ClientStop::kTargetReached: return "target_reached";
    case ClientStop::kTargetMissed: return "target_missed";
    case ClientStop::kNotAdmitted: return "not_admitted";
  }
  return "?";
}

// The largest staleness any client saw (the staleness_0 .. staleness_S columns of clients.csv end there).
int64_t MaxStaleness(const RunFacts& run) {
  int64_t most = 0;
  for (const ClientOutcome& client : run.outcomes) most = std::max(most, client.max_staleness);
  return most;
}

// A client's clipping diagnostics (output.diagnostics only): the fraction of its examples clipped and their
// mean gradient norm before clipping.
struct ClipRates {
  double clipped_fraction = 0.0;
  double mean_norm = 0.0;
};
ClipRates ClipRatesOf(const ClientOutcome& client) {
  const auto& clip = client.clip_totals;
  const double n = std::max<double>(1.0, static_cast<double>(clip.examples));
  return {static_cast<double>(clip.clipped) / n, clip.norm_sum / n};
}

std::vector<int64_t> RoundsDone(const RunFacts& run) {
  std::vector<int64_t> rounds;
  for (const ClientOutcome& client : run.outcomes) rounds.push_back(client.rounds);
  return rounds;
}

// The privacy report and the time spent accounting. The rounds the guarantee covers: those that ran,
// except for clients with accuracy targets, whose pauses and re-joins depend on their outputs: every round
// of their admitted plan (AdmittedRounds).
void PrivacySection(const RunFacts& run, SummaryCore& core) {
  const Experiment& e = run.experiment;
  const auto report_start = std::chrono::steady_clock::now();
  const std::vector<int64_t> rounds_done = RoundsDone(run);
  std::vector<int64_t> accounted = rounds_done;
  if (e.proactive.options.enabled) {
    for (size_t c = 0; c < accounted.size(); ++c) accounted[c] = AdmittedRounds(e, c);
  }
  const accounting::PopulationReport report =
      e.privacy.enabled ? AccountRun(e.privacy, e.plans, accounted) : accounting::PopulationReport{};
  core.privacy = PrivacySummaryJson(e, report);
  core.epsilon = HeadlineEpsilons(e, report);
  nlohmann::json& privacy = core.privacy;
  if (e.proactive.options.enabled && e.privacy.enabled) {
    privacy["epsilon_realised_tally"] =
        HeadlineJson(HeadlineEpsilons(e, AccountRun(e.privacy, e.plans, rounds_done)));
    privacy["epsilon_realised_tally"]["note"] =
        "the rounds that ran, composed: not a guarantee (with accuracy targets the rounds run depend on the "
        "clients' outputs); privacy.epsilon, of every round of each admitted plan, is";
  }
  if (e.privacy.enabled && e.privacy.user_level) {
    // Side by side (docs/theory.md §4): the record-level guarantee of the same run — a record moves a
    // client's clipped update by at most C under noise σ C_u, with the record sampler's amplification.
    privacy["epsilon_record_level"] =
        HeadlineJson(HeadlineEpsilons(e, AccountRun(e.privacy.RecordLevel(), e.plans, accounted)));
    privacy["epsilon_record_level"]["note"] =
        "record-level DP of the same run (add/remove one record, Poisson sampling, noise multiplier sigma * "
        "client_clip / clip); privacy.epsilon, the headline, is user-level "
        "(add/remove one client's data set)";
  }
  // Time spent accounting: σ and budget halts before training, the running ε column, this final report.
  const double report_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - report_start).count();
  core.accounting_seconds = e.privacy_seconds + run.metrics.epsilon_seconds() + report_seconds;
  spdlog::info(
      "accounting: {:.3f} s (sigma and budget halts {:.3f} s, running epsilon {:.3f} s, "
      "final report {:.3f} s)",
      core.accounting_seconds, e.privacy_seconds, run.metrics.epsilon_seconds(), report_seconds);
  core.delta = e.privacy.delta;
  core.sigma = e.privacy.sigma;
  core.sigma_calibrated = e.privacy.calibrated;
  core.clip = e.config.dp.clip;
  if (e.config.dp.unit == PrivacyUnit::kClient) core.client_clip = e.config.dp.client_clip;
}

// The plan, how far each client got, and the protocol's statistics (staleness, update lag, exclusions).
void ProtocolSection(const RunFacts& run, nlohmann::json& s) {
  const Experiment& e = run.experiment;
  std::vector<int64_t> planned_grads;
  for (const ClientOutcome& client : run.outcomes) planned_grads.push_back(client.planned_gradients);
  s["sample_size"] = e.plans[0].max_sample_size();
  s["records_per_client"] = e.plans[0].n_records;
  s["rounds_per_client"] = RoundsDone(run);
  s["planned_grads_per_client"] = planned_grads;
  s["max_staleness"] = MaxStaleness(run);
  s["staleness_bound"] = e.protocol.delay_rule->MaxStaleness() == std::numeric_limits<int64_t>::max()
                             ? nlohmann::json(nullptr)
                             : nlohmann::json(e.protocol.delay_rule->MaxStaleness());
  s["delay_rule"] = e.protocol.delay_rule->Describe();
  s["global_rounds"] = run.server.global_round();
  int64_t max_lag = 0, readmitted = 0;
  for (int64_t c = 0; c < e.config.clients.count; ++c) {
    max_lag = std::max(max_lag, run.server.max_update_lag(c));
    readmitted += run.server.readmissions(c);
  }
  // Applied-at minus computed-at global round, over every update: how late an update lands (staleness
  // i − k is clamped at 0 and cannot show it for clients whose local rounds lag the global round).
  s["max_update_lag"] = max_lag;
  s["readmissions"] = readmitted;
  // Each client excluded at least once, in id order; every exclusion (a client re-admitted and excluded
  // again counts twice) in `exclusions`.
  std::vector<int64_t> excluded_ids = run.report.excluded;
  std::sort(excluded_ids.begin(), excluded_ids.end());
  excluded_ids.erase(std::unique(excluded_ids.begin(), excluded_ids.end()), excluded_ids.end());
  s["excluded_clients"] = excluded_ids;
  s["exclusions"] = run.report.excluded.size();
}

void TimingSection(const RunFacts& run, nlohmann::json& s) {
  const RuntimeReport& report = run.report;
  int64_t total_planned = 0;
  for (const ClientOutcome& client : run.outcomes) total_planned += client.planned_gradients;
  s["run_seconds"] = report.wall_seconds;
  s["compute_seconds"] = report.compute_seconds;
  s["eval_seconds"] = report.observer_seconds;
  s["protocol_overhead"] = ProtocolOverhead(report);
  const std::optional<double> cpu_share = CpuShare(report);
  s["cpu_share"] = cpu_share ? nlohmann::json(*cpu_share) : nlohmann::json(nullptr);
  s["compute_threads"] = report.cores;
  s["grads_per_second"] = report.wall_seconds > 0 ? static_cast<double>(total_planned) / report.wall_seconds : 0.0;
}

// Values no accountant covers (functions of the clients' data, e.g. |B_i| under Poisson sampling): for
// debugging and research only; output.diagnostics = false leaves them out of every output.
nlohmann::json DiagnosticsJson(const RunFacts& run) {
  const MetricsRow& last = run.metrics.rows().back();
  std::vector<int64_t> realised_grads;
  nlohmann::json clipped_fraction = nlohmann::json::array(), mean_grad_norm = nlohmann::json::array();
  for (const ClientOutcome& client : run.outcomes) {
    realised_grads.push_back(client.gradients);
    const ClipRates rates = ClipRatesOf(client);
    clipped_fraction.push_back(rates.clipped_fraction);
    mean_grad_norm.push_back(rates.mean_norm);
  }
  nlohmann::json d = {
      {"note", "non-private: not covered by any reported epsilon"},
      {"train_loss", std::isnan(last.train_loss) ? nlohmann::json(nullptr) : nlohmann::json(last.train_loss)},
      {"realised_grads_per_client", realised_grads},
      {"clipped_fraction_per_client", clipped_fraction},
      {"mean_grad_norm_per_client", mean_grad_norm}};
  if (run.experiment.data.reference) {
    d["suboptimality"] = FiniteOrNull(last.suboptimality);
    d["distance_sq"] = FiniteOrNull(last.distance_sq);
  }
  if (run.experiment.config.eval.gradient_norm) d["gradient_norm"] = FiniteOrNull(last.gradient_norm);
  return d;
}

}  // namespace

std::string ClientsCsv(const RunFacts& run) {
  const Experiment& e = run.experiment;
  const ServerProtocol& server = run.server;
  const bool diagnostics = e.config.output.diagnostics;
  const int64_t max_staleness_bucket = MaxStaleness(run);
  // The stop column: why the client stopped, or — for a client the run cut short — why it did not finish
  // (run_outcome.h); a client whose whole plan was applied but whose stop notice was late is "completed".
  std::vector<std::string> stop_label(run.outcomes.size());
  for (const ClientOutcome& client : run.outcomes) {
    stop_label[static_cast<size_t>(client.id)] =
        client.paused                              ? "paused_at_target"
        : client.stop != ClientStop::kRunning      ? std::string(StopName(client.stop))
        : PlanApplied(server, client.id, e.plans[static_cast<size_t>(client.id)].rounds()) ? "completed"
                                                                                           : "running";
  }
  for (const UnfinishedClient& u : run.report.unfinished) {
    stop_label[static_cast<size_t>(u.client)] = ToString(u.reason);
  }
  const bool proactive = e.proactive.options.enabled;
  std::string out = "client,records,rounds,planned_gradients,budget_rounds,stop,excluded,readmissions,"
                    "max_update_lag,mean_update_lag,max_staleness";
  for (int64_t s = 0; s <= max_staleness_bucket; ++s) out += fmt::format(",staleness_{}", s);
  if (proactive) out += ProactiveClientsHeader(diagnostics);
  if (diagnostics) out += ",diag_gradients,diag_clipped_fraction,diag_mean_grad_norm";
  out += "\n";
  for (const ClientOutcome& client : run.outcomes) {
    const auto c = static_cast<size_t>(client.id);
    const int64_t id = client.id;
    const double mean_lag = server.updates_of(id) > 0 ? static_cast<double>(server.update_lag_sum(id)) /
                                                            static_cast<double>(server.updates_of(id))
                                                      : 0.0;
    out += fmt::format("{},{},{},{},{},{},{},{},{},{:.6g},{}", id, client.records, client.rounds,
                       client.planned_gradients, e.privacy.budget_rounds[c], stop_label[c],
                       server.excluded(id) ? 1 : 0, server.readmissions(id), server.max_update_lag(id), mean_lag,
                       client.max_staleness);
    const auto& histogram = client.staleness_histogram;
    for (int64_t s = 0; s <= max_staleness_bucket; ++s) {
      out += fmt::format(",{}", s < static_cast<int64_t>(histogram.size()) ? histogram[s] : 0);
    }
    if (proactive) out += ProactiveClientCells(e, client, server.model(), diagnostics);
    if (diagnostics) {
      const ClipRates rates = ClipRatesOf(client);
      out += fmt::format(",{},{:.6g},{:.6g}", client.gradients, rates.clipped_fraction, rates.mean_norm);
    }
    out += "\n";
  }
  return out;
}

Summary Summarise(const RunFacts& run, const std::optional<audit::TrainAuditOutcome>& audit) {
  const Experiment& e = run.experiment;
  const TrainConfig& config = e.config;
  const bool diagnostics = config.output.diagnostics;
  SummaryCore core;
  core.accuracy = AccuracyOf(run.server.model(), run.metrics.rows().back());
  PrivacySection(run, core);
  core.outcome = OutcomeOf(run.report);
  core.wall_seconds = run.wall_seconds;
  if (e.protocol.runtime.kind == RuntimeKind::kVirtual) core.virtual_seconds = run.report.end_time;
  core.runtime = config.protocol.runtime;
  core.seed = config.seed;
  core.model_kind = config.model.kind;
  core.parameters = e.model->NumParams();
  core.config_toml = ToToml(config);
  nlohmann::json s = CommonSummaryJson(core);
  ProtocolSection(run, s);
  TimingSection(run, s);
  if (audit) s["audit"] = audit::TrainAuditJson(e, *audit);
  if (e.proactive.options.enabled)
    s["proactive"] = ProactiveSummaryJson(e, run.outcomes, run.server.model(), diagnostics);
  if (diagnostics) s["diagnostics"] = DiagnosticsJson(run);
  return {.core = std::move(core), .json = std::move(s)};
}

}  // namespace asyncdp::sim
