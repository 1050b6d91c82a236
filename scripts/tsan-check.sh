#!/usr/bin/env bash
# Builds the simulator tests with ThreadSanitizer (the tsan preset) and runs every test that starts
# threads: every runtime (virtual, threads, and MPI's ranks when MPI is installed), the virtual runtime's
# compute pool, the threads runtime's task scheduler, the client protocol. Fails on any report. The preset
# keeps line tables only (-g1): reports keep file:line for every frame, and a batch compiles ~25% faster.
# Usage: scripts/tsan-check.sh [gtest filter]
set -euo pipefail
cd "$(dirname "$0")/.."

filter=${1:-'*Runtime*:*Client*:*Metrics*:*ComputePool*:*TaskScheduler*'}
jobs=${ASYNCDP_JOBS:-$(nproc)}
cmake --preset tsan >/dev/null
cmake --build build/tsan --target asyncdp_sim_tests -j "$jobs"
# The generated-configuration invariant test runs 40 configurations on both runtimes in the release and ASan
# runs; under ThreadSanitizer (≈ 20× slower) 12 of them cover the threads runtime's shapes for race
# detection; with 40 it took 127 s under TSan, about half of the 76 threaded tests' 242 s. Override to run more.
export ASYNCDP_INVARIANT_CASES=${ASYNCDP_INVARIANT_CASES:-12}
# halt_on_error: the first report fails the run; second_deadlock_stack: full lock-order reports.
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
  ./build/tsan/tests/asyncdp_sim_tests --gtest_filter="$filter" --gtest_brief=1
# The MPI runtime's own threads (clients, each rank's MPI loop, the server) run inside ranks started by
# mpirun: build the instrumented asyncdp binary and run its end-to-end tests, which pass the Open MPI
# suppressions (scripts/sanitizers/openmpi.tsan.supp) to the ranks. Only when CMake found MPI.
if cmake --build build/tsan --target help | grep -q '^asyncdp_mpi_tests'; then
  cmake --build build/tsan --target asyncdp asyncdp_mpi_tests -j "$jobs"
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
    ./build/tsan/tests/asyncdp_mpi_tests --gtest_brief=1
fi
echo "tsan-check: no ThreadSanitizer reports"
