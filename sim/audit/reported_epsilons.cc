#include "sim/audit/reported_epsilons.h"

#include <cmath>
#include <iterator>
#include <limits>
#include <string>

#include "core/accounting/account.h"
#include "core/accounting/dp_event.h"

namespace asyncdp::sim::audit {

using accounting::AccountantKind;
using accounting::BoundKind;

Accounted AccountClient(const Experiment& e, int64_t client, int64_t rounds,
                        SamplingModel accounted_sampling, bool whole_client) {
  const PrivacySetup privacy = e.privacy.user_level && !whole_client ? e.privacy.RecordLevel() : e.privacy;
  const accounting::Schedule schedule = privacy.ClientSchedule(e.plans[static_cast<size_t>(client)], rounds);
  std::vector<AccountantKind> kinds(std::begin(accounting::kMechanismAccountants),
                                    std::end(accounting::kMechanismAccountants));
  // Random allocation (dp.sampling = random_allocation) is covered by its own accountant only.
  if (accounted_sampling == SamplingModel::kRandomAllocation) {
    kinds.insert(kinds.begin(), AccountantKind::kRandomAllocation);
  }
  accounting::AccountQuery query;
  query.delta = e.privacy.delta;
  query.precision = privacy.precision();
  const accounting::DpEventPtr event = accounting::ScheduleEvent(schedule, accounted_sampling, privacy.options.noise,
                                                                 privacy.options.allocation);
  Accounted out;
  for (accounting::Accounted& a : accounting::AccountAll(*event, kinds, query)) {
    ReportedEpsilon r;
    r.accountant = a.kind;
    r.bound = a.bound;
    if (!a.available || schedule.empty()) {
      r.available = false;
      r.epsilon = std::numeric_limits<double>::quiet_NaN();
      r.assumptions = schedule.empty() && a.available ? "no rounds" : "unavailable: " + a.reason;
      out.reported.push_back(r);
      continue;
    }
    r.epsilon = a.result.epsilon;
    r.assumptions = a.assumptions.ToString();
    out.reported.push_back(r);
    if (a.bound == BoundKind::kUpperBound) out.upper.push_back(std::move(a.composed));
  }
  return out;
}

Headline ChooseHeadline(const std::vector<ReportedEpsilon>& reported, accounting::AccountantKind preferred) {
  for (const ReportedEpsilon& r : reported) {
    if (r.accountant == preferred && r.available && !std::isnan(r.epsilon)) return {preferred, r.epsilon};
  }
  for (const ReportedEpsilon& r : reported) {
    if (r.available && r.bound == accounting::BoundKind::kUpperBound) return {r.accountant, r.epsilon};
  }
  return {preferred, std::numeric_limits<double>::quiet_NaN()};
}

std::vector<accounting::AccountantKind> RefutedAccountants(const std::vector<ReportedEpsilon>& reported,
                                                           double eps_lower) {
  std::vector<accounting::AccountantKind> refuted;
  for (const ReportedEpsilon& r : reported) {
    if (r.available && r.bound == accounting::BoundKind::kUpperBound && eps_lower > r.epsilon) {
      refuted.push_back(r.accountant);
    }
  }
  return refuted;
}

std::vector<ReportedEpsilon> ReportedEpsilons(const Experiment& e, int64_t client, int64_t rounds) {
  return AccountClient(e, client, rounds, e.privacy.sampling(), /*whole_client=*/false).reported;
}

}  // namespace asyncdp::sim::audit
