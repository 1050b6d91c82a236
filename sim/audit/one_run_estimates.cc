#include "sim/audit/one_run_estimates.h"

namespace asyncdp::sim::audit {

std::vector<asyncdp::audit::GuessCounts> OneRunGuessChoices(int64_t m) {
  std::vector<asyncdp::audit::GuessCounts> choices;
  for (const int64_t divisor : {100, 50, 20, 10, 5, 2}) {
    const int64_t k = m / divisor;
    if (k < 2) continue;
    choices.push_back({k, 0});
    choices.push_back({k / 2, k / 2});
  }
  if (choices.empty()) choices.push_back({1, 0});
  return choices;
}

OneRunEstimates EstimateOneRun(std::span<const double> scores, std::span<const uint8_t> included,
                               double delta, double confidence) {
  asyncdp::audit::OneRunAuditOptions options;
  options.delta = delta;
  options.confidence = confidence;
  const auto choices = OneRunGuessChoices(static_cast<int64_t>(scores.size()));
  return {asyncdp::audit::OneRunAuditBestOf(scores, included, choices, options),
          asyncdp::audit::FdpOneRunAuditBestOf(scores, included, choices, options)};
}

}  // namespace asyncdp::sim::audit
