#!/usr/bin/env bash
# Builds the whole test suite with AddressSanitizer + UndefinedBehaviorSanitizer (the asan preset, Clang)
# and runs it, failing on the first report (heap/stack overflow, use-after-free, leak, signed overflow, bad
# shift, misaligned access, float-to-integer overflow, ...). The preset compiles with -ffp-contract=off:
# Clang would otherwise fuse a*b+c into FMA instructions, which GCC does not do under -std=c++20, and the
# numeric tests (tight tolerances on accountant values) must see the same arithmetic as the release build.
# It keeps line tables only (-gline-tables-only): every frame of a report still has its file:line, and the
# build is 13-16% faster than with full debug info (BENCHMARKS.md, "Set-up and CI time").
# Usage: scripts/asan-check.sh [ctest args...]     e.g. scripts/asan-check.sh -R Libsvm
# Environment: ASYNCDP_JOBS (default: number of cores), ASYNCDP_ASAN_EXCLUDE (a ctest -E regex; default
# excludes nothing).
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=${ASYNCDP_JOBS:-$(nproc)}
werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
./scripts/install-deps.sh --clang
cmake --preset asan -DASYNCDP_WERROR=$werror >/dev/null
cmake --build --preset asan -j "$jobs" --target asyncdp_test_build  # the benchmarks do not run here
# halt_on_error / abort: the first report fails the test that triggered it; detect_leaks: LeakSanitizer.
export ASAN_OPTIONS="halt_on_error=1 abort_on_error=1 detect_leaks=1 strict_string_checks=1 ${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1 ${UBSAN_OPTIONS:-}"
exclude=()
[ -n "${ASYNCDP_ASAN_EXCLUDE:-}" ] && exclude=(-E "$ASYNCDP_ASAN_EXCLUDE")
ctest --preset asan -j "$jobs" "${exclude[@]}" "$@"
echo "asan-check: no AddressSanitizer or UndefinedBehaviorSanitizer reports"
