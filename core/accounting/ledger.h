// Per-client privacy ledger for decisions that cannot be planned before training (a client that changes
// its noise or sample size at run time, Appendix E, Figure 15; docs/theory.md §9): record every noisy round the client
// sends, ask "epsilon so far", and ask before each round whether it would exceed the budget (budget
// management, docs/theory.md §7: budget depletion stops the client). A schedule fixed in advance needs no ledger: its halt round is
// computed before training by RoundsWithinBudget (calibration.h), which the simulator does.
//
// Everything goes through the accountant facade (accountant.h), so the ledger halts by exactly the
// accountant that reports. Cost per WouldExceed: one composition of the rounds so far plus one (RDP:
// cached curves, microseconds; PLD: milliseconds).
//
// Thread safety: not thread-safe, including const methods (the accountant caches). One ledger per client.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>

#include "core/accounting/accountant.h"
#include "core/accounting/assumptions.h"
#include "core/accounting/schedule.h"

namespace asyncdp::accounting {

struct LedgerOptions {
  double delta = 1e-5;  // target delta of the budget, in (0, 1); the paper uses 1/N
  // Halt threshold; +inf = track only, never halt.
  double epsilon_budget = std::numeric_limits<double>::infinity();
  // Accountant deciding the halt and EpsilonSoFar: kPld (default, tightest) or kRdp. kGdp is refused: an
  // approximation cannot enforce a budget.
  AccountantKind accountant = AccountantKind::kPld;
  AccountantOptions accounting;  // sampling model, noise model, RDP orders, PLD grid

  // Throws ConfigError("ledger.<field>", ...) for invalid values.
  void Validate() const;
};

class PrivacyLedger {
 public:
  // Validates options (ConfigError).
  explicit PrivacyLedger(LedgerOptions options);
  PrivacyLedger(const PrivacyLedger& other);
  PrivacyLedger& operator=(const PrivacyLedger& other);
  PrivacyLedger(PrivacyLedger&&) noexcept = default;
  PrivacyLedger& operator=(PrivacyLedger&&) noexcept = default;

  // Records rounds with sampling rate q in (0, 1] and noise multiplier sigma > 0. Throws ConfigError for
  // invalid q / sigma. Recording is never refused: call WouldExceed first to halt.
  void RecordRound(double q, double sigma) { RecordRounds(q, sigma, 1); }
  void RecordRounds(double q, double sigma, int64_t count);

  // True iff recording one more (q, sigma) round would make the accountant's epsilon exceed the budget
  // (always false with an infinite budget).
  bool WouldExceed(double q, double sigma) const;

  // Epsilon of the rounds so far at options().delta (0 before any round).
  double EpsilonSoFar() const;

  int64_t rounds() const { return accountant_->rounds(); }
  const Schedule& schedule() const { return accountant_->schedule(); }
  const LedgerOptions& options() const { return options_; }
  Assumptions assumptions() const { return accountant_->Describe(options_.delta); }

 private:
  LedgerOptions options_;
  std::unique_ptr<Accountant> accountant_;
};

}  // namespace asyncdp::accounting
