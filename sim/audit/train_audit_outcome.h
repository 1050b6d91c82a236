// What the one-run audit of a training run found (audit.canaries = m; docs/audit.md, "Auditing a training
// run"), typed: the run layer keeps it in TrainResult, `asyncdp audit` builds its report from it and the
// summary's "audit" block is written from it (sim/audit/train_audit.h), so no caller reads a verdict back
// out of JSON.
#pragma once

#include <cstdint>
#include <vector>

#include "core/accounting/assumptions.h"
#include "core/audit/fdp_one_run.h"
#include "core/audit/one_run.h"
#include "sim/audit/reported_epsilons.h"

namespace asyncdp::sim::audit {

struct TrainAuditOutcome {
  asyncdp::audit::OneRunAuditResult one_run;           // eps_lower and the guesses behind it
  asyncdp::audit::FdpOneRunResult fdp;                 // the f-DP estimates beside it (not in the verdict)
  double confidence = 0.95;                            // of eps_lower
  int64_t rounds = 0;                                  // the audited client's rounds, as accounted
  std::vector<ReportedEpsilon> reported;               // every accountant's epsilon for those rounds
  std::vector<accounting::AccountantKind> refuted;     // upper bounds below eps_lower (VIOLATION)
  Headline headline;                                   // the epsilon on the verdict line
  std::vector<double> canary_scores;                   // higher = looks planted
  bool violation() const { return !refuted.empty(); }
};

}  // namespace asyncdp::sim::audit
