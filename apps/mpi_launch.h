// How many processes the launcher started together with this one (mpirun, mpiexec): 1 when run on its own.
// Read from the launcher's environment, so it needs no MPI library and no MPI_Init: only
// `asyncdp train` with protocol.runtime = "mpi" splits its work over ranks; every other run started as one
// of several ranks would run whole in each of them and publish the same outputs once per rank, so the CLI
// refuses it (apps/main.cc, apps/train_command.cc).
#pragma once

#include <cstdlib>

namespace asyncdp::apps {

inline int LaunchedRanks() {
  // Open MPI, then the PMI and PMIx variables of MPICH/Hydra and other launchers.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    if (const char* value = std::getenv(name); value != nullptr) {
      const int size = std::atoi(value);
      if (size > 0) return size;
    }
  }
  return 1;
}

}  // namespace asyncdp::apps
