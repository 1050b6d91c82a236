// Registration of the `asyncdp` subcommands. Each lives in its own apps/<name>_command.cc, adds itself to
// the CLI11 app and runs its work in the subcommand's callback. Callbacks throw asyncdp::InputError
// (core/error.h) for bad input; main() turns those into `error: ...` and exit code 2. A callback that has
// done its work but must report a verdict through the exit code throws CommandExit.
#pragma once

#include <CLI/CLI.hpp>

namespace asyncdp::apps {

// The exit code of `asyncdp audit` when the audit refutes a reported epsilon.
inline constexpr int kExitViolation = 3;
// A training run ended with clients that did not finish (summary.json: truncated), and
// protocol.allow_truncation is false.
inline constexpr int kExitTruncated = 4;

// The check of every path option (--config, --out, data files): an empty value, as `--out "$DIR"` with DIR
// unset gives, is an error (exit 2) rather than a silent default (train wrote to results/<config name>) or a
// filesystem error after the work was done (utility-graph, reference-optimum: exit 1).
inline CLI::Validator NonEmptyPath() {
  return CLI::Validator(
      [](const std::string& value) { return value.empty() ? "empty value; a path is expected" : std::string(); }, "",
      "NONEMPTY");
}

// Thrown by a subcommand after its outputs are written, to end the process with `code`.
struct CommandExit {
  int code = 0;
};

void RegisterDataCommand(CLI::App& app);      // asyncdp data info
void RegisterAccountCommand(CLI::App& app);   // asyncdp account
void RegisterCalcCommand(CLI::App& app);      // asyncdp calc
void RegisterTrainCommand(CLI::App& app);     // asyncdp train
void RegisterUtilityGraphCommand(CLI::App& app);  // asyncdp utility-graph
void RegisterReferenceOptimumCommand(CLI::App& app);  // asyncdp reference-optimum
void RegisterAuditCommand(CLI::App& app);         // asyncdp audit

}  // namespace asyncdp::apps
