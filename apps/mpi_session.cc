#include "apps/mpi_session.h"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace asyncdp::apps {

MpiSession::MpiSession() {
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    throw std::runtime_error("MPI_Init_thread failed");
  }
  // Errors come back as codes (sim/runtime/mpi_transport.cc turns them into exceptions) instead of
  // aborting inside MPI with a less specific message.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    throw std::runtime_error("this MPI library does not support MPI_THREAD_FUNNELED");
  }
}

MpiSession::~MpiSession() { MPI_Finalize(); }

void MpiSession::Abort(int exit_code) {
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::exit(exit_code);  // MPI_Abort does not return; this satisfies [[noreturn]] if it ever did
}

void MpiSession::ReportOnRankZero(const char* message) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized != 0) {  // a session exists: it reports and aborts by itself
    std::fprintf(stderr, "error: %s\n", message);
    return;
  }
  if (MPI_Init(nullptr, nullptr) != MPI_SUCCESS) {
    std::fprintf(stderr, "error: %s\n", message);
    return;
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    std::fprintf(stderr, "error: %s\n", message);
    std::fflush(stderr);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
}

}  // namespace asyncdp::apps
