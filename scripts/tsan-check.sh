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
# The MPI runtime's own threads (clients, each rank's MPI loop, the server) run inside ranks started by
# mpirun: the instrumented asyncdp binary and its end-to-end tests, only when CMake found MPI. All targets
# in one build: built after the simulator tests had run, asyncdp and the MPI tests kept one core busy for
# 50 s with nothing beside them (the MPI tests wait for asyncdp).
targets=(asyncdp_sim_tests)
with_mpi=false
if cmake --build build/tsan --target help | grep -q '^asyncdp_mpi_tests'; then
  with_mpi=true
  targets+=(asyncdp asyncdp_mpi_tests)
fi
cmake --build build/tsan --target "${targets[@]}" -j "$jobs"
# The generated-configuration invariant test runs 40 configurations on both runtimes in the release and ASan
# runs; under ThreadSanitizer (≈ 20× slower) 12 of them cover the threads runtime's shapes for race
# detection; with 40 it took 127 s under TSan, about half of the 76 threaded tests' 242 s. Override to run more.
export ASYNCDP_INVARIANT_CASES=${ASYNCDP_INVARIANT_CASES:-12}
# halt_on_error: the first report fails the run; second_deadlock_stack: full lock-order reports.
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
# The simulator tests in `jobs` gtest shards at once: one process used about one core (128 CPU-s in 120 s
# wall for the 88 tests on AMD EPYC Zen 4), two shards took 67 s. Each shard's output is kept and printed,
# and any failing shard fails the check.
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
pids=()
for ((shard = 0; shard < jobs; ++shard)); do
  GTEST_TOTAL_SHARDS=$jobs GTEST_SHARD_INDEX=$shard \
    ./build/tsan/tests/asyncdp_sim_tests --gtest_filter="$filter" --gtest_brief=1 >"$logs/$shard.log" 2>&1 &
  pids+=($!)
done
failed=0
for ((shard = 0; shard < jobs; ++shard)); do
  status=0
  wait "${pids[$shard]}" || status=$?
  echo "tsan-check: simulator tests, shard $((shard + 1)) of $jobs:"
  cat "$logs/$shard.log"
  if [ "$status" -ne 0 ]; then
    echo "tsan-check: shard $((shard + 1)) of $jobs failed (exit $status)" >&2
    failed=1
  fi
done
[ "$failed" -eq 0 ] || exit 1
# The MPI tests one at a time (they are RUN_SERIAL in ctest too: each mpirun starts several ranks, 3 or 4
# in most, on the machine's cores). They pass the Open MPI suppressions (scripts/sanitizers/openmpi.tsan.supp)
# to the ranks. Not the key-by-key configuration check (mpi_config_usage_test.cc): its ~40 runs of one
# client on two ranks test which keys a rank reads, not its threads, and under TSan they would add minutes.
if [ "$with_mpi" = true ]; then
  ./build/tsan/tests/asyncdp_mpi_tests --gtest_brief=1 --gtest_filter='-*AKeyCalledReadChangesAnMpiRun*'
fi
echo "tsan-check: no ThreadSanitizer reports"
