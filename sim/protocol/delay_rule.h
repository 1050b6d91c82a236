// The permissible-delay predicate Υ(k, i) of Algorithm 2 (Algorithms 2 and 4, Appendix A; docs/theory.md §3): a client at local
// round i may compute only while holding a global model of round k with Υ(k, i) true. New rules implement
// DelayRule; the protocol calls Allows once per round attempt (not per scalar).
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

#include "sim/config_enum.h"

namespace asyncdp::sim {

class DelayRule {
 public:
  virtual ~DelayRule() = default;
  // Υ(k, i): may local round i start with the newest global model being v̂_k?
  virtual bool Allows(int64_t global_round, int64_t local_round) const = 0;
  // The largest staleness i − k this rule admits (the invariant tests check), or int64 max if unbounded.
  virtual int64_t MaxStaleness() const = 0;
  virtual std::string Describe() const = 0;
};

// Υ_τ(k, i) = (k ≥ i − τ): "τ-asynchronous rounds"; τ = 0 is lock-step, τ = 1 the paper's experiments.
class BoundedDelayRule final : public DelayRule {
 public:
  explicit BoundedDelayRule(int64_t tau) : tau_(tau) {}
  bool Allows(int64_t global_round, int64_t local_round) const override {
    return global_round >= local_round - tau_;
  }
  int64_t MaxStaleness() const override { return tau_; }
  std::string Describe() const override { return "bounded: k >= i - " + std::to_string(tau_); }

 private:
  int64_t tau_;
};

// Υ ≡ true: clients never wait (Hogwild!-style unbounded staleness).
class UnboundedDelayRule final : public DelayRule {
 public:
  bool Allows(int64_t, int64_t) const override { return true; }
  int64_t MaxStaleness() const override { return std::numeric_limits<int64_t>::max(); }
  std::string Describe() const override { return "unbounded"; }
};

// protocol.delay_rule: Υ(k, i) = k ≥ i − τ (bounded, with tau) or Υ ≡ true (unbounded).
enum class DelayRuleKind : uint8_t { kBounded, kUnbounded };
template <>
struct EnumNames<DelayRuleKind> {
  static constexpr std::array<std::string_view, 2> kNames{"bounded", "unbounded"};
};

std::unique_ptr<DelayRule> MakeDelayRule(DelayRuleKind kind, int64_t tau);

}  // namespace asyncdp::sim
