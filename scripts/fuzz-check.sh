#!/usr/bin/env bash
# Builds the libFuzzer targets (the asan preset's tree: Clang, ASan + UBSan; build preset `fuzz`) and runs
# each one: first over its seed corpus (fuzz/corpus/<name>/, real data slices), then fuzzing for a fixed
# time. Fails on the first crash, sanitizer report, timeout (10 s per input) or out-of-memory (2 GB); the
# input that caused it is saved as build/asan/fuzz/findings/<target>-crash-... (replay:
# build/asan/fuzz/<target> FILE).
# Usage: scripts/fuzz-check.sh [SECONDS per target, default 20] [target...]   (default: every target)
# Environment: ASYNCDP_JOBS (build jobs), ASYNCDP_FUZZ_RUNS=N (stop after N inputs instead of SECONDS).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-20}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_libsvm fuzz_idx fuzz_cifar fuzz_config fuzz_schedule_csv fuzz_account)
jobs=${ASYNCDP_JOBS:-$(nproc)}

out=build/asan/fuzz
./scripts/install-deps.sh --clang
cmake --preset asan >/dev/null
cmake --build --preset fuzz -j "$jobs"
mkdir -p "$out/findings"
export ASAN_OPTIONS="halt_on_error=1 abort_on_error=1 detect_leaks=1 ${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1 ${UBSAN_OPTIONS:-}"
for target in "${targets[@]}"; do
  seeds=fuzz/corpus/${target#fuzz_}
  work=$out/corpus/${target#fuzz_}
  mkdir -p "$work"
  limit=(-max_total_time="$seconds")
  [ -n "${ASYNCDP_FUZZ_RUNS:-}" ] && limit=(-runs="$ASYNCDP_FUZZ_RUNS")
  echo "fuzz-check: $target (${ASYNCDP_FUZZ_RUNS:-$seconds s} ${ASYNCDP_FUZZ_RUNS:+inputs})" >&2
  # New coverage goes to the work corpus under build/; the committed seeds are read only. -timeout: an
  # input running longer than 10 s is a hang; -rss_limit_mb: one using more than 2 GB is a finding too.
  "$out/$target" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$out/findings/$target-" "$work" "$seeds" 2>"$out/$target.log" || {
    echo "fuzz-check: $target FAILED; last lines of $out/$target.log:" >&2
    tail -n 40 "$out/$target.log" >&2
    exit 1
  }
  grep -E "stat::number_of_executed_units" "$out/$target.log" | sed "s/^/fuzz-check: $target /" >&2
done
echo "fuzz-check: no findings"
