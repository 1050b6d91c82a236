#include "core/accounting/make_accountant.h"

#include <memory>
#include <string>

#include "core/accounting/gdp/gdp_accountant.h"
#include "core/accounting/pld/pld_accountant.h"
#include "core/accounting/random_allocation/random_allocation_accountant.h"
#include "core/accounting/rdp/rdp_accountant.h"
#include "core/error.h"

namespace asyncdp::accounting {

std::unique_ptr<Accountant> MakeAccountant(AccountantKind kind, const AccountantOptions& options) {
  switch (kind) {
    case AccountantKind::kRdp:
      return std::make_unique<RdpAccountant>(options);
    case AccountantKind::kPld:
      return std::make_unique<PldAccountant>(options);
    case AccountantKind::kGdp:
      return std::make_unique<GdpAccountant>(options);
    case AccountantKind::kRandomAllocation:
      return std::make_unique<RandomAllocationAccountant>(options);
    default:
      break;
  }
  throw ConfigError("accountant", "no round accountant of kind " + std::string(ToString(kind)));
}

}  // namespace asyncdp::accounting
