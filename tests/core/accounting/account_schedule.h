// Test helper: one accountant of `kind` over a whole schedule, queried once — the accountant families
// tested directly, below the privacy service (core/accounting/account.h) that library code uses.
#pragma once

#include <memory>

#include "core/accounting/accountant.h"
#include "core/accounting/make_accountant.h"
#include "core/accounting/schedule.h"

namespace asyncdp::accounting {

inline EpsilonResult AccountSchedule(AccountantKind kind, const Schedule& schedule, double delta,
                                     const AccountantOptions& options = {}) {
  std::unique_ptr<Accountant> accountant = MakeAccountant(kind, options);
  accountant->AddSchedule(schedule);
  return accountant->Epsilon(delta);
}

}  // namespace asyncdp::accounting
