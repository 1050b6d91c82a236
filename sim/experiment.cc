#include "sim/experiment.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/check.h"
#include "core/error.h"
#include "core/random.h"
#include "core/sampling.h"
#include "core/secure_noise.h"
#include "data/partition.h"
#include "sim/audit/train_canaries.h"
#include "sim/model_config.h"
#include "sim/proactive/client_plan.h"
#include "sim/reference_optimum_io.h"
#include "sim/train_data.h"

namespace asyncdp::sim {
namespace {


// Evenly spaced rows of the union of the shards (deterministic, no extra randomness).
// The training rows of the train-loss column: `wanted` rows spread evenly over the set.
std::vector<int64_t> TrainEvalRowNumbers(int64_t n, int64_t wanted) {
  if (wanted <= 0) return {};
  const int64_t count = std::min(wanted, n);
  std::vector<int64_t> rows(static_cast<size_t>(count));
  for (int64_t j = 0; j < count; ++j) rows[j] = j * n / count;
  return rows;
}

data::Dataset TrainEvalRows(const data::Dataset& train, int64_t wanted) {
  if (wanted <= 0) return {};
  return data::Subset(train, TrainEvalRowNumbers(train.rows(), wanted));
}

// An (ε, δ) guarantee lets a mechanism publish a whole record with probability about δ, so δ must be far
// below 1/N_c for every client (the paper's δ = 1/N_c is the largest sensible value). With tiny shards the
// default becomes meaningless (e.g. 1–2 records per client: δ = 0.5), so a run refuses δ ≥ 0.1 and warns
// when δ exceeds some client's 1/N_c.

void CheckDeltaMeaningful(const TrainConfig& config, const std::vector<data::RowView>& shards) {
  if (!config.dp.enabled) return;
  const double delta = config.dp.delta;
  CheckDeltaValue(delta, fmt::format("the default is 1/N_c with the largest shard N_c = {}",
                                     shards.empty() ? 0 : shards[0].rows()));
  int64_t smallest = std::numeric_limits<int64_t>::max();
  for (const auto& shard : shards) smallest = std::min(smallest, shard.rows());
  if (delta > 1.0 / static_cast<double>(smallest)) {
    spdlog::warn("dp.delta = {:.3g} exceeds 1/N_c = {:.3g} of the smallest client (N_c = {}): for that client "
                 "the (ε, δ) guarantee permits leaking a whole record",
                 delta, 1.0 / static_cast<double>(smallest), smallest);
  }
}

// Splits every shard into training rows (the data set d its ε protects) and held-out rows for the
// client's accuracy check: the last HeldOutRows of the shard.
void SplitHoldouts(Experiment& e, double fraction) {
  for (data::RowView& shard : e.data.shards) {
    const int64_t rows = shard.rows();
    const int64_t held = CheckedHeldOutRows(fraction, rows);
    const std::vector<int64_t> holdout(shard.indices.end() - held, shard.indices.end());
    e.proactive.holdouts.push_back(data::Subset(*shard.data, holdout));  // small: copied for Model::Evaluate
    shard.indices.resize(static_cast<size_t>(rows - held));
  }
}

// The privacy setup of a proactive run: every client's plan carries its phases' σ_j already, and its
// budget round is where its ε_target would be exceeded under any upper-bound accountant.
PrivacySetup ProactivePrivacy(const Experiment& e, int64_t dimension) {
  PrivacySetup p;
  p.enabled = true;
  p.accountant = ToAccountantKind(e.config.dp.accountant);
  p.options.sampling = e.config.dp.sampling;
  p.delta = e.config.dp.delta;
  p.clip = e.config.dp.clip;
  p.dimension = dimension;
  p.epsilon_budget = 0.0;
  for (size_t c = 0; c < e.proactive.phase_plans.size(); ++c) {
    p.budget_rounds.push_back(e.proactive.phase_plans[c].budget_rounds);
    p.epsilon_budget = std::max(p.epsilon_budget, e.proactive.targets[c].epsilon);
    if (p.sigma == 0.0 && e.proactive.phase_plans[c].admitted)
      p.sigma = e.proactive.phase_plans[c].phases.front().sigma;
  }
  return p;
}

// dp.sampling = random_allocation: one window of m rounds with k allocations per record for every client
// (derived from the largest shard and the longest plan when dp.allocation_steps = 0), written back into
// the resolved config;
// every plan's rate becomes k/m, the rate the random-allocation accountant checks every round against.
void ResolveAllocationWindow(Experiment& e) {
  DpConfig& dp = e.config.dp;
  const int64_t k = dp.allocation_k;
  int64_t largest = 0;
  for (const auto& shard : e.data.shards) largest = std::max(largest, shard.rows());
  if (dp.allocation_steps == 0) {
    // E windows of about k N_max / s rounds each (an expected batch of about s), with m chosen so that E
    // windows tile the longest plan: a window cut short is charged as a whole one.
    const int64_t rounds = LongestPlan(e);
    const double per_window = static_cast<double>(k) * static_cast<double>(largest) /
                              static_cast<double>(e.config.schedule.sample_size);
    const int64_t windows = std::max<int64_t>(1, std::llround(static_cast<double>(rounds) / per_window));
    dp.allocation_steps = std::max<int64_t>(k, (rounds + windows - 1) / windows);
  }
  // k <= m: a given m was checked with the configuration (ValidateConfig), a derived one is at least k.
  ASYNCDP_CHECK(k <= dp.allocation_steps);
  const double rate = static_cast<double>(k) / static_cast<double>(dp.allocation_steps);
  e.plans.ForEachDistinct([rate](RoundPlan& plan) { plan.allocation_rate = rate; });
  spdlog::info("random allocation: windows of m = {} rounds, k = {} per record (expected batch N_c k / m = {:.3g} "
               "for the largest client)", dp.allocation_steps, k,
               rate * static_cast<double>(largest));
}

}  // namespace

void CheckDeltaValue(double delta, const std::string& why_this_delta) {
  if (delta >= 0.1) {
    throw ConfigError("dp.delta", fmt::format("δ = {:.3g} ({}): a guarantee with δ ≥ 0.1 is void — it allows "
                                              "publishing a record outright with probability δ. Set dp.delta "
                                              "explicitly (e.g. 1e-5) or use more records",
                                              delta, why_this_delta));
  }
}

namespace {

// The training rows whose features a rank reads (LIBSVM data over MPI): its hosted clients' rows and, on the
// rank that evaluates, the rows its evaluation scores.
std::vector<bool> RowsToRead(const TrainConfig& config, const std::vector<std::vector<int64_t>>& shards,
                             const std::vector<bool>& hosted, bool evaluates, int64_t train_rows) {
  std::vector<bool> rows(static_cast<size_t>(train_rows), false);
  for (size_t c = 0; c < shards.size(); ++c) {
    if (!hosted[c]) continue;
    for (int64_t r : shards[c]) rows[static_cast<size_t>(r)] = true;
  }
  if (!evaluates) return rows;
  for (int64_t r : TrainEvalRowNumbers(train_rows, config.eval.train_rows))
    rows[static_cast<size_t>(r)] = true;
  // The distance to a reference optimum is the objective over every client's data (sim/metrics.cc).
  if (!config.eval.reference_optimum.empty()) rows.assign(rows.size(), true);
  // The proactive diagnostics evaluate the final model on every client's held-out rows (the last HeldOutRows
  // of its shard, SplitHoldouts).
  if (config.output.diagnostics && config.targets.on()) {
    for (const auto& shard : shards) {
      const auto n = static_cast<int64_t>(shard.size());
      if (n < 2) continue;  // SplitHoldouts refuses it
      for (int64_t i = n - HeldOutRows(config.targets.holdout_fraction, n); i < n; ++i) {
        rows[static_cast<size_t>(shard[static_cast<size_t>(i)])] = true;
      }
    }
  }
  // Mislabelled audit canaries are relabelled copies of the audited client's records, scored on the final
  // model where it is evaluated (sim/audit/train_canaries.h).
  if (config.audit.canaries > 0 && config.audit.canary == TrainCanary::kMislabelled) {
    for (int64_t r : shards[static_cast<size_t>(config.audit.client)]) rows[static_cast<size_t>(r)] = true;
  }
  return rows;
}

// Reads the data and cuts the client shards (views into the one training set), the evaluation rows and, with
// a Hosting (an MPI rank), only the hosted clients' rows with their features. Returns the plans the rows
// were chosen by (empty without a Hosting), for PlanAsyncRounds to reuse.
struct PlannedFromLabels {
  PlanTable plans;                             // every client's round plan (empty without a Hosting)
  std::vector<ProactiveClientPlan> proactive;  // proactive runs: every client's plans, the same ones
};

PlannedFromLabels LoadExperimentData(Experiment& e, const Hosting& hosting) {
  const TrainConfig& config = e.config;
  e.proactive.options = ResolveProactiveOptions(config, config.dp.sampling);
  // With a Hosting (an MPI rank), the shards and plans are decided from the labels alone, and only the
  // hosted clients' rows are read with their features; the final plans must place the clients the same way
  // (FinishHosting checks).
  std::vector<std::vector<int64_t>> shards;
  PlannedFromLabels planned;  // the plans the rows were chosen by (reused below)
  RowHolding holding;
  if (hosting.clients) {
    holding.test = hosting.evaluates;
    holding.train_rows = [&](const data::Dataset& labels) {
      shards = ClientShards(config.data, labels, config.clients.count, config.seed);
      planned.plans.reserve(shards.size());
      for (size_t c = 0; c < shards.size(); ++c) {
        const auto rows = static_cast<int64_t>(shards[c].size());
        if (e.proactive.options.enabled) {
          // The proactive plans themselves (public, from N_c), so that balanced placement weighs the
          // phases' work and the final plans place the clients as these do (FinishHosting checks).
          const int64_t held = CheckedHeldOutRows(e.proactive.options.holdout_fraction, rows);
          planned.proactive.push_back(
              PlanProactiveClient(config, e.proactive.options, static_cast<int64_t>(c), rows - held, held));
          planned.plans.push_back(planned.proactive.back().phases.plan);
          continue;
        }
        // The audited client's N_c counts the canaries PlantTrainCanaries will add (audit.canaries > 0).
        const int64_t records =
            audit::RecordsWithCanaries(config, config.dp.sampling, static_cast<int64_t>(c), rows);
        planned.plans.push_back(MakeRoundPlan(config.schedule, records));
      }
      e.data.hosted = hosting.clients(planned.plans);
      return RowsToRead(config, shards, e.data.hosted, hosting.evaluates, labels.rows());
    };
  }
  LoadedData loaded = LoadTrainData(config.data, config.seed, holding);
  if (shards.empty()) shards = ClientShards(config.data, loaded.train, config.clients.count, config.seed);
  // Shards are views into the one loaded training set: copying them doubled the peak memory (LeNet's
  // quick run: 534 MB for 235 MB of data; BENCHMARKS.md, "Memory").
  e.data.train = std::make_shared<const data::Dataset>(std::move(loaded.train));
  for (auto& shard : shards) e.data.shards.push_back(data::RowView{e.data.train.get(), std::move(shard)});
  e.data.test = std::move(loaded.test);
  if (hosting.evaluates) e.data.train_eval = TrainEvalRows(*e.data.train, config.eval.train_rows);
  if (e.proactive.options.enabled) SplitHoldouts(e, e.proactive.options.holdout_fraction);
  return planned;
}

// Proactive clients: each one's target, its accuracy checks' share of the budget, its phases and plan, and
// the privacy setup of the whole population.
// `planned`: the plans made from the labels (an MPI rank reading LIBSVM data), or empty.
void PlanProactiveClients(Experiment& e, std::vector<ProactiveClientPlan> planned) {
  const TrainConfig& config = e.config;
  // Phases planned per client from public values (N_c, targets, σ_j, K_j); σ lives in each plan.
  int64_t not_admitted = 0;
  for (size_t c = 0; c < e.data.shards.size(); ++c) {
    const auto id = static_cast<int64_t>(c);
    ProactiveClientPlan p = planned.empty()
                                ? PlanProactiveClient(config, e.proactive.options, id,
                                                      e.data.shards[c].rows(), e.proactive.holdouts[c].rows())
                                : std::move(planned[c]);
    e.proactive.targets.push_back(p.target);
    e.proactive.check_plans.push_back(std::move(p.checks));
    e.proactive.phase_plans.push_back(std::move(p.phases));
    const ClientPhasePlan& phases = e.proactive.phase_plans.back();
    e.plans.push_back(phases.plan);
    if (!phases.admitted) {
      ++not_admitted;
      spdlog::warn(
          "client {}: its budget epsilon_target = {} cannot reach its target (accuracy {}): it does "
          "not join ({})",
          c, e.proactive.targets[c].epsilon, e.proactive.targets[c].accuracy, phases.reason);
    } else {
      spdlog::info(
          "client {}: {} phase(s) planned, {} rounds, budget allows {} (epsilon_target = {}, delta = "
          "{:.3g})",
          c, phases.phases.size(), phases.plan.rounds(), phases.budget_rounds, e.proactive.targets[c].epsilon,
          e.proactive.targets[c].delta);
    }
  }
  if (not_admitted == static_cast<int64_t>(e.data.shards.size())) {
    throw ConfigError("targets.epsilon", "no client's budget can reach its target: nobody would train");
  }
  // Paused clients re-check on global rounds spaced so that G ≤ T_max allows at most paused_checks.
  int64_t longest = 0;
  for (const RoundPlan& plan : e.plans) longest = std::max(longest, plan.rounds());
  for (CheckPlan& checks : e.proactive.check_plans) SetCheckStride(checks, longest);
  const auto privacy_start = std::chrono::steady_clock::now();
  e.privacy = ProactivePrivacy(e, e.model->NumParams());
  e.privacy_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - privacy_start).count();
}

// Asynchronous rounds: every client's plan, the allocation window, then sigma and the budget rounds.
void PlanAsyncRounds(Experiment& e, PlanTable planned) {
  const TrainConfig& config = e.config;
  if (!planned.empty()) {
    e.plans = std::move(planned);
  } else {
    for (const auto& shard : e.data.shards) e.plans.push_back(MakeRoundPlan(config.schedule, shard.rows()));
  }
  if (config.dp.sampling == SamplingModel::kRandomAllocation) ResolveAllocationWindow(e);
  // σ (calibrated if asked), every plan's σ_i and every client's budget round, before training.
  const auto privacy_start = std::chrono::steady_clock::now();
  e.privacy = ResolvePrivacy(config, e.plans, config.dp.sampling, config.dp.delta, e.model->NumParams());
  e.privacy_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - privacy_start).count();
}

