// MPI start-up and shut-down for `asyncdp train` with protocol.runtime = "mpi" (docs/mpi.md). Only that
// path creates a session, so runs on the other runtimes never initialise MPI. Built only with MPI
// (CMakeLists.txt); sim/runtime/mpi_runtime.h does the communication.
#pragma once

namespace asyncdp::apps {

class MpiSession {
 public:
  // MPI_Init_thread with MPI_THREAD_FUNNELED: each rank's communication loop is its only MPI caller.
  MpiSession();
  ~MpiSession();  // MPI_Finalize
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Ends every rank of the job (MPI_Abort): after a failure the other ranks may be blocked waiting for this
  // one, so finalising would hang. mpirun then exits with a non-zero code.
  [[noreturn]] void Abort(int exit_code);

  // For an input error every rank of an `mpirun` job hits alike before any session exists (a bad key, a
  // mode that does not run on MPI): rank 0 prints the message, then every rank passes a barrier, so the
  // message is out before any rank exits and mpirun tears the job down (else a fast rank's exit can kill
  // rank 0 before it writes, and the user sees no message at all).
  static void ReportOnRankZero(const char* message);

 private:
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace asyncdp::apps
