#include "sim/checkin/checkin_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <thread>

#include "core/error.h"

namespace asyncdp::sim::checkin {

CheckInOptions ResolveCheckInOptions(const TrainConfig& config) {
  const CheckInConfig& c = config.checkin;
  CheckInOptions o;
  o.variant = c.variant;
  switch (c.step_rule) {
    case StepRuleChoice::kAuto:
      o.step_rule = o.variant == Variant::kAveraged ? StepRule::kAverage : StepRule::kOneClient;
      break;
    case StepRuleChoice::kOneClient:
      o.step_rule = StepRule::kOneClient;
      break;
    case StepRuleChoice::kAverage:
      o.step_rule = StepRule::kAverage;
      break;
  }
  if (o.variant == Variant::kFixedWindow && o.step_rule != StepRule::kOneClient) {
    throw ConfigError("checkin.step_rule", "fixed_window is Algorithm 1 (one_client); use variant = averaged");
  }
  if (o.variant == Variant::kAveraged && o.step_rule != StepRule::kAverage) {
    throw ConfigError("checkin.step_rule", "averaged is Algorithm 2 (average); use variant = fixed_window");
  }
  o.clients = config.clients.count;
  if (o.clients < 1) throw ConfigError("clients.count", "must be >= 1");
  o.steps = c.steps;
  if (o.steps < 1) throw ConfigError("checkin.steps", "must be >= 1, got " + std::to_string(c.steps));
  o.windows = c.windows;
  if (o.windows < 1) throw ConfigError("checkin.windows", "must be >= 1, got " + std::to_string(c.windows));
  if (!(c.p0 > 0.0 && c.p0 <= 1.0)) throw ConfigError("checkin.p0", "must be in (0, 1], got " + std::to_string(c.p0));
  o.participation = c.p0;
  if (c.batch_steps < 1 || c.batch_steps > c.steps) {
    throw ConfigError("checkin.batch_steps", "must be in [1, checkin.steps], got " + std::to_string(c.batch_steps));
  }
  o.batch_steps = c.batch_steps;
  if (o.variant == Variant::kSlidingWindow) {
    if (c.window_length < 1) {
      throw ConfigError("checkin.window_length", "must be >= 1, got " + std::to_string(c.window_length));
    }
    if (c.windows != 1) throw ConfigError("checkin.windows", "sliding_window runs one pass (windows = 1)");
    o.window_length = c.window_length;
    o.warmup = c.warmup < 0 ? c.window_length - 1 : c.warmup;
    if (c.warmup < -1) throw ConfigError("checkin.warmup", "must be >= 0 or -1 (auto)");
    // Client j's window is steps j .. j + W - 1: after step n + W - 2 nobody is checked in, and every
    // update would be pure noise.
    const int64_t last_active = config.clients.count + c.window_length - 2;
    if (o.warmup > last_active) {
      throw ConfigError("checkin.warmup",
                        fmt::format("= {} is past every client's window (the last step with a client checked in "
                                    "is n + W - 2 = {}): every update would be pure noise; use -1 (W - 1) or a "
                                    "step <= {}",
                                    o.warmup, last_active, last_active));
    }
  }
  if (o.steps > (int64_t{1} << 32) / o.windows) {
    throw ConfigError("checkin.steps", "steps x windows must stay below 2^32 (stream keys)");
  }
  o.seed = config.seed;
  if (config.dp.unit == PrivacyUnit::kClient) {
    if (!(config.dp.client_clip > 0.0 && std::isfinite(config.dp.client_clip))) {
      throw ConfigError("dp.client_clip", "required (> 0) with dp.unit = \"client\": the norm a checked-in "
                                          "client's whole update is clipped to");
    }
    o.client_clip = config.dp.client_clip;
  }
  o.runtime = config.protocol.runtime;
  o.worker_threads = config.protocol.worker_threads > 0
                         ? static_cast<int>(config.protocol.worker_threads)
                         : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return o;
}

}  // namespace asyncdp::sim::checkin
