#!/usr/bin/env bash
# Builds the libFuzzer targets (the asan preset's tree: Clang, ASan + UBSan; build preset `fuzz`) and runs
# each one: first over its seed corpus (fuzz/corpus/<name>/, real data slices), then fuzzing for a fixed
# time. Fails when any target finds a crash, sanitizer report, timeout (10 s per input) or out-of-memory
# (2 GB), after every target has run; the input that caused it is saved as
# build/asan/fuzz/findings/<target>-crash-... (replay: build/asan/fuzz/<target> FILE).
# Usage: scripts/fuzz-check.sh [SECONDS per target, default 20] [target...]   (default: every target)
# Environment: ASYNCDP_JOBS (build jobs, and targets fuzzed at once; default: the core count),
# ASYNCDP_FUZZ_RUNS=N (stop after N inputs instead of SECONDS).
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
# One target's run: its seeds first, then fuzzing until the time (or input) limit. New coverage goes to the
# work corpus under build/; the committed seeds are read only. -timeout: an input running longer than 10 s
# is a hang; -rss_limit_mb: one using more than 2 GB is a finding too.
fuzz_one() {
  local target=$1 seeds=fuzz/corpus/${1#fuzz_} work=$out/corpus/${1#fuzz_}
  mkdir -p "$work"
  local limit=(-max_total_time="$seconds")
  [ -n "${ASYNCDP_FUZZ_RUNS:-}" ] && limit=(-runs="$ASYNCDP_FUZZ_RUNS")
  "$out/$target" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$out/findings/$target-" "$work" "$seeds" 2>"$out/$target.log"
}
# The targets run `jobs` at a time, each on a core of its own, so every target still gets its whole time
# limit and the stage takes about 1/jobs of the serial time. The results are read in the list's order;
# every failing target is reported with its log's last lines.
limit_label=${ASYNCDP_FUZZ_RUNS:+$ASYNCDP_FUZZ_RUNS inputs}
limit_label=${limit_label:-$seconds s}
pids=() status=()
for i in "${!targets[@]}"; do
  # A slot frees when the target started `jobs` places earlier ends; its status is kept for the report.
  if [ "$i" -ge "$jobs" ]; then
    k=$((i - jobs))
    wait "${pids[$k]}" && status[k]=0 || status[k]=$?
  fi
  echo "fuzz-check: ${targets[$i]} ($limit_label)" >&2
  fuzz_one "${targets[$i]}" &
  pids+=($!)
done
failed=0
for i in "${!targets[@]}"; do
  target=${targets[$i]}
  if [ -z "${status[$i]:-}" ]; then wait "${pids[$i]}" && status[i]=0 || status[i]=$?; fi
  if [ "${status[$i]}" -ne 0 ]; then
    echo "fuzz-check: $target FAILED; last lines of $out/$target.log:" >&2
    tail -n 40 "$out/$target.log" >&2
    failed=1
    continue
  fi
  grep -E "stat::number_of_executed_units" "$out/$target.log" | sed "s/^/fuzz-check: $target /" >&2
done
[ "$failed" -eq 0 ] || exit 1
echo "fuzz-check: no findings"
