// The runtimes' enumerations, which are also configuration keys (protocol.runtime, clients.latency,
// protocol.mpi_placement): TrainConfig holds them as these enums, parsed once from their words
// (sim/config_enum.h), and the runtimes take them as they are (sim/runtime/runtime_options.h).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "sim/config_enum.h"

namespace asyncdp::sim {

enum class RuntimeKind : uint8_t {
  kVirtual,  // deterministic discrete-event clock (sim/runtime/virtual_runtime.h)
  kThreads,  // clients as tasks on a pool of worker threads, in wall time (sim/runtime/thread_runtime.h)
  kMpi,      // rank 0 the server, ranks 1..P-1 the clients (sim/runtime/mpi_runtime.h)
};

// Why protocol.runtime = "mpi" stops in a build without MPI (every path that would run it says the same).
inline constexpr std::string_view kBuiltWithoutMpi =
    "\"mpi\": this asyncdp was built without MPI (OpenMPI was not found at configure time; "
    "scripts/install-deps.sh installs it)";

enum class LatencyModel : uint8_t {
  kConstant,     // every message takes latency_mean
  kExponential,  // Exp(mean latency_mean), drawn from StreamKey{seed, client, slot, kLatency}
};

// How the MPI runtime places clients on worker ranks 1..P−1 (docs/mpi.md, "Placement").
enum class MpiPlacement : uint8_t {
  kBlock,       // contiguous blocks of ⌈n/W⌉ or ⌊n/W⌋ clients
  kRoundRobin,  // client c on rank 1 + c mod W
  kBalanced,    // by planned work (Σ s_i, public): largest first onto the least-loaded rank
};

template <>
struct EnumNames<RuntimeKind> {
  static constexpr std::array<std::string_view, 3> kNames{"virtual", "threads", "mpi"};
};
template <>
struct EnumNames<LatencyModel> {
  static constexpr std::array<std::string_view, 2> kNames{"constant", "exponential"};
};
template <>
struct EnumNames<MpiPlacement> {
  static constexpr std::array<std::string_view, 3> kNames{"block", "round_robin", "balanced"};
};

}  // namespace asyncdp::sim
