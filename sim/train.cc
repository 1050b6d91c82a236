#include "sim/train.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <numeric>

#include "core/error.h"
#include "core/noise.h"
#include "sim/audit/train_audit.h"
#include "sim/checkin/checkin_run.h"
#include "sim/config_io.h"
#include "sim/experiment.h"
#include "sim/output_dir.h"
#include "sim/privacy.h"
#include "sim/privacy_setup.h"
#include "sim/proactive/phase_report.h"
#include "sim/progress.h"
#include "sim/runtime/client_outcome.h"
#include "sim/runtime/thread_runtime.h"
#include "sim/runtime/trace_recorder.h"
#include "sim/runtime/virtual_runtime.h"
#if ASYNCDP_WITH_MPI
#include "sim/runtime/mpi_runtime.h"
#include "sim/json_number.h"
#endif

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

// clients.csv: public columns first (N_c, rounds, the planned gradients Σ s_i, why it stopped, the rounds
// its budget permits, staleness), then with output.diagnostics the non-private diag_* columns.
std::string ClientsCsv(const std::vector<ClientOutcome>& outcomes,
                       const std::vector<std::unique_ptr<ClientProtocol>>& clients, const ServerProtocol& server,
                       const Experiment& e, const RuntimeReport& report, int64_t max_staleness_bucket,
                       bool diagnostics) {
  // The stop column: why the client stopped, or — for a client the run cut short — why it did not finish
  // (run_outcome.h); a client whose whole plan was applied but whose stop notice was late is "completed".
  std::vector<std::string> stop_label(outcomes.size());
  for (const ClientOutcome& client : outcomes) {
    stop_label[static_cast<size_t>(client.id)] =
        client.paused                              ? "paused_at_target"
        : client.stop != ClientStop::kRunning      ? std::string(StopName(client.stop))
        : PlanApplied(server, client.id, e.plans[static_cast<size_t>(client.id)].rounds()) ? "completed"
                                                                                           : "running";
  }
  for (const UnfinishedClient& u : report.unfinished) stop_label[static_cast<size_t>(u.client)] = ToString(u.reason);
  const bool proactive = e.proactive.enabled;
  std::string out = "client,records,rounds,planned_gradients,budget_rounds,stop,excluded,readmissions,"
                    "max_update_lag,mean_update_lag,max_staleness";
  for (int64_t s = 0; s <= max_staleness_bucket; ++s) out += fmt::format(",staleness_{}", s);
  if (proactive) out += ProactiveClientsHeader(diagnostics);
  if (diagnostics) out += ",diag_gradients,diag_clipped_fraction,diag_mean_grad_norm";
  out += "\n";
  for (const ClientOutcome& client : outcomes) {
    const auto c = static_cast<size_t>(client.id);
    const int64_t id = client.id;
    const double mean_lag = server.updates_of(id) > 0 ? static_cast<double>(server.update_lag_sum(id)) /
                                                            static_cast<double>(server.updates_of(id))
                                                      : 0.0;
    out += fmt::format("{},{},{},{},{},{},{},{},{},{:.6g},{}", id, client.records, client.rounds,
                       client.planned_gradients, e.privacy.budget_rounds[c],
                       stop_label[c], server.excluded(id) ? 1 : 0,
                       server.readmissions(id), server.max_update_lag(id), mean_lag, client.max_staleness);
    const auto& histogram = client.staleness_histogram;
    for (int64_t s = 0; s <= max_staleness_bucket; ++s) {
      out += fmt::format(",{}", s < static_cast<int64_t>(histogram.size()) ? histogram[s] : 0);
    }
    // The proactive runs are refused on the MPI runtime (sim/config_io.cc), so clients[c] ran here.
    if (proactive) out += ProactiveClientCells(e, *clients[c], server.model(), diagnostics);
    if (diagnostics) {
      const auto& clip = client.clip_totals;
      const double n = std::max<double>(1.0, static_cast<double>(clip.examples));
      out += fmt::format(",{},{:.6g},{:.6g}", client.gradients, static_cast<double>(clip.clipped) / n,
                         clip.norm_sum / n);
    }
    out += "\n";
  }
  return out;
}

}  // namespace

