// Making an accountant of a given kind: the one place that knows every family (rdp/, pld/, gdp/,
// random_allocation/). Kept apart from the interface (core/accounting/accountant.h), which the families
// implement, so that no include runs back from the interface to its implementations. Library code outside
// core/accounting never calls it: it asks the privacy service (core/accounting/account.h) about an event.
#pragma once

#include <memory>

#include "core/accounting/accountant.h"
#include "core/accounting/schedule.h"

namespace asyncdp::accounting {

// A fresh accountant of `kind` (kRdp, kPld, kGdp or kRandomAllocation, the last needing
// options.allocation); ConfigError for other kinds.
std::unique_ptr<Accountant> MakeAccountant(AccountantKind kind, const AccountantOptions& options = {});

}  // namespace asyncdp::accounting
