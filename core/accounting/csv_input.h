// Parsers for the accounting CLI's CSV inputs. They take the file's text (the CLI does the I/O) and throw
// ParseError(file, line, column, what was expected) on malformed input; nothing is skipped silently.
// Format shared by both: comma-separated, one record per line, blank lines and lines starting with '#'
// ignored, an optional header line whose first field is the column name given below.
#pragma once

#include <string>
#include <string_view>

#include "core/accounting/proactive/proactive_calculator.h"
#include "core/accounting/schedule.h"

namespace asyncdp::accounting {

// `q,sigma[,count]` per line (count defaults to 1, so a per-round trace is also a valid schedule);
// header `q,sigma,count`. Values are validated like ValidateSchedule (reported at their line/column).
Schedule ParseScheduleCsv(std::string_view text, const std::string& file_name);

// `K,sigma` per line for the E.1 calculator; sigma may be empty in the first line only (derive it from
// (35)); header `K,sigma`.
std::vector<CalculatorPhase> ParsePhasesCsv(std::string_view text, const std::string& file_name);

}  // namespace asyncdp::accounting
