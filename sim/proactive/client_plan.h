// One proactive client's plans before training (§6.4 steps 1-2; docs/theory.md §9): its target, the share of
// its budget its accuracy checks take (sim/proactive/private_checks.h) and its phases for the rest
// (sim/proactive/phase_plan.h). All of it follows from public values and the client's row count N_c, so
// every MPI rank can plan it from the labels alone, before any feature is read, and place the clients by
// the phases' work (protocol.mpi_placement = "balanced").
#pragma once

#include <cstdint>

#include "sim/config.h"
#include "sim/proactive/phase_plan.h"
#include "sim/proactive/private_checks.h"

namespace asyncdp::sim {

// Fewest held-out rows for an accuracy check: on a handful of rows its accuracy moves in steps of 1/held
// (one row makes it 0 or 1), so clients would pause and re-join on noise.
inline constexpr int64_t kMinHoldoutRows = 20;

// How many of a client's `rows` it holds out for its accuracy checks: ceil(fraction · rows), at least one
// row on each side (rows >= 2). They are the last rows of its shard.
int64_t HeldOutRows(double fraction, int64_t rows);
// The same, refused (ConfigError, targets.holdout_fraction) when fewer than kMinHoldoutRows or rows < 2.
int64_t CheckedHeldOutRows(double fraction, int64_t rows);

struct ProactiveClientPlan {
  ClientTarget target;
  CheckPlan checks;        // the accuracy checks, planned first
  ClientPhasePlan phases;  // planned for ε_target − checks.epsilon, δ_target − checks.delta
};

// Client `id`'s plans with `training_rows` rows to train on and `holdout_rows` held out.
ProactiveClientPlan PlanProactiveClient(const TrainConfig& config, const ProactiveOptions& options,
                                        int64_t id, int64_t training_rows, int64_t holdout_rows);

}  // namespace asyncdp::sim
