// Per-client privacy ledger: the simulator records every noisy round a client sends, asks for "epsilon so
// far" and asks before each round whether it would push the client over its budget (spec
// dp-background.md §8: budget depletion stops the client; proactive-dp.md §6.4 optional accountant).
//
// Cost: RecordRound and WouldExceed are O(number of orders) with the RDP accountant (the RDP curve of each
// distinct (q, sigma) is computed once and cached), i.e. a few microseconds. With the PLD accountant the
// halt decision first tries the RDP bound (an upper bound too) and composes the PLD only when RDP cannot
// certify that the round fits, so it is cheap until the budget is nearly spent.
//
// Thread safety: not thread-safe, including const methods (they fill caches). One ledger per client,
// used by the thread (or observer) that owns that client.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "core/accounting/assumptions.h"
#include "core/accounting/pld.h"
#include "core/accounting/rdp.h"
#include "core/accounting/report.h"
#include "core/accounting/schedule.h"
#include "core/privacy_assumptions.h"

namespace asyncdp::accounting {

struct LedgerOptions {
  double delta = 1e-5;  // target delta of the budget, in (0, 1); the paper uses 1/N
  // Halt threshold; +inf = track only, never halt. Uniform allocation over a planned T is done up front by
  // choosing sigma (CalibrateSigma in calibration.h); this budget stops the client at depletion.
  double epsilon_budget = std::numeric_limits<double>::infinity();
  // Accountant deciding the halt and EpsilonSoFar: kRdp (default, cheap) or kPld (tighter). kGdp is
  // refused: an approximation cannot enforce a budget.
  AccountantKind accountant = AccountantKind::kRdp;
  SamplingModel sampling = SamplingModel::kPoisson;
  // Must be NaturalNeighbours(sampling) (add/remove for Poisson, replace-one otherwise): those are the
  // relations our accountants are valid for.
  NeighbourRelation neighbours = NeighbourRelation::kAddRemove;
  RdpOptions rdp;
  PldOptions pld;

  // Throws ConfigError("ledger.<field>", ...) for invalid values.
  void Validate() const;
};

class PrivacyLedger {
 public:
  // Validates options (ConfigError).
  explicit PrivacyLedger(LedgerOptions options);

  // Records one round with sampling rate q = expected batch / N in (0, 1] and noise multiplier sigma > 0.
  // Throws ConfigError for invalid q / sigma. Recording is never refused: call WouldExceed first to halt.
  void RecordRound(double q, double sigma);
  void RecordRounds(double q, double sigma, int64_t count);

  // True iff recording one more (q, sigma) round would make the halt accountant's epsilon exceed the budget
  // (always false with an infinite budget).
  bool WouldExceed(double q, double sigma) const;

  // Epsilon of the rounds so far at options().delta by options().accountant (0 before any round).
  double EpsilonSoFar() const;

  int64_t rounds() const { return rounds_; }
  const Schedule& schedule() const { return schedule_; }
  const LedgerOptions& options() const { return options_; }
  Assumptions assumptions() const;  // of EpsilonSoFar

  // Full report (all three accountants by default) of the rounds so far at options().delta.
  PrivacyReport Report(bool rdp = true, bool pld = true, bool gdp = true) const;

 private:
  const std::vector<double>& RdpCurve(double q, double sigma) const;  // cached per distinct (q, sigma)
  // Epsilon of the recorded rounds plus `extra_count` rounds of (q, sigma).
  double RdpEpsilonWith(double q, double sigma, int64_t extra_count) const;
  double PldEpsilonWith(double q, double sigma, int64_t extra_count) const;
  Schedule ScheduleWith(double q, double sigma, int64_t extra_count) const;

  LedgerOptions options_;
  Schedule schedule_;  // compact: one group per distinct (q, sigma), in first-seen order
  int64_t rounds_ = 0;
  // Adds the RDP curves of unfolded_ rounds into rdp_total_. Recording a round is a counter increment;
  // the per-order sums are folded in only when an ε is asked for (once per round when a budget is set).
  void FoldRdp() const;

  mutable std::vector<double> rdp_total_;   // RDP of the folded rounds, per order (not used for shuffle)
  mutable Schedule unfolded_;               // rounds recorded since the last FoldRdp
  std::vector<double> conversion_offsets_;  // RdpConversionOffsets(orders, delta)

  struct CurveCacheEntry {
    double q;
    double sigma;
    std::vector<double> rdp;
  };
  mutable std::vector<CurveCacheEntry> curve_cache_;
  mutable std::optional<double> epsilon_so_far_;  // invalidated by Record*
};

}  // namespace asyncdp::accounting
