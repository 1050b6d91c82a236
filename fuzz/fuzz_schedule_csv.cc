// libFuzzer target: the accounting CLI's CSV readers (core/accounting/csv_input.h): the `account
// --schedule` file (q,sigma[,count]) and the `calc --phases` file (K,sigma). Contract checked: bad input
// throws ParseError with a line and column, never anything else; an accepted schedule passes
// ValidateSchedule, and compacting it keeps its total number of rounds.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/accounting/csv_input.h"
#include "core/accounting/schedule.h"
#include "core/error.h"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  using namespace asyncdp;
  const std::string_view text(reinterpret_cast<const char*>(bytes), size);
  try {
    const accounting::Schedule schedule = accounting::ParseScheduleCsv(text, "schedule.csv");
    accounting::ValidateSchedule(schedule);
    Require(accounting::TotalRounds(accounting::CompactSchedule(schedule)) == accounting::TotalRounds(schedule));
  } catch (const ParseError& e) {
    Require(e.line() >= 1 && e.column() >= 1);
  } catch (const InputError&) {
  }
  try {
    for (const accounting::CalculatorPhase& phase : accounting::ParsePhasesCsv(text, "phases.csv")) {
      Require(phase.iterations > 0.0);
    }
  } catch (const ParseError& e) {
    Require(e.line() >= 1 && e.column() >= 1);
  }
  return 0;
}
