// Typed options of the random check-in protocols (Balle, Kairouz, McMahan, Thakkar, Thakurta, "Privacy
// amplification via random check-ins", NeurIPS 2020), resolved once from the [checkin] section.
//
// n clients hold one record each (record level), or at the user level (dp.unit = "client") each client holds
// its share of the training rows (data.partition, data.rows_per_client) and a checked-in client sends its
// whole data set's clipped gradient sum, clipped as a whole to C_u = dp.client_clip and noised at C_u. In
// every window each client flips a coin with probability p0 and, if it
// comes up, checks in to one step chosen uniformly in its window (§2, Def. 3.1):
//   fixed_window   window = all m steps for everyone (Alg. 1, §3);
//   averaged       the same check-ins (Alg. 2, §4);
//   sliding_window client j wakes up at step j and its window is the W steps j .. j+W-1 (§5); the server
//                  updates at steps warmup .. warmup+m-1, and a check-in outside that range is discarded.
// Server rule per step: one_client (one uniform checked-in client, the others discarded; an empty step gets
// a dummy update, the randomizer applied to a zero gradient) or average (all checked-in clients' noisy
// updates averaged; empty steps skipped).
#pragma once

#include <cstdint>
#include <string_view>

#include "sim/checkin/checkin_kinds.h"
#include "sim/config.h"

namespace asyncdp::sim::checkin {

struct CheckInOptions {
  Variant variant = Variant::kFixedWindow;
  StepRule step_rule = StepRule::kOneClient;
  int64_t clients = 0;         // n, one record each
  int64_t steps = 0;           // m: steps per window (fixed/averaged) or update steps (sliding)
  int64_t windows = 1;         // E (fixed/averaged; sliding: 1)
  double participation = 1.0;  // p0
  int64_t batch_steps = 1;     // b: steps per model update
  int64_t window_length = 0;   // W (sliding)
  int64_t warmup = 0;          // first update step (sliding; 0 otherwise)
  uint64_t seed = 1;
  // User level (dp.unit = "client"): C_u > 0, the norm a client's update is clipped to as a whole (its
  // noise is N(0, sigma^2 C_u^2 I)); 0 = record level, one record per client, noise at C.
  double client_clip = 0.0;
  bool user_level() const { return client_clip > 0.0; }
  // protocol.runtime: virtual (the driver computes each step's client updates itself, one after another),
  // threads (the step's checked-in clients compute on `worker_threads` threads at once) or mpi (on the ranks
  // hosting them, `worker_threads` each; sim/checkin/mpi_checkin.h).
  RuntimeKind runtime = RuntimeKind::kVirtual;
  int worker_threads = 1;  // threads runtime: resolved (protocol.worker_threads, 0 = one per core)
};

// Reads config.checkin, clients.count and protocol.runtime / worker_threads; throws ConfigError naming the
// checkin.* key for a value out of range (m >= 1, E >= 1, p0 in (0, 1], 1 <= b <= m, sliding: W >= 1,
// 0 <= warmup, E = 1).
CheckInOptions ResolveCheckInOptions(const TrainConfig& config);

}  // namespace asyncdp::sim::checkin
