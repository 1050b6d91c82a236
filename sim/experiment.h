// Everything a run needs, built from a validated TrainConfig: the data (client shards, evaluation sets),
// the model, the delay rule, each client's a-priori round plan, the resolved DP parameters, and the
// initial model. Building is the only place that reads files; the runtimes never do I/O.
// This is also where the configuration is resolved into typed options (conventions.md §16): the runtimes
// get RuntimeOptions and a FaultPlan, each client ClientOptions and its RoundPlan (s_i, q_i, σ_i), the
// accountants a PrivacySetup; none of them sees TrainConfig or compares a string while running.
#pragma once

#include <Eigen/Dense>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/privacy_assumptions.h"
#include "core/sampling.h"
#include "data/dataset.h"
#include "data/row_view.h"
#include "models/model.h"
#include "models/reference_optimum.h"
#include "sim/config.h"
#include "sim/protocol/client.h"
#include "sim/privacy_setup.h"
#include "sim/proactive/phase_plan.h"
#include "sim/proactive/private_checks.h"
#include "sim/protocol/delay_rule.h"
#include "sim/protocol/server_step.h"
#include "sim/plan_table.h"
#include "sim/round_plan.h"
#include "sim/runtime/runtime_options.h"

namespace asyncdp::sim {

namespace audit {
struct TrainCanaries;  // sim/audit/train_canaries.h
}

// The proactive framework (targets.accuracy > 0; docs/theory.md §9): its options and, per client (indexed
// like RunData::shards), its targets, the held-out rows of its accuracy checks (not in shards[c], so not
// in the data set its ε protects), its planned phases and its checks. Empty vectors when not enabled.
struct ProactiveClients {
  ProactiveOptions options;
  std::vector<ClientTarget> targets;
  std::vector<data::Dataset> holdouts;
  std::vector<ClientPhasePlan> phase_plans;
  // The accuracy checks (private by default, sim/proactive/private_checks.h). The phases were planned for
  // ε_target − check_plans[c].epsilon and δ_target − check_plans[c].delta.
  std::vector<CheckPlan> check_plans;
};

// The data of a run: the training rows as loaded once, every client's shard a view into them (no copy),
// the evaluation rows, and which clients this process hosts.
struct RunData {
  std::shared_ptr<const data::Dataset> train;
  std::vector<data::RowView> shards;  // client c's local data set d (rows of *train; see `hosted`)
  data::Dataset test;                 // evaluation rows (capped at data.eval_rows)
  data::Dataset train_eval;           // training rows for the train-loss column (may be empty)
  std::optional<models::ReferenceOptimum> reference;  // w* of eval.reference_optimum (diagnostics)
  // Built with a Hosting: the clients this process runs, and whether it evaluates. The other clients' rows
  // are not in *train and their shards are empty (N_c is plans[c].n_records), unless the evaluation needs
  // every row (a reference optimum). Empty: every client, and every shard is whole.
  std::vector<bool> hosted;
};

// How the protocol runs, resolved into typed options: the delay rule Υ, the runtime, the server's step
// weighting and the injected faults.
struct ProtocolSetup {
  std::unique_ptr<DelayRule> delay_rule;
  RuntimeOptions runtime;
  ServerOptions server;  // the server's step weighting (protocol.server_step, staleness_exponent)
  FaultPlan faults;
};

struct Experiment {
  // The configuration with every derived value filled in (σ if calibrated, δ, λ), as written to
  // config.resolved.toml.
  TrainConfig config;
  RunData data;
  std::unique_ptr<models::Model> model;
  PlanTable plans;                // per client: s_i, q_i, σ_i, η̄_i
  Eigen::VectorXf initial_model;  // v̂_0
  // σ (stored here only), δ every ε refers to, the sampler and noise the accountants assume, the budget
  // rounds, secure noise.
  PrivacySetup privacy;
  // Wall seconds spent deciding σ and the budget halts before training (calibration, RoundsWithinBudget):
  // part of summary.json's accounting_seconds.
  double privacy_seconds = 0.0;
  ProtocolSetup protocol;
  // The proactive framework (targets.accuracy > 0); options.enabled false otherwise.
  ProactiveClients proactive;
  // audit.canaries > 0: the one-run audit's canaries planted in the audited client's data (and its model);
  // nullptr otherwise (sim/audit/train_audit.h).
  std::shared_ptr<audit::TrainCanaries> train_canaries;
};

// Which clients this process runs, decided from the public round plans, and whether it evaluates the model
// (an MPI rank: sim/runtime/mpi_runtime.h). Default: one process runs everything.
struct Hosting {
  std::function<std::vector<bool>(const PlanTable& plans)> clients;
  bool evaluates = true;
};

// The typed runtime options and per-client faults of a configuration (pure in the config and its seed).
RuntimeOptions ResolveRuntimeOptions(const TrainConfig& config);
// The server's step weighting; warns when many clients add up full steps (see kManyClientsFullStep).
ServerOptions ResolveServerOptions(const TrainConfig& config);
FaultPlan ResolveFaultPlan(const TrainConfig& config);

// The allocation window of dp.sampling = random_allocation (resolved m, k); empty for other samplers.
AllocationSlots AllocationSlotsOf(const Experiment& experiment);

// The most local rounds any client plans (the global round a run ends at if nothing stops early).
int64_t LongestPlan(const Experiment& experiment);

// Loads data and builds the experiment. Throws InputError/ConfigError for bad files or settings. With a
// Hosting, only the hosted clients' rows (and, if it evaluates, the evaluation rows) keep their features
// (LIBSVM data; sim/train_data.h), and RunData::hosted records the clients.
Experiment BuildExperiment(const TrainConfig& config, const Hosting& hosting = {});

// Refuses δ ≥ 0.1 (a void guarantee: it allows publishing a record outright with probability δ), for every
// participation mode; `why_this_delta` says where δ came from. Throws ConfigError naming dp.delta.
void CheckDeltaValue(double delta, const std::string& why_this_delta);

// Fresh client protocol objects for one run (each with its own sampler, ledger and workspace).
// `hosted` (empty: every client) selects the clients this process runs; the others stay null (the MPI
// runtime: each rank builds only its own, sim/runtime/mpi_runtime.h).
std::vector<std::unique_ptr<ClientProtocol>> MakeClients(const Experiment& experiment,
                                                         const std::vector<bool>& hosted = {});

}  // namespace asyncdp::sim
