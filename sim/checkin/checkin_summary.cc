#include "sim/checkin/checkin_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/accounting/assumptions.h"
#include "sim/allocation_bounds_json.h"
#include "sim/checkin/checkin_plan.h"
#include "sim/config_io.h"
#include "sim/json_number.h"
#include "sim/summary.h"

namespace asyncdp::sim::checkin {
namespace {

// The accountant a check-in run's ε comes from: the key of its headline and record-level values.
std::string AllocationAccountant() {
  return std::string(accounting::ToString(accounting::AccountantKind::kRandomAllocation));
}

nlohmann::json PrivacyJson(const CheckInFacts& run) {
  const CheckInOptions& o = run.options;
  const CheckInPrivacy& privacy = run.privacy;
  nlohmann::json p = {{"neighbors", "add_remove"},
                      {"unit", o.user_level() ? "client" : "record"},
                      {"scope", o.user_level()
                                    ? "user-level DP: add or remove one client's whole data set, the population "
                                      "size n public (central DP for the population)"
                                    : "one client = one record: add or remove one client's record, the "
                                      "population size n public (central DP for the population)"},
                      {"delta", run.config.dp.delta},
                      {"sigma", run.sigma},
                      {"sigma_calibrated", run.sigma_calibrated}};
  if (!privacy.bounded) {
    p["bound"] = "no_bound";  // privacy.epsilon: null (SummaryCore::epsilon)
    p["reason"] = privacy.reason;
    return p;
  }
  p["bound"] = "upper_bound";  // privacy.epsilon: SummaryCore::epsilon
  p["theorem"] = privacy.theorem;
  p["assumptions"] = std::string(accounting::kRandomAllocationAssumptions);
  p["accounted_as"] = {{"steps", privacy.accounted.steps},
                       {"k", privacy.accounted.allocations},
                       {"windows", privacy.accounted.windows},
                       {"p0", privacy.accounted.participation},
                       {"sigma", privacy.accounted.sigma}};
  p["bounds"] = AllocationBoundsJson(*privacy.bounds);
  if (run.steps_run < o.steps * o.windows) {
    p["note"] =
        "the run was cut short: privacy.epsilon is the whole plan's, which bounds the steps taken "
        "(their outputs are a part of the whole run's, a post-processing of it)";
  }
  if (run.record_level) {
    const double record = std::min(run.record_level->epsilon, privacy.epsilon);
    // Keyed by accountant, as the headline and the asynchronous runs' epsilon_record_level are.
    p["epsilon_record_level"] = {
        {AllocationAccountant(), FiniteOrNull(record)},
        {"accounted_sigma", run.record_level->accounted.sigma},
        {"note", "record-level DP of the same run (add/remove one record of a client: it moves the client's "
                 "update by at most C under noise sigma * client_clip, accounted by the same reduction at "
                 "multiplier sigma * client_clip / clip, and capped by the user-level bound, which implies "
                 "it); privacy.epsilon, the headline, is user-level"}};
  }
  return p;
}

// The plan and, beside it, what the check-ins should realise in expectation (public: functions of the plan).
nlohmann::json PlanJson(const CheckInFacts& run) {
  const CheckInOptions& o = run.options;
  nlohmann::json c = {{"variant", std::string(ToString(o.variant))},
                      {"step_rule", std::string(ToString(o.step_rule))},
                      {"clients", o.clients},
                      {"steps_per_window", o.steps},
                      {"windows", o.windows},
                      {"p0", o.participation},
                      {"batch_steps", o.batch_steps},
                      {"records_held", run.records_held}};
  // Under the one-client rule the number of model updates is fixed by the plan (one per b steps); under
  // the average rule it counts the non-empty steps, a realised value (diagnostics only).
  if (o.step_rule == StepRule::kOneClient) c["model_updates"] = run.model_updates;
  if (o.variant != Variant::kSlidingWindow) {
    const double windows = static_cast<double>(o.windows);
    c["expected_empty_steps"] = windows * ExpectedEmptySteps(o.clients, o.steps, o.participation);
    c["empty_steps_sd"] = std::sqrt(windows * EmptyStepsVariance(o.clients, o.steps, o.participation));
    c["expected_participating_clients"] = windows * o.participation * static_cast<double>(o.clients);
  } else {
    c["window_length"] = o.window_length;
    c["warmup"] = o.warmup;
  }
  return c;
}

nlohmann::json DiagnosticsJson(const CheckInFacts& run) {
  const CheckInCounters& counters = run.counters;
  return {{"note", "NOT PRIVATE: the realised check-ins, which the reported epsilon assumes secret"},
          {"checkin",
           {{"participating_clients", counters.participating},
            {"discarded_check_ins", counters.discarded + counters.out_of_range},
            {"discarded_unselected", counters.discarded},
            {"discarded_out_of_range", counters.out_of_range},
            {"empty_steps", counters.empty_steps},
            {"dummy_updates", counters.dummy_updates},
            {"client_updates_used", counters.used},
            {"records_used", counters.records},
            {"model_updates", run.model_updates}}}};
}

}  // namespace

Summary SummariseCheckIns(const CheckInFacts& run) {
  const TrainConfig& config = run.config;
  const CheckInOptions& o = run.options;
  SummaryCore core;
  core.accuracy = AccuracyOf(run.final_model, run.last);
  core.privacy = PrivacyJson(run);
  core.epsilon = {{.accountant = AllocationAccountant(),
                   .epsilon = run.privacy.bounded ? FiniteOrNone(run.privacy.epsilon) : std::nullopt,
                   .lower_bound = false}};
  core.delta = config.dp.delta;
  core.sigma = run.sigma;
  core.sigma_calibrated = run.sigma_calibrated;
  core.clip = config.dp.clip;
  if (o.user_level()) core.client_clip = o.client_clip;
  core.accounting_seconds = run.accounting_seconds;
  // The outcome, in the fields asynchronous rounds use (docs/design.md, "End of a run"): every step of the
  // plan taken, or cut short by the embedding (cancelled). No client can be left waiting (stalled).
  core.outcome = OutcomeOf(run.report);
  core.wall_seconds = run.wall_seconds;
  core.virtual_seconds = static_cast<double>(run.steps_run);  // one server step per tick
  core.runtime = o.runtime;
  core.seed = config.seed;
  core.model_kind = config.model.kind;
  core.parameters = run.parameters;
  core.config_toml = ToToml(config);
  nlohmann::json s = CommonSummaryJson(core);
  s["checkin"] = PlanJson(run);
  if (config.output.diagnostics) s["diagnostics"] = DiagnosticsJson(run);
  s["steps_run"] = run.steps_run;
  // How the check-in driver used the runtime.
  switch (o.runtime) {
    case RuntimeKind::kVirtual:
      s["runtime_detail"] = "one server step per tick; the server computes the step's updates in turn";
      break;
    case RuntimeKind::kThreads:
      s["runtime_detail"] = fmt::format(
          "one server step per tick; each step's checked-in clients compute their updates on {} worker "
          "thread(s), summed in client order",
          o.worker_threads);
      break;
    case RuntimeKind::kMpi:
      s["runtime_detail"] = fmt::format(
          "one server step per tick on rank 0; the ranks hosting each step's clients compute their updates "
          "({} worker thread(s) per rank) and rank 0 sums them in client order",
          o.worker_threads);
      break;
  }
  return {.core = std::move(core), .json = std::move(s)};
}

CheckInMetrics::CheckInMetrics(const CheckInOptions& options, const CheckInPrivacy& privacy, bool diagnostics)
    : public_updates_(options.step_rule == StepRule::kOneClient),
      diagnostics_(diagnostics),
      epsilon_(privacy.bounded ? privacy.epsilon : std::numeric_limits<double>::quiet_NaN()) {
  csv_ = std::string("step,virtual_seconds,") + (public_updates_ ? "model_updates," : "") +
         "test_loss,test_accuracy,epsilon" +
         (diagnostics_ ? std::string(public_updates_ ? "" : ",diag_model_updates") +
                             ",diag_empty_steps,diag_dummy_updates,diag_discarded_check_ins"
                       : "") +
         "\n";
}

void CheckInMetrics::Record(int64_t step, const models::Evaluation& eval, int64_t model_updates,
                            const CheckInCounters& counters) {
  MetricsRow row;
  row.global_round = step;
  row.time = static_cast<double>(step);
  row.gradients = step;  // server steps so far: public (the records behind them are not)
  row.epsilon = epsilon_;
  row.train_loss = std::numeric_limits<double>::quiet_NaN();
  row.test_loss = eval.loss;
  row.test_accuracy = eval.accuracy;
  rows_.push_back(row);
  csv_ += fmt::format("{},{},", step, step);
  if (public_updates_) csv_ += fmt::format("{},", model_updates);
  csv_ += fmt::format("{:.6g},{:.6g},{}", eval.loss, eval.accuracy,
                      std::isnan(epsilon_) ? std::string() : fmt::format("{:.6g}", epsilon_));
  if (diagnostics_) {
    if (!public_updates_) csv_ += fmt::format(",{}", model_updates);
    csv_ += fmt::format(",{},{},{}", counters.empty_steps, counters.dummy_updates, counters.discarded);
  }
  csv_ += "\n";
}

std::string CheckInClientsCsv(const std::vector<std::vector<int64_t>>& client_rows,
                              const std::vector<int32_t>& check_ins, bool diagnostics) {
  std::string csv = std::string("client,records") + (diagnostics ? ",diag_windows_checked_in" : "") + "\n";
  for (size_t j = 0; j < client_rows.size(); ++j) {
    csv += fmt::format("{},{}", j, client_rows[j].size());
    csv += diagnostics ? fmt::format(",{}\n", check_ins[j]) : "\n";
  }
  return csv;
}

}  // namespace asyncdp::sim::checkin
