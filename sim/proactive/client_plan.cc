#include "sim/proactive/client_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace asyncdp::sim {

int64_t HeldOutRows(double fraction, int64_t rows) {
  return std::clamp<int64_t>(static_cast<int64_t>(std::ceil(fraction * static_cast<double>(rows))), 1,
                             std::max<int64_t>(rows - 1, 1));
}

int64_t CheckedHeldOutRows(double fraction, int64_t rows) {
  if (rows < 2)
    throw ConfigError("targets.holdout_fraction", "a client needs at least 2 rows to hold some out");
  const int64_t held = HeldOutRows(fraction, rows);
  if (held < kMinHoldoutRows) {
    throw ConfigError(
        "targets.holdout_fraction",
        fmt::format("holds out {} row(s) of a client's {} for its accuracy checks; at least {} are "
                    "needed (each check's accuracy moves in steps of 1/{}): raise "
                    "targets.holdout_fraction or give clients more rows",
                    held, rows, kMinHoldoutRows, held));
  }
  return held;
}

ProactiveClientPlan PlanProactiveClient(const TrainConfig& config, const ProactiveOptions& options,
                                        int64_t id, int64_t training_rows, int64_t holdout_rows) {
  ProactiveClientPlan p;
  p.target = ResolveClientTarget(config, id, training_rows);
  // The accuracy checks take their share of the budget first; the phases are planned for the rest.
  p.checks = PlanChecks(config.targets, static_cast<int64_t>(options.sigmas.size()), holdout_rows,
                        p.target.epsilon, p.target.delta);
  ClientTarget training = p.target;
  training.epsilon -= p.checks.epsilon;
  training.delta -= p.checks.delta;
  p.phases = PlanClientPhases(options, training, training_rows);
  return p;
}

}  // namespace asyncdp::sim
