# shellcheck shell=bash
# Shared helpers of run_experiments.sh: paths, logging, set-up/build, running `asyncdp` (also in parallel),
# and reading its JSON/CSV/TOML outputs. Sourced, never executed. No model or privacy logic lives here:
# every number comes from the asyncdp binary.

EXP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$EXP_DIR/../.." && pwd)
SHARED_DIR=${ASYNCDP_SHARED_DIR:-$REPO_DIR/../shared}
FASHION_DIR=${ASYNCDP_FASHION_DIR:-/usr/share/datasets/fashion-mnist}
ASYNCDP=${ASYNCDP_BIN:-}
JOBS=${JOBS:-1}
MPI_RANKS=${MPI_RANKS:-0}  # --mpi P: independent runs spread over P MPI ranks (scripts/experiments/mpi.sh)
SCALE=${ASYNCDP_EXPERIMENTS_SCALE:-default}  # tiny | default | full

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
warn() { printf '[%s] warning: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() {
  printf 'run_experiments.sh: error: %s\n' "$*" >&2
  exit 2
}

now_seconds() { date +%s.%N; }
elapsed_since() { awk -v a="$1" -v b="$(now_seconds)" 'BEGIN { printf "%.1f", b - a }'; }

# --- set-up -------------------------------------------------------------------------------------------

# Makes $ASYNCDP point at a current Release build: installs missing Debian packages
# (scripts/install-deps.sh), configures the `release` preset once and rebuilds the binary (a no-op when it
# is up to date; ASYNCDP_JOBS compile jobs, default all cores, as in run_tests.sh). ASYNCDP_BIN=/path/to/asyncdp
# skips all of this (tests, or a build elsewhere). `ensure_asyncdp python` also builds the Python module and
# exports what the Python experiment layer needs: PYTHONPATH (the module of the same build: the `python`
# folder beside the binary), ASYNCDP_BIN and ASYNCDP_SOURCE_DIR.
ensure_asyncdp() {
  local want_python=${1:-}
  if [ -n "$ASYNCDP" ]; then
    [ -x "$ASYNCDP" ] || die "ASYNCDP_BIN=$ASYNCDP is not an executable"
  else
    "$REPO_DIR/scripts/install-deps.sh" || die "installing dependencies failed (scripts/install-deps.sh)"
    local start targets=(asyncdp)
    [ -n "$want_python" ] && targets+=(asyncdp_python)
    start=$(now_seconds)
    if [ ! -f "$REPO_DIR/build/release/build.ninja" ]; then
      log "configuring the release build (cmake --preset release)"
      (cd "$REPO_DIR" && cmake --preset release >/dev/null) || die "cmake --preset release failed"
    fi
    log "building ${targets[*]} (cmake --build --preset release -j ${ASYNCDP_JOBS:-$(nproc)})"
    (cd "$REPO_DIR" && cmake --build --preset release --target "${targets[@]}" -j "${ASYNCDP_JOBS:-$(nproc)}" >&2) ||
      die "the build failed"
    ASYNCDP=$REPO_DIR/build/release/asyncdp
    log "asyncdp ready ($(elapsed_since "$start") s): $ASYNCDP"
  fi
  if [ -n "$want_python" ]; then
    local module_dir
    module_dir=$(cd "$(dirname "$ASYNCDP")" && pwd)/python
    [ -d "$module_dir/asyncdp/experiments" ] ||
      die "no Python module beside $ASYNCDP ($module_dir/asyncdp/experiments): build the asyncdp_python target"
    export PYTHONPATH=$module_dir${PYTHONPATH:+:$PYTHONPATH} ASYNCDP_BIN=$ASYNCDP ASYNCDP_SOURCE_DIR=$REPO_DIR
  fi
}

have_gnuplot() { command -v gnuplot >/dev/null 2>&1; }

# --- JSON, CSV and TOML readers -----------------------------------------------------------------------

# json_flat FILE: "path<TAB>value" per scalar (scripts/experiments/json.awk).
json_flat() { awk -f "$EXP_DIR/json.awk" "$1"; }

# json_get FILE KEY...: the values of the dotted KEYs, tab-separated, in order; "NA" for a missing key.
json_get() {
  local file=$1
  shift
  json_flat "$file" | awk -F'\t' -v keys="$*" '
    BEGIN { n = split(keys, want, " ") }
    { value[$1] = $2; seen[$1] = 1 }
    END {
      for (i = 1; i <= n; i++) printf "%s%s", (want[i] in seen ? value[want[i]] : "NA"), (i < n ? "\t" : "\n")
    }'
}

# json_count FILE PREFIX: the number of elements of the array at PREFIX (e.g. rounds_per_client). A missing
# or empty array is an error (exit 2), never a count of 0 that a caller could mistake for "none".
json_count() {
  json_flat "$1" | awk -F'\t' -v p="$2." -v f="$1" '
    index($1, p) == 1 && substr($1, length(p) + 1) ~ /^[0-9]+$/ { n++ }
    END { if (n == 0) { print "json_count: no array " substr(p, 1, length(p) - 1) " in " f > "/dev/stderr"; exit 2 }
          print n }'
}

# clients_of RUN_DIR: the number of clients of a run (the length of summary.json's per-client arrays).
clients_of() {
  local n
  n=$(json_count "$1/summary.json" planned_grads_per_client) || die "$1/summary.json: no per-client arrays"
  printf '%s' "$n"
}

