// One-shot privacy report for a (possibly heterogeneous) schedule: RDP, PLD and GDP side by side, each
// with the assumptions it rests on, computed through the accountant facade (accountant.h). This is what
// `asyncdp account` prints and what a finished simulation reports per client (population.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/accounting/accountant.h"
#include "core/accounting/assumptions.h"
#include "core/accounting/pld/pld.h"
#include "core/accounting/rdp/rdp.h"
#include "core/accounting/schedule.h"
#include "core/privacy_assumptions.h"

namespace asyncdp::accounting {

struct ReportOptions {
  double delta = 1e-5;                               // target delta in (0, 1)
  SamplingModel sampling = SamplingModel::kPoisson;  // how the schedule's batches were drawn
  NoiseModel noise = NoiseModel::kGaussian;          // secure noise: only RDP applies
  bool rdp = true;                                   // cheap (~0.1 ms): an upper bound
  bool pld = true;  // tightest: upper bound and lower bound (tens of ms for 10^5 rounds)
  bool gdp = true;  // CLT approximation, for comparison with f-DP numbers in the literature
  RdpOptions rdp_options;
  PldOptions pld_options;
  // Also each accountant's smallest delta at this epsilon >= 0 (a point of the curve delta(eps)).
  std::optional<double> at_epsilon;
};

struct RdpReport {
  double epsilon = 0.0;
  double delta_at_epsilon = 0.0;  // with ReportOptions::at_epsilon
  double order = 0.0;  // the Renyi order attaining the minimum
  Assumptions assumptions;
};

struct PldReport {
  double epsilon = 0.0;        // upper bound (a guarantee)
  double delta_at_epsilon = 0.0;  // with ReportOptions::at_epsilon: upper bound on delta(at_epsilon)
  double epsilon_lower = 0.0;  // lower bound on the true epsilon of the same mechanism
  double discretization = 0.0;
  Assumptions assumptions;        // kUpperBound
  Assumptions lower_assumptions;  // kLowerBound
};

struct GdpReport {
  double epsilon = 0.0;
  double delta_at_epsilon = 0.0;  // with ReportOptions::at_epsilon
  double mu = 0.0;
  Assumptions assumptions;  // kApproximation
};

struct PrivacyReport {
  double delta = 0.0;
  SamplingModel sampling = SamplingModel::kPoisson;  // as given (shuffle is reported as shuffle)
  NeighbourRelation neighbours = NeighbourRelation::kAddRemove;
  int64_t rounds = 0;
  std::optional<RdpReport> rdp;
  std::optional<PldReport> pld;
  std::optional<GdpReport> gdp;
  // Requested accountants that cannot account this mechanism, with the reason (e.g. PLD for secure noise).
  std::map<AccountantKind, std::string> unavailable;
};

// Computes the requested accountants. Throws ConfigError for an invalid schedule or delta. Shuffled
// batches are charged one full-batch Gaussian per started epoch (ReduceShuffledSchedule, accountant.h).
PrivacyReport ComputePrivacyReport(const Schedule& schedule, const ReportOptions& options);

}  // namespace asyncdp::accounting
