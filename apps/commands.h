// Registration of the `asyncdp` subcommands. Each lives in its own apps/<name>_command.cc, adds itself to
// the CLI11 app and runs its work in the subcommand's callback. Callbacks throw asyncdp::InputError
// (core/error.h) for bad input; main() turns those into `error: ...` and exit code 2.
#pragma once

#include <CLI/CLI.hpp>

namespace asyncdp::apps {

void RegisterDataCommand(CLI::App& app);      // asyncdp data info
void RegisterAccountCommand(CLI::App& app);   // asyncdp account
void RegisterCalcCommand(CLI::App& app);      // asyncdp calc
void RegisterTrainCommand(CLI::App& app);     // asyncdp train
void RegisterUtilityGraphCommand(CLI::App& app);  // asyncdp utility-graph
void RegisterReferenceOptimumCommand(CLI::App& app);  // asyncdp reference-optimum

}  // namespace asyncdp::apps
