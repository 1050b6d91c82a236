#include "sim/checkin/checkin_run.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>

#include "core/error.h"
#include "core/step_size.h"
#include "sim/checkin/checkin_client.h"
#include "sim/checkin/checkin_plan.h"
#include "sim/checkin/checkin_privacy.h"
#include "sim/checkin/checkin_server.h"
#include "sim/checkin/checkin_summary.h"
#if ASYNCDP_WITH_MPI
#include "sim/checkin/mpi_checkin.h"
#endif
#include "sim/config_io.h"
#include "sim/json_number.h"
#include "sim/model_config.h"
#include "sim/progress.h"
#include "sim/runtime/step_runtime.h"
#include "sim/train_data.h"

namespace asyncdp::sim::checkin {
namespace {

struct Data {
  data::Dataset train;                            // the training rows clients hold
  std::vector<std::vector<int64_t>> client_rows;  // client j's rows of `train`
  data::Dataset test;
  int64_t train_rows = 0;  // training rows loaded
  int64_t used_rows = 0;   // rows some client holds
};

Data LoadCheckInData(const TrainConfig& config, const CheckInOptions& o) {
  // The same loading and test split as asynchronous rounds (sim/train_data.h).
  LoadedData loaded = LoadTrainData(config.data, config.seed);
  Data d;
  d.train = std::move(loaded.train);
  d.test = std::move(loaded.test);
  d.train_rows = d.train.rows();
  if (o.user_level()) {
    // User level: the clients' data sets, as asynchronous rounds partition them (data.partition,
    // data.rows_per_client).
    d.client_rows = ClientShards(config.data, d.train, o.clients, config.seed);
    for (const auto& rows : d.client_rows) d.used_rows += static_cast<int64_t>(rows.size());
  } else {
    // Record level (Balle et al.): client j holds training row j.
    if (d.train.rows() < o.clients) {
      throw ConfigError("clients.count",
                        fmt::format("{} clients but {} training rows: every client needs a record", o.clients,
                                    d.train.rows()));
    }
    d.client_rows.resize(static_cast<size_t>(o.clients));
    for (int64_t j = 0; j < o.clients; ++j) d.client_rows[static_cast<size_t>(j)] = {j};
    d.used_rows = o.clients;
  }
  return d;
}

#if ASYNCDP_WITH_MPI
// The MPI side of a check-in run: this rank's endpoint and, on rank 0, the ranks hosting the clients.
struct CheckInMpi {
  int ranks;
  mpi::Endpoint endpoint;
  MpiCheckInClients clients;
  CheckInMpi(const TrainConfig& config, const std::vector<std::vector<int64_t>>& client_rows, int64_t params)
      : ranks(RequireRanks()),
        endpoint(MPI_COMM_WORLD),
        clients(endpoint, CheckInPlacement(ranks, config.protocol.mpi_placement, client_rows), params,
                config.protocol.mpi_timeout) {}
  static int RequireRanks() {
    int initialised = 0;
    MPI_Initialized(&initialised);
    int size = 0;
    if (initialised) MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
      throw InputError("protocol.runtime",
                       "\"mpi\" needs at least 2 ranks (rank 0 runs the check-in server, ranks 1..P-1 the "
                       "clients): start asyncdp with mpirun -np P, P >= 2");
    }
    return size;
  }
};
#endif

// sigma (dp.sigma, or calibrated to dp.epsilon) and what it buys: the check-ins' privacy and, at the user
// level, the record-level guarantee of the same run beside it (docs/theory.md §4). A record moves its
// client's update by at most C under noise sigma C_u: the same reduction at multiplier sigma C_u / C
// (conservative: the reduction charges sensitivity 2C), and never above the user-level bound, which implies
// it.
struct CheckInNoise {
  double sigma = 0.0;
  bool calibrated = false;
  CheckInPrivacy privacy;
  std::optional<CheckInPrivacy> record_level;
};

CheckInNoise ResolveCheckInNoise(TrainConfig& config, const CheckInOptions& o, double delta) {
  CheckInNoise noise;
  if (config.dp.enabled) {
    if (config.dp.sigma > 0.0) {
      noise.sigma = config.dp.sigma;
    } else if (config.dp.epsilon > 0.0) {
      noise.sigma = CalibrateCheckInSigma(o, config.dp.epsilon, delta);
      config.dp.sigma = noise.sigma;
      noise.calibrated = true;
    } else {
      throw ConfigError("dp.sigma",
                        "check-ins need dp.sigma > 0 or a target dp.epsilon (or dp.enabled = false)");
    }
  }
  if (noise.sigma > 0.0) {
    noise.privacy = AccountCheckIns(o, noise.sigma, delta);
    if (o.user_level() && noise.privacy.bounded) {
      noise.record_level = AccountCheckIns(o, noise.sigma * o.client_clip / config.dp.clip, delta);
    }
  } else {
    noise.privacy.reason = "no noise (dp.enabled = false or sigma = 0): not private";
  }
  return noise;
}

// The run itself: each window's check-ins drawn, one server step per clock tick, `record(step, counters)` at
// step 0, at each of `eval_at` and at the end; the observers told of every step. Setting *cancel stops it
// after the current step (the steps taken are then fewer than planned). check_ins[j] = the windows client j
// checked in to (within the update range): a non-private diagnostic.
struct CheckInSteps {
  CheckInCounters counters;
  std::vector<int32_t> check_ins;
  int64_t steps_run = 0;    // server steps taken (the plan's m E unless the run was cancelled)
  int64_t windows_run = 0;  // windows whose every step was taken
  bool cancelled = false;
};

CheckInSteps RunCheckInSteps(const CheckInOptions& o, CheckInServer& server,
                             const std::vector<int64_t>& eval_at,
                             const std::function<void(int64_t, const CheckInCounters&)>& record,
                             RunObserver& observers, const std::atomic<bool>* cancel) {
  CheckInSteps run;
  CheckInCounters& counters = run.counters;
  run.check_ins.assign(static_cast<size_t>(o.clients), 0);
  const int64_t total_steps = o.steps * o.windows;
  size_t next_eval = 0;
  int64_t global_step = 0;
  int64_t last_recorded = 0;
  record(0, counters);
  const auto cancelled = [cancel] { return cancel != nullptr && cancel->load(std::memory_order_relaxed); };
  for (int64_t window = 0; window < o.windows && !run.cancelled; ++window) {
    const WindowCheckIns plan = DrawWindowCheckIns(o, window);
    counters.participating += plan.participating;
    counters.out_of_range += plan.out_of_range;
    for (int32_t j : plan.members) ++run.check_ins[static_cast<size_t>(j)];
    for (int64_t i = 0; i < o.steps; ++i, ++global_step) {
      if (cancelled()) {
        run.cancelled = true;
        break;
      }
      const StepOutcome outcome = server.OnStep(window, global_step, plan.At(i));
      counters.empty_steps += outcome.empty ? 1 : 0;
      counters.dummy_updates += outcome.dummy ? 1 : 0;
      counters.discarded += outcome.discarded;
      counters.used += outcome.used;
      counters.records += outcome.records;
      while (next_eval < eval_at.size() && eval_at[next_eval] == global_step + 1) {
        record(global_step + 1, counters);
        last_recorded = global_step + 1;
        ++next_eval;
      }
      observers.OnCheckInStep(global_step + 1, total_steps,
                              {.time = static_cast<double>(global_step + 1), .gradients = global_step + 1});
    }
    if (!run.cancelled) ++run.windows_run;
  }
  server.Flush();
  run.steps_run = global_step;
  if (last_recorded != global_step) record(global_step, counters);
  observers.OnCheckInFinish(global_step,
                            {.time = static_cast<double>(global_step), .gradients = global_step});
  return run;
}

// The defaults a check-in run resolves from its data: lambda = 1/(records used), as for asynchronous rounds
// (Table 1), and delta = 1/n, the unit of privacy being a client (its one record, or its data set at the
// user level), so a small population makes the guarantee void — refused as for asynchronous rounds
// (CheckDeltaValue).
void ResolveDataDefaults(TrainConfig& config, const CheckInOptions& o, const Data& data) {
  const int64_t n = o.clients;
  ResolveL2Lambda(config.model, data.used_rows);
  if (config.dp.enabled) {  // a non-private run accounts nothing: no δ to resolve
    if (config.dp.delta == 0.0) config.dp.delta = 1.0 / static_cast<double>(n);
    CheckDeltaValue(config.dp.delta, fmt::format("the default is 1/n with n = {} clients", n));
  }
  if (data.train_rows > data.used_rows) {
    spdlog::warn("check-ins: the clients hold {} of the {} training rows ({}); the rest are not used",
                 data.used_rows, data.train_rows,
                 o.user_level() ? "data.rows_per_client caps each client"
                                : "one record per client, clients.count = " + std::to_string(n));
  }
}

StepSizeOptions CheckInStepSize(const TrainConfig& config) {
  StepSizeOptions step_size;
  step_size.schedule = config.schedule.step_rule;
  step_size.eta0 = config.schedule.eta0;
  step_size.beta = config.schedule.beta;
  ValidateStepSizeOptions(step_size, "schedule");
  return step_size;
}

// eval.points evaluations evenly spread over the run's steps (besides step 0 and the end).
std::vector<int64_t> EvaluationSteps(int64_t total_steps, int64_t points) {
  std::vector<int64_t> eval_at;
  for (int64_t p = 1; p <= points; ++p) eval_at.push_back(p * total_steps / (points + 1));
  return eval_at;
}

// Everything a check-in run resolves before it splits over MPI ranks and calibrates sigma: its options,
// data and the defaults they imply, the model and the step sizes (each refusing what it cannot run).
struct Prepared {
  TrainConfig config;
  CheckInOptions o;
  Data data;
  std::unique_ptr<models::Model> model;
  StepSizeOptions step_size;
};

Prepared Prepare(const TrainConfig& input) {
  Prepared p;
  p.config = input;
  p.o = ResolveCheckInOptions(p.config);
  if (p.config.dp.secure_noise) throw ConfigError("dp.secure_noise", "not supported with check-ins");
  p.data = LoadCheckInData(p.config, p.o);
  ResolveDataDefaults(p.config, p.o, p.data);
  p.model = MakeModelFromConfig(p.config.model, p.data.train, p.data.used_rows / p.o.clients);
  p.step_size = CheckInStepSize(p.config);
  return p;
}

// The steps with their observers: an evaluation into `metrics` at step 0, at eval.points steps spread
// over the run and at the end; the terminal's progress and the embedding's observer (the Python module's
// progress and Ctrl-C check) told of every step.
struct ObservedSteps {
  CheckInSteps steps;
  double seconds = 0.0;  // the steps alone, as a runtime times its run
};

ObservedSteps RunObservedSteps(const TrainConfig& config, const CheckInOptions& o, CheckInServer& server,
                               const models::Model& model, const data::Dataset& test,
                               const TrainOptions& options, CheckInMetrics& metrics) {
  const std::vector<int64_t> eval_at =
      EvaluationSteps(o.steps * o.windows, std::max<int64_t>(config.eval.points, 0));
  // What the check-ins realised (who checked in where, which steps were empty) is the randomness the
  // allocation bound assumes secret: released only as labelled diagnostics (output.diagnostics).
  if (config.output.diagnostics) {
    spdlog::warn(
        "output.diagnostics = true: the realised check-ins (diag_* columns, summary.json \"diagnostics\") "
        "are the randomness the reported epsilon assumes secret; they are not covered");
  }
  ObserverList observers;
  ProgressReporter progress(o.steps * o.windows);
  if (options.progress) observers.Add(&progress);
  if (options.observer != nullptr) observers.Add(options.observer);
  const auto start = std::chrono::steady_clock::now();
  ObservedSteps run;
  run.steps = RunCheckInSteps(
      o, server, eval_at,
      [&](int64_t step, const CheckInCounters& counters) {
        const auto& theta = server.model();
        metrics.Record(
            step,
            model.Evaluate(std::span<const float>(theta.data(), static_cast<size_t>(theta.size())), test),
            server.updates(), counters);
      },
      observers, options.cancel);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

// The run as a runtime reports it (the summary's wall_seconds is the whole call). Cut short by the
// embedding, every client's plan (a check-in per window) is unfinished: which of them had checked in to a
// step not taken is the check-ins' secret, so all are listed, with the windows completed (public: a
// function of the steps taken).
RuntimeReport CheckInRuntimeReport(const CheckInOptions& o, const ObservedSteps& run) {
  RuntimeReport report;
  report.wall_seconds = run.seconds;
  report.end_time = static_cast<double>(run.steps.steps_run);
  if (!run.steps.cancelled) return report;
  report.cancelled = true;
  report.truncated = true;
  for (int64_t j = 0; j < o.clients; ++j) {
    report.unfinished.push_back({.client = j,
                                 .reason = UnfinishedReason::kCancelled,
                                 .rounds = run.steps.windows_run,
                                 .planned_rounds = o.windows,
                                 .applied_rounds = run.steps.windows_run});
  }
  return report;
}

}  // namespace

TrainConfig ResolveCheckInConfig(const TrainConfig& input) {
  Prepared p = Prepare(input);
  ResolveCheckInNoise(p.config, p.o, p.config.dp.delta);
  return p.config;
}

TrainResult RunCheckInTraining(const TrainConfig& input, const TrainOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  Prepared prepared = Prepare(input);
  TrainConfig& config = prepared.config;
  const CheckInOptions& o = prepared.o;
  Data& data = prepared.data;
  std::unique_ptr<models::Model>& model = prepared.model;
  const StepSizeOptions& step_size = prepared.step_size;
  const double delta = config.dp.delta;
  // The clients' side of the protocol, and the runtime that computes it for the server's steps
  // (sim/runtime/step_runtime.h): none on the virtual runtime, where the server computes on its own thread.
  const CheckInClients clients{.model = *model,
                               .data = data.train,
                               .rows = data.client_rows,
                               .clip = config.dp.clip,
                               .client_clip = o.client_clip};
  const auto client_work = std::bind_front(&CheckInClients::Update, &clients);
  std::optional<StepRuntime> runtime;
#if ASYNCDP_WITH_MPI
  // MPI: ranks 1..P-1 compute their clients' updates for rank 0, which runs everything else (mpi_checkin.h).
  std::optional<CheckInMpi> mpi;
  if (o.runtime == RuntimeKind::kMpi) {
    mpi.emplace(config, data.client_rows, model->NumParams());
    if (mpi->endpoint.rank() != 0) {
      runtime.emplace(o.worker_threads, o.clients, *model, client_work);
      ServeCheckInClients(*runtime, mpi->endpoint, model->NumParams());
      TrainResult result;
      result.primary = false;
      return result;
    }
  }
#else
  if (o.runtime == RuntimeKind::kMpi) {
    throw InputError("protocol.runtime", std::string(kBuiltWithoutMpi));
  }
#endif

  const auto accounting_start = std::chrono::steady_clock::now();
  const CheckInNoise noise = ResolveCheckInNoise(config, o, delta);
  const double accounting_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - accounting_start).count();
  const double sigma = noise.sigma;
  // Rank 0 of an MPI run computes no client update itself: its runtime fetches them (one workspace, no pool).
  if (o.runtime == RuntimeKind::kThreads) runtime.emplace(o.worker_threads, o.clients, *model, client_work);
  if (o.runtime == RuntimeKind::kMpi) runtime.emplace(1, o.clients, *model, client_work);
  CheckInServer server(o, clients, runtime ? &*runtime : nullptr, model->InitialParams(config.seed),
                       step_size, sigma);
#if ASYNCDP_WITH_MPI
  if (mpi) {
    runtime->SetRemote(std::bind_front(&MpiCheckInClients::Fetch, &mpi->clients));
    spdlog::info(
        "mpi: {} ranks started: rank 0 runs the check-in server, ranks 1..{} host {} clients ({} placement)",
        mpi->ranks, mpi->ranks - 1, o.clients, mpi::ToString(config.protocol.mpi_placement));
  }
#endif

