#include "sim/protocol/delay_rule.h"

namespace asyncdp::sim {

std::unique_ptr<DelayRule> MakeDelayRule(DelayRuleKind kind, int64_t tau) {
  if (kind == DelayRuleKind::kUnbounded) return std::make_unique<UnboundedDelayRule>();
  return std::make_unique<BoundedDelayRule>(tau);
}

}  // namespace asyncdp::sim
