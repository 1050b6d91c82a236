// libFuzzer target: `asyncdp account` driven in-process through its CLI entry (apps/account_command.cc),
// with fuzzed arguments: one argument per input line. Contract checked: whatever the arguments, the
// command returns or throws CLI11's ParseError or an asyncdp InputError (what main() turns into
// `error: ...` and exit code 2); it never aborts, hangs or trips a sanitizer.
//
// By default the accountant is pinned to GDP (a closed form), so that a run reaches 10^6 argument sets
// and covers parsing, range checks and calibration quickly. ASYNCDP_FUZZ_ACCOUNTANTS=all lets the input
// choose RDP and PLD too (slow; for exploratory runs). --schedule is not fuzzed here (fuzz_schedule_csv
// covers its parser): a fuzzed path could name any file on the machine.
#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "core/error.h"

namespace {

bool AllAccountants() {
  static const bool all = [] {
    const char* env = std::getenv("ASYNCDP_FUZZ_ACCOUNTANTS");
    return env != nullptr && std::string(env) == "all";
  }();
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::cout.setstate(std::ios::badbit);  // the JSON result is not needed
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  const std::string text(reinterpret_cast<const char*>(bytes), size);
  std::vector<std::string> words = {"asyncdp", "account"};
  for (size_t start = 0; start <= text.size() && words.size() < 24;) {
    const size_t end = std::min(text.find('\n', start), text.size());
    words.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  for (const std::string& w : words) {
    if (w.find("--schedule") != std::string::npos || w.find('\0') != std::string::npos) return 0;
  }
  if (!AllAccountants()) {
    for (const std::string& w : words) {
      if (w.find("--acc") == 0) return 0;
    }
    words.push_back("--accountant");
    words.push_back("gdp");
  }
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  CLI::App app{"asyncdp", "asyncdp"};
  app.require_subcommand(1);
  asyncdp::apps::RegisterAccountCommand(app);
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::Error&) {
  } catch (const asyncdp::InputError&) {
  }
  return 0;
}
