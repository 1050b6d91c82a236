#include "sim/checkin/checkin_summary.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/checkin/checkin_plan.h"
#include "sim/config_io.h"
#include "sim/json_number.h"

namespace asyncdp::sim::checkin {
namespace {

nlohmann::json BoundsJson(const accounting::RandomAllocationResult& r) {
  nlohmann::json bounds = nlohmann::json::array();
  for (const auto& b : r.bounds) {
    nlohmann::json e = {{"bound", std::string(accounting::ToString(b.bound))},
                        {"direction", std::string(accounting::ToString(b.direction))},
                        {"applicable", b.applicable},
                        {"epsilon", b.applicable && std::isfinite(b.value) ? nlohmann::json(b.value)
                                                                            : nlohmann::json(nullptr)}};
    if (!b.note.empty()) e["note"] = b.note;
    bounds.push_back(std::move(e));
  }
  return bounds;
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
    p["epsilon"] = nullptr;
    p["bound"] = "no_bound";
    p["reason"] = privacy.reason;
    return p;
  }
  p["epsilon"] = FiniteOrNull(privacy.epsilon);
  p["bound"] = "upper_bound";
  p["theorem"] = privacy.theorem;
  p["assumptions"] = std::string(accounting::kRandomAllocationAssumptions);
  p["accounted_as"] = {{"steps", privacy.accounted.steps},
                       {"k", privacy.accounted.allocations},
                       {"windows", privacy.accounted.windows},
                       {"p0", privacy.accounted.participation},
                       {"sigma", privacy.accounted.sigma}};
  p["bounds"] = BoundsJson(*privacy.bounds);
  if (run.record_level) {
    const double record = std::min(run.record_level->epsilon, privacy.epsilon);
    p["epsilon_record_level"] = {
        {"epsilon", FiniteOrNull(record)},
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

nlohmann::json CheckInSummaryJson(const CheckInFacts& run) {
  const TrainConfig& config = run.config;
  const CheckInOptions& o = run.options;
  nlohmann::json s;
  s["test_accuracy"] = run.last.test_accuracy;
  s["test_loss"] = run.last.test_loss;
  s["privacy"] = PrivacyJson(run);
  s["epsilon"] = s["privacy"]["epsilon"];
  s["delta"] = config.dp.delta;
  s["sigma"] = run.sigma;
  s["clip"] = config.dp.clip;
  if (o.user_level()) s["client_clip"] = o.client_clip;
  s["checkin"] = PlanJson(run);
  if (config.output.diagnostics) s["diagnostics"] = DiagnosticsJson(run);
  s["wall_seconds"] = run.wall_seconds;
  s["virtual_seconds"] = o.steps * o.windows;
  s["runtime"] = "virtual (check-in driver: one server step per tick)";
  s["seed"] = config.seed;
  s["model"] = {{"kind", config.model.kind}, {"parameters", run.parameters}};
  s["config"] = ToToml(config);
  s["asyncdp_version"] = ASYNCDP_VERSION;
  return s;
}

}  // namespace asyncdp::sim::checkin