TrainResult RunTraining(const TrainConfig& config, const TrainOptions& options) {
  ValidateConfig(config, options.refuse_unused_keys);
  if (config.protocol.participation == Participation::kCheckIn)
    return checkin::RunCheckInTraining(config, options);
  const auto wall_start = std::chrono::steady_clock::now();
  // MPI: each rank reads only its clients' rows (rank 0, the server, hosts none and evaluates).
  Hosting hosting;
#if ASYNCDP_WITH_MPI
  if (const RuntimeOptions runtime = ResolveRuntimeOptions(config); runtime.kind == RuntimeKind::kMpi) {
    hosting.clients = [runtime](const PlanTable& plans) { return MpiHostedClients(runtime, plans); };
    hosting.evaluates = MpiRank() == 0;
  }
#endif
  auto experiment_ptr = std::make_shared<Experiment>(BuildExperiment(config, hosting));
  const Experiment& experiment = *experiment_ptr;
  const TrainConfig& resolved = experiment.config;
  spdlog::info(
      "train: {} clients, model {} ({} parameters), N_c = {}, T = {} rounds, K = {} per client, "
      "sigma = {:.6g}, runtime {}",
      resolved.clients.count, resolved.model.kind, experiment.model->NumParams(),
      experiment.plans[0].n_records, experiment.plans[0].rounds(), experiment.plans[0].iterations(),
      experiment.privacy.sigma, ToString(resolved.protocol.runtime));

  // MPI: each rank builds only the clients it hosts (rank 0, the server, none).
  auto clients = MakeClients(experiment, experiment.hosted);
  ServerProtocol server(resolved.clients.count, experiment.initial_model, experiment.server);
  MetricsRecorder metrics(experiment);
  ObserverList observers;
  observers.Add(&metrics);
  std::vector<std::vector<int64_t>> phase_ends;
  for (const ClientPhasePlan& plan : experiment.phase_plans) phase_ends.push_back(plan.phase_ends);
  ProgressReporter progress(LongestPlan(experiment), std::move(phase_ends));
  if (options.progress) observers.Add(&progress);
  if (options.observer != nullptr) observers.Add(options.observer);
  TraceRecorder trace;  // output.trace: events.csv
  if (resolved.output.trace) observers.Add(&trace);
  // audit.canaries > 0: the one-run audit's observer (sim/audit/train_audit.h).
  std::unique_ptr<audit::TrainAuditRecorder> audit_recorder;
  if (experiment.train_canaries) {
    audit_recorder = std::make_unique<audit::TrainAuditRecorder>(experiment);
    observers.Add(audit_recorder.get());
  }

  const bool virtual_clock = experiment.runtime.kind == RuntimeKind::kVirtual;
  RuntimeOptions runtime = experiment.runtime;
  runtime.cancel = options.cancel;
  RuntimeReport report;
  std::vector<ClientOutcome> outcomes;
  if (experiment.runtime.kind == RuntimeKind::kMpi) {
#if ASYNCDP_WITH_MPI
    // Every rank runs this; only rank 0 (the server) has the outcomes and produces outputs.
    report = RunMpi(runtime, experiment.faults, clients, experiment.plans, server, observers, outcomes);
    if (MpiRank() != 0) {
      TrainResult worker;
      worker.primary = false;
      return worker;
    }
#else
    throw InputError("protocol.runtime", "\"mpi\": this asyncdp was built without MPI (OpenMPI was not found "
                                         "at configure time; scripts/install-deps.sh installs it)");
#endif
  } else {
    report = virtual_clock ? RunVirtual(runtime, experiment.faults, clients, server, observers)
                           : RunThreads(runtime, experiment.faults, clients, server, observers);
    outcomes = OutcomesOf(clients);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

  const bool diagnostics = resolved.output.diagnostics;
  if (diagnostics) {
    spdlog::warn("output.diagnostics = true: the diag_* columns and summary.json's \"diagnostics\" are functions of "
                 "the clients' data that no reported epsilon covers (docs/design.md, released fields)");
  }
  TrainResult result;
  result.resolved_config = resolved;
  result.runtime = report;
  result.final_model = server.model();
  result.experiment = experiment_ptr;
  result.metrics = metrics.rows();
  if (resolved.output.trace) result.events_csv = trace.csv();
  result.metrics_csv = metrics.ToCsv(virtual_clock ? "virtual_seconds" : "wall_seconds", diagnostics);
  int64_t max_staleness = 0;
  std::vector<int64_t> rounds_done, planned_grads, realised_grads;
  nlohmann::json clipped_fraction = nlohmann::json::array(), mean_grad_norm = nlohmann::json::array();
  for (const ClientOutcome& client : outcomes) {
    max_staleness = std::max(max_staleness, client.max_staleness);
    rounds_done.push_back(client.rounds);
    planned_grads.push_back(client.planned_gradients);
    realised_grads.push_back(client.gradients);
    const auto& clip = client.clip_totals;
    const double n = std::max<double>(1.0, static_cast<double>(clip.examples));
    clipped_fraction.push_back(static_cast<double>(clip.clipped) / n);
    mean_grad_norm.push_back(clip.norm_sum / n);
  }
  const int64_t total_planned = std::accumulate(planned_grads.begin(), planned_grads.end(), int64_t{0});
  result.clients_csv = ClientsCsv(outcomes, clients, server, experiment, report, max_staleness, diagnostics);

  const MetricsRow& last = result.metrics.back();
  nlohmann::json& s = result.summary;
  // A model with a non-finite parameter (or loss) has diverged: its "accuracy" is an artefact of how NaN
  // compares, so none is reported.
  const Eigen::VectorXf& final_model = server.model();
  const bool diverged = !final_model.allFinite() || !std::isfinite(last.test_loss);
  s["diverged"] = diverged;
  s["test_accuracy"] = diverged ? nlohmann::json(nullptr) : nlohmann::json(last.test_accuracy);
  s["test_loss"] = diverged ? nlohmann::json(nullptr) : nlohmann::json(last.test_loss);
  if (diverged) {
    spdlog::error("the model diverged (non-finite parameters or loss): no accuracy is reported; lower "
                  "schedule.eta0 or dp.clip");
  }
  // The rounds the guarantee covers: those that ran, except for clients with accuracy targets, whose
  // pauses and re-joins depend on their outputs: every round of their admitted plan (AdmittedRounds).
  const auto report_start = std::chrono::steady_clock::now();
  std::vector<int64_t> accounted = rounds_done;
  if (experiment.proactive.enabled) {
    for (size_t c = 0; c < accounted.size(); ++c) accounted[c] = AdmittedRounds(experiment, c);
  }
  s["privacy"] = PrivacySummaryJson(experiment, experiment.privacy.enabled
                                                    ? AccountRun(experiment.privacy, experiment.plans, accounted)
                                                    : accounting::PopulationReport{});
  if (experiment.proactive.enabled && experiment.privacy.enabled) {
    const nlohmann::json tally =
        PrivacySummaryJson(experiment, AccountRun(experiment.privacy, experiment.plans, rounds_done));
    s["privacy"]["epsilon_realised_tally"] = tally["epsilon"];
    s["privacy"]["epsilon_realised_tally"]["note"] =
        "the rounds that ran, composed: not a guarantee (with accuracy targets the rounds run depend on the "
        "clients' outputs); privacy.epsilon, of every round of each admitted plan, is";
  }
  if (experiment.privacy.enabled && experiment.privacy.user_level) {
    // Side by side (docs/theory.md §4): the record-level guarantee of the same run — a record moves a
    // client's clipped update by at most C under noise σ C_u, with the record sampler's amplification.
    const nlohmann::json record =
        PrivacySummaryJson(experiment, AccountRun(experiment.privacy.RecordLevel(), experiment.plans, accounted));
    s["privacy"]["epsilon_record_level"] = record["epsilon"];
    s["privacy"]["epsilon_record_level"]["note"] =
        "record-level DP of the same run (add/remove one record, Poisson sampling, noise multiplier sigma * "
        "client_clip / clip); privacy.epsilon, the headline, is user-level (add/remove one client's data set)";
  }
  s["epsilon"] = s["privacy"]["epsilon"];
  // Time spent accounting: σ and budget halts before training, the running ε column, this final report.
  const double report_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - report_start).count();
  s["accounting_seconds"] = experiment.privacy_seconds + metrics.epsilon_seconds() + report_seconds;
  spdlog::info("accounting: {:.3f} s (sigma and budget halts {:.3f} s, running epsilon {:.3f} s, final report {:.3f} s)",
               s["accounting_seconds"].get<double>(), experiment.privacy_seconds, metrics.epsilon_seconds(),
               report_seconds);
  s["delta"] = experiment.delta;
  s["sigma"] = experiment.privacy.sigma;
  s["sigma_calibrated"] = experiment.privacy.calibrated;
  s["clip"] = resolved.dp.clip;
  s["sample_size"] = experiment.plans[0].max_sample_size();
  s["records_per_client"] = experiment.plans[0].n_records;
  s["rounds_per_client"] = rounds_done;
  s["planned_grads_per_client"] = planned_grads;
  s["max_staleness"] = max_staleness;
  s["staleness_bound"] = experiment.delay_rule->MaxStaleness() == std::numeric_limits<int64_t>::max()
                             ? nlohmann::json(nullptr)
                             : nlohmann::json(experiment.delay_rule->MaxStaleness());
  s["delay_rule"] = experiment.delay_rule->Describe();
  s["global_rounds"] = server.global_round();
  s["wall_seconds"] = wall;
  s["run_seconds"] = report.wall_seconds;
  s["compute_seconds"] = report.compute_seconds;
  s["eval_seconds"] = report.observer_seconds;
  s["protocol_overhead"] = ProtocolOverhead(report);
  s["compute_threads"] = report.cores;
  s["virtual_seconds"] = virtual_clock ? nlohmann::json(report.end_time) : nlohmann::json(nullptr);
  s["grads_per_second"] = report.wall_seconds > 0 ? static_cast<double>(total_planned) / report.wall_seconds : 0.0;
  s["runtime"] = std::string(ToString(resolved.protocol.runtime));
  s["seed"] = resolved.seed;
  // The outcome (docs/design.md, "End of a run"): truncated when any client neither finished nor stopped by
  // a rule; each such client with why and how far it got. `asyncdp train` exits 4 on a truncated run unless
  // protocol.allow_truncation = true.
  s["truncated"] = report.truncated;
  s["stalled"] = report.stalled;
  if (report.cancelled) s["cancelled"] = true;
  nlohmann::json unfinished_ids = nlohmann::json::array(), unfinished = nlohmann::json::array();
  for (const UnfinishedClient& u : report.unfinished) {
    unfinished_ids.push_back(u.client);
    unfinished.push_back({{"client", u.client},
                          {"reason", std::string(ToString(u.reason))},
                          {"rounds", u.rounds},
                          {"applied_rounds", u.applied_rounds},
                          {"planned_rounds", u.planned_rounds}});
  }
  s["unfinished_clients"] = unfinished_ids;
  s["unfinished"] = unfinished;
  int64_t max_lag = 0, readmitted = 0;
  for (int64_t c = 0; c < resolved.clients.count; ++c) {
    max_lag = std::max(max_lag, server.max_update_lag(c));
    readmitted += server.readmissions(c);
  }
  // Applied-at minus computed-at global round, over every update: how late an update lands (staleness
  // i − k is clamped at 0 and cannot show it for clients whose local rounds lag the global round).
  s["max_update_lag"] = max_lag;
  s["readmissions"] = readmitted;
  // Each client excluded at least once, in id order; every exclusion (a client re-admitted and excluded
  // again counts twice) in `exclusions`.
  std::vector<int64_t> excluded_ids = report.excluded;
  std::sort(excluded_ids.begin(), excluded_ids.end());
  excluded_ids.erase(std::unique(excluded_ids.begin(), excluded_ids.end()), excluded_ids.end());
  s["excluded_clients"] = excluded_ids;
  s["exclusions"] = report.excluded.size();
  s["model"] = {{"kind", resolved.model.kind}, {"parameters", experiment.model->NumParams()}};
  if (audit_recorder) {
    const auto audited = static_cast<size_t>(experiment.train_canaries->client);
    result.audit = audit::AuditTrainingRun(experiment, *audit_recorder, server.model(), rounds_done[audited]);
    s["audit"] = audit::TrainAuditJson(experiment, *result.audit);
  }
  if (experiment.proactive.enabled) {
    s["proactive"] = ProactiveSummaryJson(experiment, clients, server.model(), diagnostics);
    result.phases_csv = PhasesCsv(experiment, clients, diagnostics);
  }
  s["config"] = ToToml(resolved);
  s["asyncdp_version"] = ASYNCDP_VERSION;
  // Which Gaussian generator drew the noise (core/noise.h): results from another version differ in bits.
  s["noise_generator_version"] = asyncdp::kNoiseGeneratorVersion;
  if (diagnostics) {
    // Values no accountant covers (functions of the clients' data, e.g. |B_i| under Poisson sampling):
    // for debugging and research only; output.diagnostics = false leaves them out of every output.
    s["diagnostics"] = {
        {"note", "non-private: not covered by any reported epsilon"},
        {"train_loss", std::isnan(last.train_loss) ? nlohmann::json(nullptr) : nlohmann::json(last.train_loss)},
        {"realised_grads_per_client", realised_grads},
        {"clipped_fraction_per_client", clipped_fraction},
        {"mean_grad_norm_per_client", mean_grad_norm}};
    const auto finite_or_null = [](double v) { return FiniteOrNull(v); };
    if (experiment.reference) {
      s["diagnostics"]["suboptimality"] = finite_or_null(last.suboptimality);
      s["diagnostics"]["distance_sq"] = finite_or_null(last.distance_sq);
    }
    if (resolved.eval.gradient_norm) s["diagnostics"]["gradient_norm"] = finite_or_null(last.gradient_norm);
  }
  return result;
}

void WriteTrainOutputs(const TrainResult& result, const std::string& out_dir) {
  OutputDirectory out(out_dir);
  out.Write("config.resolved.toml", "# asyncdp " ASYNCDP_VERSION " resolved configuration\n" +
                                        ToToml(result.resolved_config));
  out.Write("metrics.csv", result.metrics_csv);
  out.Write("clients.csv", result.clients_csv);
  out.Write("summary.json", result.summary.dump(2) + "\n");
  if (!result.phases_csv.empty()) out.Write("phases.csv", result.phases_csv);
  if (!result.events_csv.empty()) out.Write("events.csv", result.events_csv);
  out.Commit();
}

}  // namespace asyncdp::sim