// With a Hosting: which clients this process runs (checked against the plans the rows were read for), and
// no row list for the others.
void FinishHosting(Experiment& e, const Hosting& hosting) {
  if (e.data.hosted.empty()) {
    // Not LIBSVM: the data were read whole, so the placement comes from the final plans.
    e.data.hosted = hosting.clients(e.plans);
  } else {
    // The rows were chosen from plans made before σ and the budget were resolved; placement must not differ.
    ASYNCDP_CHECK_MSG(
        hosting.clients(e.plans) == e.data.hosted,
        "the final round plans place the clients differently from the plans the rows were read for");
  }
  // A client this process does not run needs no row list (its N_c is plans[c].n_records), unless the
  // evaluation reads every client's rows (a reference optimum's objective).
  const bool keep_all = hosting.evaluates && e.data.reference.has_value();
  for (size_t c = 0; c < e.data.shards.size(); ++c) {
    if (!e.data.hosted[c] && !keep_all) std::vector<int64_t>().swap(e.data.shards[c].indices);
  }
}

}  // namespace

Experiment BuildExperiment(const TrainConfig& input, const Hosting& hosting) {
  Experiment e;
  e.config = input;
  TrainConfig& config = e.config;
  PlannedFromLabels planned = LoadExperimentData(e, hosting);
  const int64_t n_c = e.data.shards[0].rows();
  ResolveL2Lambda(config.model, n_c);
  e.model = MakeModelFromConfig(config.model, *e.data.train, n_c);
  // audit.canaries > 0: plant the audit's canaries before anything is planned from the shards.
  e.train_canaries = audit::PlantTrainCanaries(e.config, config.dp.sampling, e.data.shards, e.model);
  e.protocol.delay_rule = MakeDelayRule(config.protocol.delay_rule, config.protocol.tau);
  e.initial_model = e.model->InitialParams(config.seed);
  if (!config.eval.reference_optimum.empty()) {
    int64_t records = 0;
    for (const auto& shard : e.data.shards) records += shard.rows();
    e.data.reference = LoadReferenceOptimum(config.eval.reference_optimum,
                                            ReferenceObjectiveKey(config, records), e.model->NumParams());
  }

  // δ = 1/N_c by default (the paper's choice), with N_c the largest shard: the smallest of the clients'
  // 1/N_c. A non-private run accounts nothing, so it resolves no δ (dp.delta is not read:
  // sim/config_usage.cc).
  int64_t largest = 0;
  for (const auto& shard : e.data.shards) largest = std::max(largest, shard.rows());
  if (config.dp.enabled && config.dp.delta == 0.0)
    config.dp.delta = config.targets.delta > 0 ? config.targets.delta : 1.0 / static_cast<double>(largest);
  CheckDeltaMeaningful(config, e.data.shards);
  if (e.proactive.options.enabled) {
    PlanProactiveClients(e, std::move(planned.proactive));
  } else {
    PlanAsyncRounds(e, std::move(planned.plans));
  }
  // σ lives in e.privacy; the resolved configuration records it so that the run can be repeated as is. A
  // non-private run keeps the σ it was given (written there as not read); a proactive run's σ_j are its
  // phases' (phases.csv, summary.json), not a dp.sigma it would read.
  if (e.privacy.enabled && !e.proactive.options.enabled) config.dp.sigma = e.privacy.sigma;
  e.protocol.runtime = ResolveRuntimeOptions(config);
  e.protocol.server = ResolveServerOptions(config);
  e.protocol.faults = ResolveFaultPlan(config);
  if (hosting.clients) FinishHosting(e, hosting);
  return e;
}

