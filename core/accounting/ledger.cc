#include "core/accounting/ledger.h"

#include <cmath>
#include <string>

#include "core/accounting/make_accountant.h"
#include "core/error.h"

namespace asyncdp::accounting {

void LedgerOptions::Validate() const {
  if (!(delta > 0.0 && delta < 1.0))
    throw ConfigError("ledger.delta", "must be in (0, 1), got " + std::to_string(delta));
  if (!(epsilon_budget > 0.0))
    throw ConfigError("ledger.epsilon_budget", "must be positive (or +inf for no budget)");
  if (accountant != AccountantKind::kRdp && accountant != AccountantKind::kPld) {
    throw ConfigError("ledger.accountant",
                      "must be rdp or pld (gdp is an approximation and cannot enforce a budget)");
  }
}

PrivacyLedger::PrivacyLedger(LedgerOptions options) : options_(std::move(options)) {
  options_.Validate();
  AccountantOptions accounting = options_.accounting;
  accounting.pld.compute_lower_bound = false;  // halts and "epsilon so far" need the upper bound only
  accountant_ = MakeAccountant(options_.accountant, accounting);
  if (const std::string limitation = accountant_->Limitation(); !limitation.empty()) {
    throw ConfigError("ledger.accountant", limitation);
  }
}

PrivacyLedger::PrivacyLedger(const PrivacyLedger& other)
    : options_(other.options_), accountant_(other.accountant_->Clone()) {}

PrivacyLedger& PrivacyLedger::operator=(const PrivacyLedger& other) {
  if (this != &other) {
    options_ = other.options_;
    accountant_ = other.accountant_->Clone();
  }
  return *this;
}

void PrivacyLedger::RecordRounds(double q, double sigma, int64_t count) {
  ValidateRoundGroup(RoundGroup{q, sigma, count}, "ledger.round", 0);
  accountant_->AddRounds(q, sigma, count);
}

bool PrivacyLedger::WouldExceed(double q, double sigma) const {
  ValidateRoundGroup(RoundGroup{q, sigma, 1}, "ledger.round", 0);
  if (std::isinf(options_.epsilon_budget)) return false;
  std::unique_ptr<Accountant> with_round = accountant_->Clone();
  with_round->AddRounds(q, sigma, 1);
  return with_round->Epsilon(options_.delta).epsilon > options_.epsilon_budget;
}

double PrivacyLedger::EpsilonSoFar() const { return accountant_->Epsilon(options_.delta).epsilon; }

}  // namespace asyncdp::accounting
