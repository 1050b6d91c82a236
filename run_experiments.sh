#!/usr/bin/env bash
# run_experiments.sh: the front door for reproducing the Proactive DP experiments and asking "what if".
# It sets up when needed (Debian packages, the Release build of the asyncdp binary and its Python module),
# then runs the experiment layer, python/asyncdp/experiments, with /usr/bin/python3 (ASYNCDP_PYTHON to
# override: a pyenv `python3` first on PATH may lack numpy). Every mode runs over seeds, reports means with
# 95% intervals beside baselines, draws verdicts (holds / does not hold / inconclusive) from intervals of
# paired differences, and draws every figure from the CSV table written beside it. All model and privacy
# computations happen in asyncdp.
#
#   ./run_experiments.sh [quick] [--seeds N]
#                                     strongly convex vs plain convex vs non-convex under DP at epsilon
#                                     0.5, 2, 8 and the paper's sigma, 5 seeds (LeNet 3)        (< 2 min)
#   ./run_experiments.sh paper [--full] [--seeds N]
#                                     the paper's utility graphs, Figures 1-3 & 7-14, Tables 9-11, over seeds
#   ./run_experiments.sh sweep --config FILE.toml --sample-sizes 1,5,10,26 --epsilons 0.05,0.1,0.5,1
#                                     [--seeds N] [--mpi P]   a grid of your own; --mpi P spreads the runs
#                                     over P MPI ranks (ASYNCDP_MPIRUN=srun inside a Slurm allocation)
#   ./run_experiments.sh audit        empirical privacy audits of 14 configurations (2 deliberately wrong
#                                     accountants) and 6 training runs, Bonferroni over the rows
#   ./run_experiments.sh proactive    accuracy/epsilon targets, phases, pause and re-join (Figure 15), and
#                                     budget allocation strategies at equal epsilon
#   ./run_experiments.sh checkins     random check-ins: epsilon vs m and p0 beside Poisson at equal
#                                     participation, DP-SGD on a9a with one record per client, empty steps
#   ./run_experiments.sh clipping     fixed against adaptive clipping (Andrew et al.) at equal epsilon on a9a
#                                     and Fashion-MNIST, 5 seeds, with the clip trajectory
#   ./run_experiments.sh userlevel    user-level DP: asynchronous rounds against random check-ins at equal
#                                     epsilon on a9a, 100 and 1,000 clients, 5 seeds
#
# Common options: --out DIR (default results/<mode>; a folder holding files the tool did not write is
# refused), --jobs N (runs at a time, default: the cores), --libsvm PATH (every mode but sweep, whose data
# are its --config's), --images DIR (quick, paper, proactive, clipping), --seeds N (every mode but audit),
# --tiny (seconds-long runs that test the pipeline; no verdicts). An option the mode does not read, or one
# given twice, is an error, not ignored. Environment: ASYNCDP_BIN (use this binary and the Python module
# beside it, skip set-up and build), ASYNCDP_SHARED_DIR (default ../shared), ASYNCDP_EXPERIMENTS_SCALE=tiny|
# default|full, ASYNCDP_RUN_TIMEOUT (seconds per run; 0 = none), ASYNCDP_FASHION_PAIR (default 7,9: the two
# Fashion-MNIST classes of the binary task used when no LIBSVM data is found); a bad value of the last three
# is an error before any run, whether or not the mode would use it. Exit codes: 0 done, 1 a run
# failed (the REPORT lists it), 2 bad usage or input.
set -euo pipefail

REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; }
die() {
  printf 'run_experiments.sh: error: %s\n' "$*" >&2
  exit 2
}
log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

MODE=quick
if [ $# -gt 0 ] && [[ $1 != -* ]]; then
  MODE=$1
  shift
fi
case $MODE in
  help) usage; exit 0 ;;
  quick | paper | sweep | audit | proactive | checkins | clipping | userlevel) ;;
  *) usage >&2; die "unknown subcommand '$MODE' (quick, paper, sweep, audit, proactive, checkins, clipping, userlevel)" ;;
esac
for arg in "$@"; do
  case $arg in -h | --help) usage; exit 0 ;; esac
done

# The binary and its Python module: ASYNCDP_BIN names a build (tests, or a build elsewhere); otherwise set up
# (scripts/install-deps.sh), configure the `release` preset once and rebuild what changed (ASYNCDP_JOBS
# compile jobs, default all cores).
if [ -n "${ASYNCDP_BIN:-}" ]; then
  [ -x "$ASYNCDP_BIN" ] || die "ASYNCDP_BIN=$ASYNCDP_BIN is not an executable"
else
  "$REPO_DIR/scripts/install-deps.sh" || die "installing dependencies failed (scripts/install-deps.sh)"
  if [ ! -f "$REPO_DIR/build/release/build.ninja" ]; then
    log "configuring the release build (cmake --preset release)"
    (cd "$REPO_DIR" && cmake --preset release >/dev/null) || die "cmake --preset release failed"
  fi
  log "building asyncdp and its Python module (cmake --build --preset release)"
  (cd "$REPO_DIR" && cmake --build --preset release --target asyncdp asyncdp_python -j "${ASYNCDP_JOBS:-$(nproc)}" >&2) ||
    die "the build failed"
  ASYNCDP_BIN=$REPO_DIR/build/release/asyncdp
fi
MODULE_DIR=$(cd "$(dirname "$ASYNCDP_BIN")" && pwd)/python
[ -d "$MODULE_DIR/asyncdp/experiments" ] ||
  die "no Python module beside $ASYNCDP_BIN ($MODULE_DIR/asyncdp/experiments): build the asyncdp_python target"
export PYTHONPATH=$MODULE_DIR${PYTHONPATH:+:$PYTHONPATH} ASYNCDP_BIN ASYNCDP_SOURCE_DIR=$REPO_DIR
cd "$REPO_DIR"
exec "${ASYNCDP_PYTHON:-/usr/bin/python3}" -m asyncdp.experiments "$MODE" "$@"
