#include "sim/summary.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <string>

#include "core/noise.h"

namespace asyncdp::sim {

SummaryAccuracy AccuracyOf(const Eigen::VectorXf& model, const MetricsRow& last) {
  SummaryAccuracy a;
  a.diverged = !model.allFinite() || !std::isfinite(last.test_loss);
  if (a.diverged) {
    spdlog::error(
        "the model diverged (non-finite parameters or loss): no accuracy is reported; lower "
        "schedule.eta0 or dp.clip");
    return a;
  }
  a.test_accuracy = last.test_accuracy;
  a.test_loss = last.test_loss;
  return a;
}

SummaryOutcome OutcomeOf(const RuntimeReport& report) {
  return {.truncated = report.truncated,
          .stalled = report.stalled,
          .cancelled = report.cancelled,
          .unfinished = report.unfinished};
}

namespace {

template <class T>
nlohmann::json OrNull(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json CommonSummaryJson(const SummaryCore& core) {
  nlohmann::json s;
  s["diverged"] = core.accuracy.diverged;
  s["test_accuracy"] = OrNull(core.accuracy.test_accuracy);
  s["test_loss"] = OrNull(core.accuracy.test_loss);

  s["privacy"] = core.privacy;
  s["epsilon"] = s["privacy"]["epsilon"] = HeadlineJson(core.epsilon);
  s["delta"] = core.delta;
  s["sigma"] = core.sigma;
  s["sigma_calibrated"] = core.sigma_calibrated;
  s["clip"] = core.clip;
  if (core.client_clip) s["client_clip"] = *core.client_clip;
  s["accounting_seconds"] = core.accounting_seconds;

  s["truncated"] = core.outcome.truncated;
  s["stalled"] = core.outcome.stalled;
  if (core.outcome.cancelled) s["cancelled"] = true;
  nlohmann::json unfinished_ids = nlohmann::json::array(), unfinished = nlohmann::json::array();
  for (const UnfinishedClient& u : core.outcome.unfinished) {
    unfinished_ids.push_back(u.client);
    unfinished.push_back({{"client", u.client},
                          {"reason", std::string(ToString(u.reason))},
                          {"rounds", u.rounds},
                          {"applied_rounds", u.applied_rounds},
                          {"planned_rounds", u.planned_rounds}});
  }
  s["unfinished_clients"] = unfinished_ids;
  s["unfinished"] = unfinished;

  s["wall_seconds"] = core.wall_seconds;
  s["virtual_seconds"] = OrNull(core.virtual_seconds);
  s["runtime"] = std::string(ToString(core.runtime));
  s["seed"] = core.seed;
  s["model"] = {{"kind", core.model_kind}, {"parameters", core.parameters}};
  s["config"] = core.config_toml;
  s["asyncdp_version"] = ASYNCDP_VERSION;
  // Which Gaussian generator drew the noise (core/noise.h): results from another version differ in bits.
  s["noise_generator_version"] = asyncdp::kNoiseGeneratorVersion;
  return s;
}

}  // namespace asyncdp::sim