  CheckInMetrics metrics(o, noise.privacy, config.output.diagnostics);
  const ObservedSteps run = RunObservedSteps(config, o, server, *model, data.test, options, metrics);

#if ASYNCDP_WITH_MPI
  if (mpi) mpi->clients.Shutdown();
#endif
  TrainResult result;
  result.resolved_config = config;
  result.runtime = CheckInRuntimeReport(o, run);
  result.metrics = metrics.rows();
  result.metrics_csv = metrics.csv();
  result.clients_csv = CheckInClientsCsv(data.client_rows, run.steps.check_ins, config.output.diagnostics);
  result.final_model = server.model();

  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  Summary summary = SummariseCheckIns({.config = config,
                                       .options = o,
                                       .privacy = noise.privacy,
                                       .record_level = noise.record_level,
                                       .sigma = sigma,
                                       .sigma_calibrated = noise.calibrated,
                                       .counters = run.steps.counters,
                                       .steps_run = run.steps.steps_run,
                                       .model_updates = server.updates(),
                                       .records_held = data.used_rows,
                                       .parameters = model->NumParams(),
                                       .last = metrics.rows().back(),
                                       .final_model = result.final_model,
                                       .report = result.runtime,
                                       .accounting_seconds = accounting_seconds,
                                       .wall_seconds = wall});
  result.summary = std::move(summary.json);
  result.summary_core = std::move(summary.core);
  return result;
}

}  // namespace asyncdp::sim::checkin
