#include "sim/audit/audit.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <iterator>
#include <vector>

#include "core/accounting/accountant.h"
#include "core/check.h"
#include "core/error.h"
#include "core/sampling.h"
#include "sim/audit/canary_runs.h"
#include "sim/audit/one_run_estimates.h"
#include "sim/audit/reported_epsilons.h"
#include "sim/audit/train_audit_outcome.h"
#include "sim/audit/train_canaries.h"
#include "sim/config_usage.h"
#include "sim/train.h"

namespace asyncdp::sim::audit {

void RequireAuditableRun(const TrainConfig& config) {
  RequireAsyncRounds(config, "audit",
                     "random check-ins are audited by their accountant tests, not by this command");
}

void RequireAuditedRounds(const Experiment& experiment, int64_t client) {
  // A budget that allows the audited client no round leaves nothing to audit: every score would be the
  // same, and the threshold sweep stopped on an internal check (exit 134) before this.
  const std::vector<int64_t>& rounds = experiment.privacy.budget_rounds;
  const auto c = static_cast<size_t>(client);
  if (c < rounds.size() && rounds[c] == 0) {
    throw ConfigError("dp.epsilon",
                      fmt::format("the budget epsilon = {} allows the audited client {} no round: nothing to "
                                  "audit; raise dp.epsilon, or audit without a budget halt",
                                  experiment.privacy.epsilon_budget, client));
  }
}
namespace {

using accounting::AccountantKind;
using accounting::BoundKind;

// Run r of a side: its own seed for everything random in the run (noise, batches, initial model,
// latencies). In and out runs never share a seed; the audited configuration's seed picks the family.
uint64_t RunSeed(uint64_t config_seed, bool include, int64_t run) {
  return config_seed * 1'000'003ULL + 2ULL * static_cast<uint64_t>(run) + (include ? 1ULL : 0ULL) + 1ULL;
}

// delta(eps) of the tightest upper-bound accountant on a grid of eps (0 to twice the largest finite
// reported eps, 101 points) plus each reported eps: the profile the multi-run audit tests.
std::vector<asyncdp::audit::ProfilePoint> ReportedProfile(const Accounted& accounted) {
  double top = 0.0;
  std::vector<double> grid;
  for (const auto& r : accounted.reported) {
    if (r.available && r.bound == BoundKind::kUpperBound && std::isfinite(r.epsilon)) {
      top = std::max(top, r.epsilon);
      grid.push_back(r.epsilon);
    }
  }
  top = std::max(2.0 * top, 1.0);
  for (int i = 0; i <= 100; ++i) grid.push_back(top * i / 100.0);
  std::sort(grid.begin(), grid.end());
  std::vector<asyncdp::audit::ProfilePoint> profile;
  for (const double eps : grid) {
    double delta = 1.0;
    for (const auto& a : accounted.upper) delta = std::min(delta, a->Delta(eps));
    profile.push_back({eps, std::clamp(delta, 0.0, 1.0)});
  }
  return profile;
}

// Runs f(i) for i in [0, count) on `jobs` threads (0 = all cores), logging progress on stderr.
template <typename F>
void ParallelRuns(int64_t count, int64_t jobs, const F& f) {
  const int threads = jobs > 0 ? static_cast<int>(jobs) : tbb::this_task_arena::max_concurrency();
  tbb::task_arena arena(std::max(1, threads));
  std::atomic<int64_t> done{0};
  const int64_t step = std::max<int64_t>(1, count / 10);
  arena.execute([&] {
    tbb::parallel_for(int64_t{0}, count, [&](int64_t i) {
      f(i);
      const int64_t finished = done.fetch_add(1) + 1;
      if (finished % step == 0 || finished == count)
        spdlog::info("audit: {} / {} trainings", finished, count);
    });
  });
}

}  // namespace

namespace {

// One-run audit with mislabelled canaries (input-space: m distinct records of the client relabelled): one
// training with audit.canaries = m (sim/audit/train_audit.h), its audit block turned into a report. The
// canaries are added to (Poisson) or replace (fixed-size, shuffle) the client's records, and the
// accountants account that data set.
AuditReport RunOneRunMislabelledAudit(const TrainConfig& config, const AuditOptions& options,
                                      std::chrono::steady_clock::time_point start) {
  options.Validate();
  TrainConfig run = config;
  run.audit.canaries = options.canaries;
  run.audit.client = options.client;
  run.audit.canary = TrainCanary::kMislabelled;
  run.audit.confidence = options.confidence;
  run.audit.test_noise_scale = options.noise_scale;
  run.protocol.runtime = RuntimeKind::kVirtual;
  const TrainResult trained = RunTraining(run, TrainOptions{.progress = false});
  const Experiment& e = *trained.experiment;
  RequireAuditedRounds(e, options.client);
  const TrainCanaries& t = *e.train_canaries;
  ASYNCDP_CHECK(trained.audit.has_value());
  const TrainAuditOutcome& outcome = *trained.audit;
  AuditReport report;
  report.options = options;
  report.resolved_config = e.config;
  report.sampling = std::string(ToString(e.privacy.sampling()));
  report.accounted_sampling = report.sampling;
  report.neighbours = std::string(ToString(NaturalNeighbours(e.privacy.sampling())));
  report.statistic = std::string(ToString(AuditStatistic::kNegativeLoss));
  report.delta = e.privacy.delta;
  report.sigma = e.privacy.sigma;
  report.client_records = e.data.shards[static_cast<size_t>(options.client)].rows();
  report.rounds = outcome.rounds;
  report.reported = outcome.reported;
  report.headline_accountant = outcome.headline.accountant;
  report.headline_epsilon = outcome.headline.epsilon;
  report.canary_scores = outcome.canary_scores;
  report.included = t.included;
  report.one_run = outcome.one_run;
  report.fdp = outcome.fdp;
  report.eps_lower = report.one_run.epsilon;
  for (const accounting::AccountantKind a : outcome.refuted) {
    report.refuted_accountants.push_back(std::string(accounting::ToString(a)));
  }
  report.violation = outcome.violation();
  report.verdict_detail =
      report.violation ? fmt::format("the one-run lower bound exceeds the epsilon reported by {}",
                                     fmt::join(report.refuted_accountants, ", "))
                       : fmt::format("{} of {} guesses correct; the one-run lower bound is below every reported "
                                     "upper bound ({} mislabelled canaries trained on as part of the data set)",
                                     report.one_run.correct, report.one_run.guesses, t.planted);
  report.trainings = 1;
  report.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace

namespace {

// Multi-run: options.runs trainings a side, in and out alternating; returns the rounds accounted (the most
// any training ran).
int64_t RunMultiRunTrainings(const CanaryExperiment& canary, const AuditOptions& options,
                             AuditReport& report) {
  const Experiment& e = canary.experiment();
  const int64_t n = options.runs;
  report.in_scores.assign(static_cast<size_t>(n), 0.0);
  report.out_scores.assign(static_cast<size_t>(n), 0.0);
  std::vector<int64_t> rounds_done(static_cast<size_t>(2 * n), 0);
  for (int64_t r = 0; r < n; ++r) {
    report.in_seeds.push_back(RunSeed(e.config.seed, true, r));
    report.out_seeds.push_back(RunSeed(e.config.seed, false, r));
  }
  ParallelRuns(2 * n, options.jobs, [&](int64_t i) {
    const bool include = i % 2 == 0;
    const auto r = static_cast<size_t>(i / 2);
    const RunTrace trace = canary.RunMultiRun(include ? report.in_seeds[r] : report.out_seeds[r], include);
    (include ? report.in_scores : report.out_scores)[r] = canary.Score(trace, 0);
    rounds_done[static_cast<size_t>(i)] = trace.rounds_done;
  });
  report.trainings = 2 * n;
  const auto [fewest, most] = std::minmax_element(rounds_done.begin(), rounds_done.end());
  if (*fewest != *most) {
    spdlog::warn("audit: the audited client ran between {} and {} rounds; accounting for {}", *fewest, *most,
                 *most);
  }
  return *most;
}

// One-run: one training with every canary's coin drawn from the seed; returns the rounds it ran.
int64_t RunOneRunTraining(const CanaryExperiment& canary, const AuditOptions& options, AuditReport& report) {
  const Experiment& e = canary.experiment();
  const int64_t m = options.canaries;
  report.included =
      asyncdp::audit::DrawCanaryInclusion(e.config.seed, static_cast<uint32_t>(options.client), m);
  const RunTrace trace = canary.RunOneRun(e.config.seed, report.included);
  for (int64_t j = 0; j < m; ++j) report.canary_scores.push_back(canary.Score(trace, j));
  report.trainings = 1;
  return trace.rounds_done;
}

// The multi-run verdict: is a point of the reported profile delta(eps) refuted by the runs?
void DecideMultiRun(const Experiment& e, const Accounted& accounted, const AuditOptions& options,
                    AuditReport& report) {
  report.profile = ReportedProfile(accounted);
  asyncdp::audit::MultiRunAuditOptions multi;
  multi.delta = e.privacy.delta;
  multi.confidence = options.confidence;
  multi.reported_profile = report.profile;
  report.multi = asyncdp::audit::MultiRunAudit(report.in_scores, report.out_scores, multi);
  report.eps_lower = report.multi.definition.epsilon;
  const auto& p = report.multi.profile;
  report.violation = p.refuted;
  if (p.refuted) {
    for (const auto& a : accounted.upper) {
      if (a->Delta(p.epsilon) < p.delta_lower) {
        report.refuted_accountants.push_back(std::string(accounting::ToString(a->kind())));
      }
    }
    report.verdict_detail = fmt::format(
        "the runs show delta >= {:.4g} at eps = {:.4g} ({:.0f}% confidence), but the reported profile "
        "claims "
        "delta = {:.4g} there (refuted: {})",
        p.delta_lower, p.epsilon, 100 * options.confidence, p.delta_reported,
        fmt::join(report.refuted_accountants, ", "));
  } else {
    report.verdict_detail = fmt::format(
        "no point of the reported delta(eps) profile ({} points, eps in [0, {:.4g}]) is refuted by the "
        "runs",
        report.profile.size(), report.profile.back().epsilon);
  }
}

// The one-run verdict: does eps_lower exceed an upper-bound accountant's epsilon?
void DecideOneRun(const Experiment& e, const AuditOptions& options, AuditReport& report) {
  const OneRunEstimates estimates =
      EstimateOneRun(report.canary_scores, report.included, e.privacy.delta, options.confidence);
  report.one_run = estimates.one_run;
  report.fdp = estimates.fdp;
  report.eps_lower = report.one_run.epsilon;
  for (const accounting::AccountantKind a : RefutedAccountants(report.reported, report.eps_lower)) {
    report.refuted_accountants.push_back(std::string(accounting::ToString(a)));
  }
  report.violation = !report.refuted_accountants.empty();
  report.verdict_detail =
      report.violation
          ? fmt::format("the one-run lower bound exceeds the epsilon reported by {}",
                        fmt::join(report.refuted_accountants, ", "))
          : fmt::format(
                "{} of {} guesses correct; the one-run lower bound is below every reported upper bound",
                report.one_run.correct, report.one_run.guesses);
}

}  // namespace

AuditReport RunAudit(const TrainConfig& config, const AuditOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  RequireAuditableRun(config);
  if (options.mode == AuditMode::kOneRun && options.canary == CanaryKind::kMislabelled) {
    return RunOneRunMislabelledAudit(config, options, start);
  }
  const CanaryExperiment canary(config, options);
  const Experiment& e = canary.experiment();
  RequireAuditedRounds(e, options.client);
  AuditReport report;
  report.options = options;
  report.resolved_config = e.config;
  report.sampling = std::string(ToString(e.privacy.sampling()));
  const SamplingModel accounted_sampling = options.accounted_sampling.value_or(e.privacy.sampling());
  report.accounted_sampling = std::string(ToString(accounted_sampling));
  report.neighbours = options.canary == CanaryKind::kWholeClient
                          ? "add/remove one client's data set (user level)"
                          : std::string(ToString(NaturalNeighbours(e.privacy.sampling())));
  report.statistic = std::string(ToString(canary.score_rule().statistic));
  report.delta = e.privacy.delta;
  report.sigma = e.privacy.sigma;
  report.client_records = canary.client_records();
  spdlog::info(
      "audit: client {} of {} (N_c = {}), {} sampling, sigma = {:.6g}, delta = {:.3g}, {} audit, {} view, "
      "{} canary, {} statistic",
      options.client, e.config.clients.count, report.client_records, report.sampling, e.privacy.sigma,
      e.privacy.delta, ToString(options.mode), ToString(options.view), ToString(options.canary),
      report.statistic);

  if (e.protocol.runtime.kind != RuntimeKind::kVirtual) {
    // A warning, not info: the configuration's runtime is not used, and --quiet must not hide that.
    spdlog::warn(
        "audit: protocol.runtime = \"{}\" of the configuration is not used: every training runs on the "
        "virtual runtime (the same protocol; the threads and MPI runtimes time the runs by the wall clock, "
        "which the audited guarantee does not cover)",
        ToString(e.protocol.runtime.kind));
  }
  report.rounds = options.mode == AuditMode::kMultiRun ? RunMultiRunTrainings(canary, options, report)
                                                       : RunOneRunTraining(canary, options, report);
  const Accounted accounted = AccountClient(e, options.client, report.rounds, accounted_sampling,
                                            options.canary == CanaryKind::kWholeClient);
  report.reported = accounted.reported;
  const Headline headline = ChooseHeadline(report.reported, e.privacy.accountant);
  report.headline_accountant = headline.accountant;
  report.headline_epsilon = headline.epsilon;

  if (options.mode == AuditMode::kMultiRun) {
    DecideMultiRun(e, accounted, options, report);
  } else {
    DecideOneRun(e, options, report);
  }
  report.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

std::string VerdictLine(const AuditReport& report) {
  const std::string confidence = fmt::format("{:g}%", 100.0 * report.options.confidence);
  const std::string relation = report.eps_lower <= report.headline_epsilon ? "<=" : ">";
  std::string line = fmt::format("eps_lower = {:.4g} ({}) {} eps_reported({}) = {:.4g} : ", report.eps_lower,
                                 confidence, relation, accounting::ToString(report.headline_accountant),
                                 report.headline_epsilon);
  line += report.violation ? "VIOLATION: " + report.verdict_detail : "consistent";
  return line;
}

std::optional<std::string> AuditUnreadReason(const std::string& key, const TrainConfig& config) {
  if (key.starts_with("audit.")) {
    return "it configures the one-run audit of `asyncdp train`: use this command's flags (--canaries, "
           "--client, --canary, --confidence, --test-noise-scale; asyncdp audit --help)";
  }
  if (key == "protocol.runtime" || key == "protocol.worker_threads" || key.starts_with("protocol.mpi_")) {
    return "every training of the audit runs on the virtual runtime with one worker thread (the same "
           "protocol; "
           "the audited guarantee does not cover timing), --jobs of them at a time";
  }
  if (key.starts_with("eval.") || key == "data.eval_rows" || key.starts_with("output.")) {
    return "the audit scores the canary on each trained model and writes audit.json: it evaluates no test "
           "metrics and writes none of a run's outputs";
  }
  return UnusedKeyReason(key, config);
}

}  // namespace asyncdp::sim::audit