RuntimeOptions ResolveRuntimeOptions(const TrainConfig& config) {
  RuntimeOptions o;
  o.kind = config.protocol.runtime;
  o.seed = config.seed;
  o.gradient_cost = config.clients.gradient_cost;
  o.latency = config.clients.latency;
  o.latency_mean = config.clients.latency_mean;
  o.exclude_after = config.protocol.exclude_after;
  o.worker_threads = config.protocol.worker_threads;
  o.mpi_timeout = config.protocol.mpi_timeout;
  o.mpi_placement = config.protocol.mpi_placement;
  o.diagnostics = config.output.diagnostics;
  return o;
}

ServerOptions ResolveServerOptions(const TrainConfig& config) {
  ServerOptions o;
  o.step = config.protocol.server_step;
  o.staleness_exponent = config.protocol.staleness_exponent;
  // At full step a global round moves v̂ by the sum of n client steps. The paper's settings have n = 5; at
  // n ≥ 100 the sum is 20× larger than anything they tested, and 1,000 a9a clients with the Table 3
  // schedule diverge (docs/theory.md, "Server step scaling").
  if (o.step == ServerStep::kFull && config.clients.count >= kManyClientsFullStep) {
    spdlog::warn("{} clients at protocol.server_step = \"full\": every client's update is applied at its full "
                 "step, so a global round moves the model by the sum of {} steps and may diverge; "
                 "protocol.server_step = \"per_client\" weights each by 1/n (epsilon is unchanged)",
                 config.clients.count, config.clients.count);
  }
  return o;
}

