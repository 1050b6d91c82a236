// Making an accountant of a given kind: the one place that knows every family (rdp/, pld/, gdp/,
// random_allocation/). Kept apart from the interface (core/accounting/accountant.h), which the families
// implement, so that no include runs back from the interface to its implementations.
#pragma once

#include <memory>

#include "core/accounting/accountant.h"
#include "core/accounting/schedule.h"

namespace asyncdp::accounting {

// A fresh accountant of `kind` (kRdp, kPld, kGdp or kRandomAllocation, the last needing
// options.allocation); ConfigError for other kinds.
std::unique_ptr<Accountant> MakeAccountant(AccountantKind kind, const AccountantOptions& options = {});

// Convenience: one accountant over a whole schedule, queried once.
EpsilonResult AccountSchedule(AccountantKind kind, const Schedule& schedule, double delta,
                              const AccountantOptions& options = {});

}  // namespace asyncdp::accounting
