#include "core/accounting/report.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/accounting/make_accountant.h"
#include "core/error.h"

namespace asyncdp::accounting {

PrivacyReport ComputePrivacyReport(const Schedule& schedule, const ReportOptions& options) {
  if (!(options.delta > 0.0 && options.delta < 1.0)) {
    throw ConfigError("delta", "must be in (0, 1), got " + std::to_string(options.delta));
  }
  ValidateSchedule(schedule);
  AccountantOptions accountant_options;
  accountant_options.sampling = options.sampling;
  accountant_options.noise = options.noise;
  accountant_options.rdp = options.rdp_options;
  accountant_options.pld = options.pld_options;
  PrivacyReport report;
  report.delta = options.delta;
  report.sampling = options.sampling;
  report.neighbours = NaturalNeighbours(options.sampling);
  report.rounds = TotalRounds(schedule);
  for (AccountantKind kind : kMechanismAccountants) {
    const bool wanted = kind == AccountantKind::kRdp   ? options.rdp
                        : kind == AccountantKind::kPld ? options.pld
                                                       : options.gdp;
    if (!wanted) continue;
    std::unique_ptr<Accountant> accountant = MakeAccountant(kind, accountant_options);
    if (const std::string limitation = accountant->Limitation(); !limitation.empty()) {
      report.unavailable[kind] = limitation;
      continue;
    }
    accountant->AddSchedule(schedule);
    EpsilonResult r;
    double delta_at_epsilon = 0.0;
    try {
      r = accountant->Epsilon(options.delta);
      if (options.at_epsilon) delta_at_epsilon = std::clamp(accountant->Delta(*options.at_epsilon), 0.0, 1.0);
    } catch (const ConfigError& e) {
      // The accountant's own limits (e.g. PLD beyond 2^30 rounds); delta and the schedule were checked.
      report.unavailable[kind] = e.what();
      continue;
    }
    Assumptions assumptions = accountant->Describe(options.delta);
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
