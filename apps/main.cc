// asyncdp: asynchronous DP-SGD simulator and privacy accountant. See README.md.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>

#include "apps/allocator_tuning.h"
#include "apps/commands.h"
#include "apps/cpu_support.h"
#include "apps/mpi_launch.h"
#if ASYNCDP_WITH_MPI
#include "apps/mpi_session.h"
#endif
#include "core/error.h"

int main(int argc, char** argv) {
  // A CPU that lacks an extension this build uses was refused as the program loaded (exit code 2,
  // apps/cpu_support.h); the call also links that check into the program.
  if (const char* why = asyncdp::apps::UnsupportedCpu()) {
    std::fputs(why, stderr);
    return 2;
  }
  asyncdp::apps::TuneAllocator();  // before the first large allocation (apps/allocator_tuning.h)
  CLI::App app{"asyncdp: asynchronous DP-SGD simulator with an embedded privacy accountant", "asyncdp"};
  app.set_version_flag("--version", std::string("asyncdp ") + ASYNCDP_VERSION);
  app.require_subcommand(1);
  spdlog::set_default_logger(spdlog::stderr_color_mt("asyncdp"));
  spdlog::set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");

  asyncdp::apps::RegisterDataCommand(app);
  asyncdp::apps::RegisterAccountCommand(app);
  asyncdp::apps::RegisterCalcCommand(app);
  asyncdp::apps::RegisterUtilityGraphCommand(app);
  asyncdp::apps::RegisterTrainCommand(app);
  asyncdp::apps::RegisterReferenceOptimumCommand(app);
  asyncdp::apps::RegisterAuditCommand(app);

  try {
    // Only `asyncdp train` (with protocol.runtime = "mpi", apps/train_command.cc) splits its work over MPI
    // ranks; any other command started by mpirun would run whole in each rank and write its outputs P times.
    if (const int ranks = asyncdp::apps::LaunchedRanks(); ranks > 1) {
      std::string command;
      for (int i = 1; i < argc && command.empty(); ++i) {
        if (argv[i][0] != '-') command = argv[i];
      }
      if (!command.empty() && command != "train") {
        throw asyncdp::InputError("mpirun",
                                  "`asyncdp " + command + "` runs in one process, but this is one of " +
                                      std::to_string(ranks) +
                                      " MPI ranks: start it without mpirun (only `asyncdp train` with "
                                      "protocol.runtime = \"mpi\" runs over ranks)");
      }
    }
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    // Every CLI error starts with "error:", CLI11's option errors included. Under mpirun every rank parses
    // the same words and fails the same way: rank 0 alone says so.
    const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
    if (rank == nullptr) rank = std::getenv("PMI_RANK");
    if (rank == nullptr || std::atoi(rank) == 0) {
      std::fprintf(stderr, "error: %s\nRun with --help for more information.\n", e.what());
    }
    return 2;
  } catch (const asyncdp::apps::CommandExit& e) {
    return e.code;  // the command has reported (e.g. an audit VIOLATION: exit code 3)
  } catch (const asyncdp::InputError& e) {
    // Under mpirun every rank reads the same input and fails the same way: rank 0 alone says so (a mode
    // that does not run on MPI, a bad key), every rank exits 2.
    const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
    if (rank == nullptr) rank = std::getenv("PMI_RANK");
#if ASYNCDP_WITH_MPI
    if (rank != nullptr) {
      asyncdp::apps::MpiSession::ReportOnRankZero(e.what());
      return 2;
    }
#endif
    if (rank == nullptr || std::atoi(rank) == 0) std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