# csv_column FILE NAME...: the named columns of a CSV with a header line, comma-separated.
csv_column() {
  local file=$1
  shift
  awk -F, -v names="$*" '
    NR == 1 { n = split(names, want, " "); for (i = 1; i <= NF; i++) col[$i] = i
              for (i = 1; i <= n; i++) if (!(want[i] in col)) { print "missing column " want[i] > "/dev/stderr"; exit 2 }
              next }
    { for (i = 1; i <= n; i++) printf "%s%s", $(col[want[i]]), (i < n ? "," : "\n") }' "$file"
}

# toml_get FILE SECTION KEY: a value of config.resolved.toml (quotes stripped); SECTION "" = top level.
toml_get() {
  awk -v section="$2" -v key="$3" '
    /^\[/ { current = $0; gsub(/[][ ]/, "", current); next }
    current == section {
      line = $0; sub(/#.*/, "", line)
      if (line ~ "^[ \t]*" key "[ \t]*=") { sub(/^[^=]*=[ \t]*/, "", line); gsub(/^["\x27]|["\x27][ \t]*$/, "", line)
                                              sub(/[ \t]+$/, "", line); print line; exit } }' "$1"
}

# Formats a number with printf FORMAT ("NA", "null", "inf" pass through).
fmt_num() {
  awk -v v="$2" -v f="$1" 'BEGIN { if (v ~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/) printf f, v; else printf "%s", v }'
}

# --- running asyncdp ----------------------------------------------------------------------------------

# run_asyncdp LOG CMD...: runs `asyncdp CMD...` with stdout+stderr to LOG; on failure prints the log tail.
# ASYNCDP_RUN_TIMEOUT=SECONDS (default 0 = none) stops a single call that runs longer (coreutils timeout),
# so that a hanging run is reported as failed instead of stalling the whole job.
run_asyncdp() {
  local log_file=$1
  shift
  local -a limit=()
  if [ "${ASYNCDP_RUN_TIMEOUT:-0}" != 0 ]; then limit=(timeout "$ASYNCDP_RUN_TIMEOUT"); fi
  local rc=0
  "${limit[@]}" "$ASYNCDP" "$@" >"$log_file" 2>&1 || rc=$?
  if [ "$rc" != 0 ]; then
    if [ "$rc" = 124 ] && [ ${#limit[@]} -gt 0 ]; then
      echo "run_experiments.sh: stopped after ASYNCDP_RUN_TIMEOUT=$ASYNCDP_RUN_TIMEOUT s" >>"$log_file"
    fi
    warn "asyncdp $* failed (exit $rc); last lines of $log_file:"
    tail -n 5 "$log_file" >&2
    return 1
  fi
}

# train_run DIR CONFIG [--set k=v]...: one `asyncdp train` into DIR (replaced), log in DIR.log. Appends
# the run to $MANIFEST (name, config, overrides) so the report can list every command. The experiments
# opt in to the non-private diagnostics (output.diagnostics, off by default): the convergence plots read
# diag_* columns (F - F*, train loss), which no epsilon covers and the reports label as such.
train_run() {
  local dir=$1 config=$2
  shift 2
  mkdir -p "$(dirname "$dir")"
  printf '%s\t%s\t%s\n' "${dir#"$OUT_DIR"/}" "$config" "--set output.diagnostics=true $*" >>"$MANIFEST"
  run_asyncdp "$dir.log" train --config "$config" --set output.diagnostics=true "$@" --out "$dir" --quiet
}

# Parallel execution: spawn CMD... in the background, at most $JOBS at a time. Failures are counted in
# $OUT_DIR/.failed; wait_all waits for the rest and reports them. With --mpi P (MPI_RANKS > 0) spawn only
# queues CMD (shell-quoted, one per line) and wait_all runs the queue over P MPI ranks (mpi_run_queue).
spawn() {
  if [ "$MPI_RANKS" -gt 0 ]; then
    { printf '%q ' "$@"; printf '\n'; } >>"$OUT_DIR/.mpi_queue"
    return
  fi
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  ("$@" || echo "$*" >>"$OUT_DIR/.failed") &
}
wait_all() {
  [ "$MPI_RANKS" -gt 0 ] && mpi_run_queue
  wait
  if [ -s "$OUT_DIR/.failed" ]; then
    warn "$(wc -l <"$OUT_DIR/.failed") run(s) failed:"
    sed 's/^/  /' "$OUT_DIR/.failed" >&2
    return 1
  fi
}

# Threads inside one run: with several parallel jobs (or MPI ranks, placed one per core) each run gets one
# worker thread.
thread_overrides() {
  if [ "$JOBS" -gt 1 ] || [ "$MPI_RANKS" -gt 1 ]; then
    printf '%s\n' --set protocol.worker_threads=1 --set model.threads=1
  fi
}

# Prepares OUT_DIR for a fresh run of a mode: removes only what a previous run of this script wrote.
prepare_out_dir() {
  mkdir -p "$OUT_DIR"
  rm -rf "$OUT_DIR/runs" "$OUT_DIR/plots" "$OUT_DIR/data" "$OUT_DIR/.failed" "$OUT_DIR/.mpi_queue"
  rm -f "$OUT_DIR"/*.csv "$OUT_DIR/REPORT.md" "$OUT_DIR/manifest.tsv"
  mkdir -p "$OUT_DIR/runs" "$OUT_DIR/plots" "$OUT_DIR/data"
  MANIFEST=$OUT_DIR/manifest.tsv
  printf 'run\tconfig\toverrides\n' >"$MANIFEST"
}