FaultPlan ResolveFaultPlan(const TrainConfig& config) {
  FaultPlan plan;
  plan.clients.resize(static_cast<size_t>(config.clients.count));
  for (size_t c = 0; c < plan.clients.size(); ++c) {
    ClientFaults& f = plan.clients[c];
    const auto id = static_cast<int64_t>(c);
    if (config.clients.speed == SpeedModel::kLognormal) {
      // Per-client compute-time multiplier of the virtual clock: lognormal(0, speed_sigma), median 1.
      RandomStream stream(StreamKey{config.seed, static_cast<uint32_t>(c), 0, StreamPurpose::kClientSpeed});
      f.speed = std::exp(config.clients.speed_sigma * stream.NextNormal());
    }
    if (ListsClient(config.clients.straggler_ids, id)) {
      f.speed *= config.clients.straggler_factor;
      f.straggler_factor = config.clients.straggler_factor;
    }
    if (ListsClient(config.clients.delay_ids, id)) f.extra_delay = config.clients.delay_extra;
    if (ListsClient(config.clients.dropout_ids, id)) f.dropout_round = config.clients.dropout_round;
  }
  return plan;
}

AllocationSlots AllocationSlotsOf(const Experiment& e) {
  if (e.privacy.sampling() != SamplingModel::kRandomAllocation) return {};
  return {e.config.dp.allocation_steps, e.config.dp.allocation_k};
}

