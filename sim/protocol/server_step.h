// How much of a client's step the server applies: v̂ ← v̂ − w·η̄_i·U, with w from this file.
//
// The paper's server (the server of Algorithm 3, Appendix A; docs/theory.md §3) applies every update at its full step (w = 1). With n clients
// each global round then moves v̂ by the sum of n client steps — n times the step one client would take —
// and with hundreds of clients that overshoots and diverges (1,000 a9a clients: accuracy 0.24). The
// standard remedies, both optional (docs/theory.md, "Server step scaling"):
//   per_client:  w = 1/n, each update weighted as in FedAvg's average over n clients (McMahan et al. 2017),
//                so a global round moves v̂ by about one client-sized step;
//   staleness:   w is further multiplied by s(τ) = (1 + τ)^(−a), the polynomial staleness function of
//                FedAsync (Xie et al. 2019, §5), τ = the global round at arrival minus the global round k of
//                the v̂_k the client computed on (UpdateMessage::computed_at), a = staleness_exponent.
// Privacy: w depends only on public protocol state (n, the global rounds), never on data, and is applied
// after the client released (i, U); it is post-processing of the released messages, so every ε the
// accountants report is unchanged.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <string_view>

#include "sim/config_enum.h"

namespace asyncdp::sim {

enum class ServerStep : uint8_t {
  kFull,       // w = 1: the paper's server (default)
  kPerClient,  // w = 1/n
};
template <>
struct EnumNames<ServerStep> {  // protocol.server_step
  static constexpr std::array<std::string_view, 2> kNames{"full", "per_client"};
};

struct ServerOptions {
  ServerStep step = ServerStep::kFull;
  // a of s(τ) = (1 + τ)^(−a); 0 = no staleness weighting (s ≡ 1). FedAsync's experiments use a = 0.5.
  double staleness_exponent = 0.0;
};

// From this many clients on, a run at full step warns at start (sim/experiment.cc): the paper's tables use
// n = 5, so n ≥ 100 adds up 20× more client steps per global round than any setting it validated.
inline constexpr int64_t kManyClientsFullStep = 100;

// w for an update of staleness τ ≥ 0 among n clients (n ≥ 1). Exactly 1 for the default options, so the
// default server applies η̄_i·U bit for bit as before.
inline double ServerStepWeight(const ServerOptions& options, int64_t num_clients, int64_t staleness) {
  double weight = options.step == ServerStep::kPerClient ? 1.0 / static_cast<double>(num_clients) : 1.0;
  if (options.staleness_exponent > 0.0) {
    weight *= std::pow(1.0 + static_cast<double>(staleness), -options.staleness_exponent);
  }
  return weight;
}

}  // namespace asyncdp::sim
