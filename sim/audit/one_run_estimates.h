// The one-run audit's estimates from a set of canary scores, as `asyncdp audit --mode one-run` and a training
// run's audit (audit.canaries) both compute them: the guess counts tried, Steinke, Nasr & Jagielski's
// eps_lower (the verdict's) and the f-DP estimates beside it, on the same choices (Bonferroni over all of
// them).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/audit/fdp_one_run.h"
#include "core/audit/one_run.h"

namespace asyncdp::sim::audit {

// The (k_plus, k_minus) choices a one-run audit of m canaries tries (Bonferroni over all of them):
// k = m/100, m/50, m/20, m/10, m/5, m/2 guesses, all IN or half IN half OUT.
std::vector<asyncdp::audit::GuessCounts> OneRunGuessChoices(int64_t m);

struct OneRunEstimates {
  asyncdp::audit::OneRunAuditResult one_run;  // eps_lower and the guesses behind it
  asyncdp::audit::FdpOneRunResult fdp;        // beside it, not in the verdict
};

// Both estimates over OneRunGuessChoices(scores.size()), at `delta` (the run's) and `confidence`.
OneRunEstimates EstimateOneRun(std::span<const double> scores, std::span<const uint8_t> included,
                               double delta, double confidence);

}  // namespace asyncdp::sim::audit
