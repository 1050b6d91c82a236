#!/usr/bin/env bash
# Installs dependencies if missing, configures and builds what the tests need (Release preset: every target
# but the benchmarks, `asyncdp_test_build`), then runs ctest.
# Usage: ./run_tests.sh [ctest args...]      e.g. ./run_tests.sh -R Libsvm
# Environment: ASYNCDP_PRESET (default release), ASYNCDP_JOBS (default: number of cores).
set -euo pipefail
cd "$(dirname "$0")"

./scripts/install-deps.sh
preset=${ASYNCDP_PRESET:-release}
jobs=${ASYNCDP_JOBS:-$(nproc)}
werror=OFF
[ "${CI:-}" = "true" ] && werror=ON

cmake --preset "$preset" -DASYNCDP_WERROR=$werror >/dev/null
cmake --build --preset "$preset" -j "$jobs" --target asyncdp_test_build
ctest --preset "$preset" -j "$jobs" "$@"
