#include "core/accounting/report.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/accounting/account.h"
#include "core/accounting/dp_event.h"
#include "core/error.h"

namespace asyncdp::accounting {

PrivacyReport ComputePrivacyReport(const Schedule& schedule, const ReportOptions& options) {
  if (!(options.delta > 0.0 && options.delta < 1.0)) {
    throw ConfigError("delta", "must be in (0, 1), got " + std::to_string(options.delta));
  }
  ValidateSchedule(schedule);
  PrivacyReport report;
  report.delta = options.delta;
  report.sampling = options.sampling;
  report.neighbours = NaturalNeighbours(options.sampling);
  report.rounds = TotalRounds(schedule);
  AccountQuery query;
  query.delta = options.delta;
  query.at_epsilon = options.at_epsilon;
  query.precision = {options.rdp_options, options.pld_options};
  std::vector<AccountantKind> kinds;
  for (AccountantKind kind : kMechanismAccountants) {
    const bool wanted = kind == AccountantKind::kRdp   ? options.rdp
                        : kind == AccountantKind::kPld ? options.pld
                                                       : options.gdp;
    if (wanted) kinds.push_back(kind);
  }
  for (Accounted& a : AccountAll(*ScheduleEvent(schedule, options.sampling, options.noise), kinds, query)) {
    const AccountantKind kind = a.kind;
    if (!a.available) {
      report.unavailable[kind] = a.reason;
      continue;
    }
    const EpsilonResult& r = a.result;
    const double delta_at_epsilon = options.at_epsilon ? a.delta_at_epsilon : 0.0;
    Assumptions assumptions = std::move(a.assumptions);
    switch (kind) {
      case AccountantKind::kRdp:
        report.rdp = RdpReport{r.epsilon, delta_at_epsilon, r.order, std::move(assumptions)};
        break;
      case AccountantKind::kPld: {
        PldReport pld;
        pld.epsilon = r.epsilon;
        pld.delta_at_epsilon = delta_at_epsilon;
        pld.epsilon_lower = std::isnan(r.epsilon_lower) ? 0.0 : r.epsilon_lower;
        pld.discretization = r.discretization;
        pld.lower_assumptions = assumptions;
        pld.lower_assumptions.bound = BoundKind::kLowerBound;
        pld.assumptions = std::move(assumptions);
        report.pld = std::move(pld);
        break;
      }
      default:
        report.gdp = GdpReport{r.epsilon, delta_at_epsilon, r.mu, std::move(assumptions)};
        break;
    }
  }
  return report;
}

}  // namespace asyncdp::accounting
