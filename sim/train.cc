#include "sim/train.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <numeric>

#include "core/error.h"
#include "sim/audit/train_audit.h"
#include "sim/checkin/checkin_run.h"
#include "sim/config_io.h"
#include "sim/config_usage.h"
#include "sim/experiment.h"
#include "sim/output_dir.h"
#include "sim/proactive/phase_report.h"
#include "sim/progress.h"
#include "sim/run_summary.h"
#include "sim/runtime/client_outcome.h"
#include "sim/runtime/thread_runtime.h"
#include "sim/runtime/trace_recorder.h"
#include "sim/runtime/virtual_runtime.h"
#if ASYNCDP_WITH_MPI
#include "sim/runtime/mpi_runtime.h"
#endif

namespace asyncdp::sim {

TrainResult RunTraining(const TrainConfig& config, const TrainOptions& options) {
  ValidateConfig(config, options.refuse_unused_keys);
  if (options.refuse_unused_keys) {
    for (const std::string& warning : UnreadKeyWarnings(config)) spdlog::warn("{}", warning);
  }
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
  auto clients = MakeClients(experiment, experiment.data.hosted);
  ServerProtocol server(resolved.clients.count, experiment.initial_model, experiment.protocol.server);
  MetricsRecorder metrics(experiment);
  ObserverList observers;
  observers.Add(&metrics);
  std::vector<std::vector<int64_t>> phase_ends;
  for (const ClientPhasePlan& plan : experiment.proactive.phase_plans) phase_ends.push_back(plan.phase_ends);
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

  const bool virtual_clock = experiment.protocol.runtime.kind == RuntimeKind::kVirtual;
  RuntimeOptions runtime = experiment.protocol.runtime;
  runtime.cancel = options.cancel;
  RuntimeReport report;
  std::vector<ClientOutcome> outcomes;
  if (experiment.protocol.runtime.kind == RuntimeKind::kMpi) {
#if ASYNCDP_WITH_MPI
    // Every rank runs this; only rank 0 (the server) has the outcomes and produces outputs.
    report =
        RunMpi(runtime, experiment.protocol.faults, clients, experiment.plans, server, observers, outcomes);
    if (MpiRank() != 0) {
      TrainResult worker;
      worker.primary = false;
      return worker;
    }
#else
    throw InputError("protocol.runtime", std::string(kBuiltWithoutMpi));
#endif
  } else {
    report = virtual_clock ? RunVirtual(runtime, experiment.protocol.faults, clients, server, observers)
                           : RunThreads(runtime, experiment.protocol.faults, clients, server, observers);
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
  const RunFacts run{.experiment = experiment,
                     .clients = clients,
                     .outcomes = outcomes,
                     .server = server,
                     .report = report,
                     .metrics = metrics,
                     .wall_seconds = wall};
  result.clients_csv = ClientsCsv(run);
  if (audit_recorder) {
    const auto audited = static_cast<size_t>(experiment.train_canaries->client);
    result.audit =
        audit::AuditTrainingRun(experiment, *audit_recorder, server.model(), outcomes[audited].rounds);
  }
  if (experiment.proactive.options.enabled) result.phases_csv = PhasesCsv(experiment, outcomes, diagnostics);
  Summary summary = Summarise(run, result.audit);
  result.summary = std::move(summary.json);
  result.summary_core = std::move(summary.core);
  return result;
}

TrainConfig ResolveTrainConfig(const TrainConfig& config) {
  ValidateConfig(config);
  if (config.protocol.participation == Participation::kCheckIn) return checkin::ResolveCheckInConfig(config);
  return BuildExperiment(config).config;
}

std::string ResolvedConfigToml(const TrainConfig& resolved) {
  return "# asyncdp " ASYNCDP_VERSION " resolved configuration\n" + ToToml(resolved);
}

void WriteTrainOutputs(const TrainResult& result, const std::string& out_dir) {
  OutputDirectory out(out_dir);
  out.Write("config.resolved.toml", ResolvedConfigToml(result.resolved_config));
  out.Write("metrics.csv", result.metrics_csv);
  out.Write("clients.csv", result.clients_csv);
  out.Write("summary.json", result.summary.dump(2) + "\n");
  if (!result.phases_csv.empty()) out.Write("phases.csv", result.phases_csv);
  if (!result.events_csv.empty()) out.Write("events.csv", result.events_csv);
  out.Commit();
}

}  // namespace asyncdp::sim