int64_t LongestPlan(const Experiment& e) {
  int64_t rounds = 0;
  for (const auto& plan : e.plans) rounds = std::max(rounds, plan.rounds());
  return rounds;
}

std::vector<std::unique_ptr<ClientProtocol>> MakeClients(const Experiment& e, const std::vector<bool>& hosted) {
  ASYNCDP_CHECK(hosted.empty() || hosted.size() == e.data.shards.size());
  std::vector<std::unique_ptr<ClientProtocol>> clients;
  clients.reserve(e.data.shards.size());
  const bool secure = e.privacy.enabled && e.privacy.secure_noise;
  for (size_t c = 0; c < e.data.shards.size(); ++c) {
    if (!hosted.empty() && !hosted[c]) {
      clients.push_back(nullptr);
      continue;
    }
    // The shard's own data set: the training set, or the audited client's planted copy (audit.canaries).
    for (int64_t r : e.data.shards[c].indices)
      ASYNCDP_CHECK_MSG(e.data.shards[c].data->Holds(r), "a hosted client's row was not read");
    ClientOptions options;
    options.id = static_cast<int64_t>(c);
    options.seed = e.config.seed;
    options.clip = e.config.dp.clip;
    if (e.privacy.user_level) options.client_clip = e.privacy.client_clip;
    if (e.privacy.adaptive_clip) {
      options.adaptive_clip = {true, e.config.dp.clip_quantile, e.config.dp.clip_lr, e.privacy.clip_count_sigma};
    }
    options.noise = secure ? NoiseMode::kSecure : NoiseMode::kReproducible;
    options.stop_at_round = e.protocol.faults.clients[c].dropout_round;
    if (std::isfinite(e.privacy.epsilon_budget)) options.budget_rounds = e.privacy.budget_rounds[c];
    AccuracyCheck accuracy_check;
    if (e.proactive.options.enabled) {
      options.accuracy_target = e.proactive.targets[c].accuracy;
      options.phase_ends = e.proactive.phase_plans[c].phase_ends;
      const data::Dataset* holdout = &e.proactive.holdouts[c];
      const models::Model* model = e.model.get();
      const CheckPlan& checks = e.proactive.check_plans[c];
      if (checks.private_checks) options.paused_check_stride = checks.stride;
      // A private check releases accuracy + N(0, (σ_check Δ)²), its noise from the stream (seed, client,
      // check index); never more checks than planned (one per phase end, the strided paused re-checks).
      accuracy_check = [holdout, model, checks, seed = e.config.seed, client = static_cast<uint32_t>(c),
                        count = int64_t{0}](const Eigen::VectorXf& w) mutable {
        double accuracy =
            model->Evaluate(std::span<const float>(w.data(), static_cast<size_t>(w.size())), *holdout).accuracy;
        if (checks.private_checks) {
          ASYNCDP_CHECK(count < checks.planned);
          RandomStream noise(StreamKey{seed, client, static_cast<uint32_t>(count), StreamPurpose::kAccuracyCheck});
          accuracy += checks.noise_std() * noise.NextNormal();
        }
        ++count;
        return accuracy;
      };
    }
    // Secure noise: the batches must be as unpredictable as the noise (amplification by subsampling assumes
    // the sample is secret), so their streams get a key from the OS, never written out.
    const uint64_t batch_seed = secure ? OsRandomSeed() : e.config.seed;
    clients.push_back(std::make_unique<ClientProtocol>(
        options, e.data.shards[c], audit::ClientModel(e.train_canaries.get(), *e.model, c),
        audit::ClientRunPlan(e.train_canaries.get(), e.plans[c], c), *e.protocol.delay_rule,
        MakeSampler(e.privacy.sampling(), e.data.shards[c].rows(), batch_seed, static_cast<uint32_t>(c),
                    AllocationSlotsOf(e)),
        e.initial_model, std::move(accuracy_check)));
    if (e.proactive.options.enabled && !e.proactive.phase_plans[c].admitted)
      clients.back()->MarkNotAdmitted();
  }
  return clients;
}

}  // namespace asyncdp::sim
