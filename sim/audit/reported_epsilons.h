// The epsilon every accountant reports for the audited client, the one number set against an audit's
// empirical lower bound (docs/audit.md, "Verdict"). Used by `asyncdp audit` (sim/audit/audit.h) and by
// the one-run audit of a training run (sim/audit/train_audit.h); a unit below both, so that neither the
// audit command nor a training run depends on the other for it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/accounting/accountant.h"
#include "core/accounting/assumptions.h"
#include "core/audit/one_run.h"
#include "core/sampling.h"
#include "sim/experiment.h"

namespace asyncdp::sim::audit {

// One accountant's epsilon for the audited client's rounds, at the run's delta.
struct ReportedEpsilon {
  accounting::AccountantKind accountant = accounting::AccountantKind::kPld;
  accounting::BoundKind bound = accounting::BoundKind::kUpperBound;
  double epsilon = 0.0;     // NaN when unavailable
  std::string assumptions;  // Assumptions::ToString(), or why the accountant does not apply
  bool available = true;
};

// Every accountant's epsilon for the first `rounds` rounds of `client`, and the upper-bound accountants
// that apply (composed over those rounds) for the privacy profile delta(eps) the multi-run audit tests.
struct Accounted {
  std::vector<ReportedEpsilon> reported;
  std::vector<std::shared_ptr<const accounting::Accountant>> upper;  // composed (Delta queries)
};
// Accounted with the sampler the accountants assume (differs from e.privacy.sampling() only by fault
// injection), for the unit the canary protects: in a user-level run (dp.unit = "client") a record canary is
// set against the record-level guarantee (PrivacySetup::RecordLevel), a whole-client canary against the
// user-level one.
Accounted AccountClient(const Experiment& e, int64_t client, int64_t rounds, SamplingModel accounted_sampling,
                        bool whole_client);

// The epsilon of every mechanism accountant (rdp, pld, gdp; random allocation first when the run samples
// so) for the first `rounds` rounds of `client` in experiment e, at e.privacy.delta.
std::vector<ReportedEpsilon> ReportedEpsilons(const Experiment& e, int64_t client, int64_t rounds);

// The epsilon on an audit's verdict line: the run's dp.accountant when it applies, else the first upper bound
// that does (e.g. PLD with secure noise); NaN epsilon when none applies. One rule for `asyncdp audit` and the
// audit of a training run.
struct Headline {
  accounting::AccountantKind accountant = accounting::AccountantKind::kPld;
  double epsilon = 0.0;
};
Headline ChooseHeadline(const std::vector<ReportedEpsilon>& reported, accounting::AccountantKind preferred);

// The upper-bound accountants that apply and whose epsilon is below eps_lower: the audit refutes them (the
// verdict is VIOLATION iff any). One rule for `asyncdp audit` and the audit of a training run.
std::vector<accounting::AccountantKind> RefutedAccountants(const std::vector<ReportedEpsilon>& reported,
                                                           double eps_lower);

}  // namespace asyncdp::sim::audit
