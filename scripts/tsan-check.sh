#!/usr/bin/env bash
# Builds the simulator tests with ThreadSanitizer (the tsan preset) and runs every test that starts
# threads: both runtimes, the virtual runtime's compute pool, the client protocol. Fails on any report.
# Usage: scripts/tsan-check.sh [gtest filter]
set -euo pipefail
cd "$(dirname "$0")/.."

filter=${1:-'*Runtime*:*Client*:*Metrics*:*ComputePool*'}
jobs=${ASYNCDP_JOBS:-$(nproc)}
cmake --preset tsan >/dev/null
cmake --build build/tsan --target asyncdp_sim_tests -j "$jobs"
# halt_on_error: the first report fails the run; second_deadlock_stack: full lock-order reports.
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
  ./build/tsan/tests/asyncdp_sim_tests --gtest_filter="$filter" --gtest_brief=1
echo "tsan-check: no ThreadSanitizer reports"
