#!/usr/bin/env bash
# run_experiments.sh: the front door for reproducing the Proactive DP experiments and asking "what if".
# It sets up (Debian packages, Release build of the binary and the Python module) when needed, then runs a
# mode. All model and privacy computations happen in asyncdp. `quick` is the Python experiment layer
# (python/asyncdp/experiments: runs over seeds, intervals, verdicts, matplotlib figures drawn from the
# tables beside them), started with /usr/bin/python3 (ASYNCDP_PYTHON to override: a pyenv `python3`
# first on PATH may lack numpy); the other modes are still bash + gnuplot (scripts/experiments/).
#
#   ./run_experiments.sh [quick] [--seeds N] [--jobs N] [--tiny]
#                                     strongly convex vs plain convex vs non-convex under DP at
#                                     epsilon 0.5, 2, 8 and the paper's sigma, 5 seeds (LeNet 3), 95%
#                                     intervals and baselines                             (<= 4 min)
#   ./run_experiments.sh paper [--full] [--libsvm PATH] [--images DIR]
#                                     the paper's utility graphs, Figures 1-3 & 7-14, Tables 9-11
#   ./run_experiments.sh sweep --config FILE.toml --sample-sizes 1,5,10,26 --epsilons 0.05,0.1,0.5,1
#                                     [--seeds 3] [--jobs N | --mpi P]   a grid of your own, mean ± std over seeds;
#                                     --mpi P spreads the independent runs over P MPI ranks (one run per rank
#                                     at a time; ASYNCDP_MPIRUN=srun inside a Slurm allocation)
#   ./run_experiments.sh audit        empirical privacy audit (asyncdp audit) of 11 configurations and 2
#                                     deliberately wrong accountants: eps_lower vs reported eps, verdicts
#   ./run_experiments.sh proactive    accuracy/epsilon targets, phases, stop and re-join (Figure 15), and
#                                     budget allocation strategies at equal epsilon    (a few minutes)
#   ./run_experiments.sh checkins     random check-ins: epsilon vs m and p0 beside Poisson and shuffling,
#                                     DP-SGD on a9a with one record per client, empty steps (a few minutes)
#
# Common options: --out DIR (default results/<mode>), --jobs N (parallel runs, default 1 for quick and
# sweep, 2 for paper), --libsvm PATH, --images DIR. Environment: ASYNCDP_BIN (use this binary, skip the
# build), ASYNCDP_SHARED_DIR (default ../shared), ASYNCDP_EXPERIMENTS_SCALE=tiny|default|full,
# ASYNCDP_RUN_TIMEOUT (seconds per asyncdp call; 0 = none), ASYNCDP_FASHION_PAIR (default 7,9: the two
# Fashion-MNIST classes of the binary task used when no LIBSVM data is found).
set -euo pipefail

EXP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/scripts/experiments" && pwd)
# shellcheck source=scripts/experiments/common.sh
source "$EXP_DIR/common.sh"
# shellcheck source=scripts/experiments/data.sh
source "$EXP_DIR/data.sh"
# shellcheck source=scripts/experiments/plot.sh
source "$EXP_DIR/plot.sh"
# shellcheck source=scripts/experiments/report.sh
source "$EXP_DIR/report.sh"
# shellcheck source=scripts/experiments/paper.sh
source "$EXP_DIR/paper.sh"

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'
}

MODE=quick
if [ $# -gt 0 ] && [[ $1 != -* ]]; then
  MODE=$1
  shift
fi
# The modes of the Python experiment layer parse their own options (python3 -m asyncdp.experiments).
[ "$MODE" = help ] && { usage; exit 0; }
if [ "$MODE" != paper ]; then
  for arg in "$@"; do
    case $arg in -h | --help) usage; exit 0 ;; esac
  done
  cd "$REPO_DIR"
  ensure_asyncdp python
  exec "${ASYNCDP_PYTHON:-/usr/bin/python3}" -m asyncdp.experiments "$MODE" "$@"
fi
case $MODE in
  paper) ;;
  help) usage; exit 0 ;;
  *) usage >&2; die "unknown subcommand '$MODE' (quick, paper, sweep, audit, proactive, checkins)" ;;
esac

OUT_ARG="" LIBSVM_ARG="" IMAGES_ARG="" CONFIG_ARG="" SAMPLE_SIZES_ARG="" EPSILONS_ARG="" SEEDS_ARG=1
JOBS_ARG="" MPI_ARG=""
need_value() { [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a value"; }
while [ $# -gt 0 ]; do
  case $1 in
    --out) need_value "$@"; OUT_ARG=$(mkdir -p "$2" && cd "$2" && pwd); shift 2 ;;
    --jobs) need_value "$@"; JOBS_ARG=$2; shift 2 ;;
    --mpi) need_value "$@"; MPI_ARG=$2; shift 2 ;;
    --libsvm) need_value "$@"; LIBSVM_ARG=$2; shift 2 ;;
    --images) need_value "$@"; IMAGES_ARG=$(cd "$2" 2>/dev/null && pwd) || die "--images $2: no such folder"; shift 2 ;;
    --full) SCALE=full; shift ;;
    --tiny) SCALE=tiny; shift ;;  # seconds-long runs for the tests (same as ASYNCDP_EXPERIMENTS_SCALE=tiny)
    --config) need_value "$@"; CONFIG_ARG=$2; shift 2 ;;
    --sample-sizes) need_value "$@"; SAMPLE_SIZES_ARG=$2; shift 2 ;;
    --epsilons) need_value "$@"; EPSILONS_ARG=$2; shift 2 ;;
    --seeds) need_value "$@"; SEEDS_ARG=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown option '$1' for '$MODE' (see --help)" ;;
  esac
done
case $SCALE in tiny | default | full) ;; *) die "ASYNCDP_EXPERIMENTS_SCALE must be tiny, default or full" ;; esac
if [ -n "$JOBS_ARG" ]; then
  [[ $JOBS_ARG =~ ^[1-9][0-9]*$ ]] || die "--jobs needs a positive integer, got '$JOBS_ARG'"
  JOBS=$JOBS_ARG
elif [ "$MODE" = paper ] || [ "$MODE" = proactive ]; then
  JOBS=2
fi
if [ -n "$MPI_ARG" ]; then die "--mpi belongs to 'sweep'"; fi
[[ $SEEDS_ARG =~ ^[1-9][0-9]*$ ]] || die "--seeds needs a positive integer, got '$SEEDS_ARG'"
if [ "$MODE" != sweep ] && [ -n "$CONFIG_ARG$SAMPLE_SIZES_ARG$EPSILONS_ARG" ]; then
  die "--config, --sample-sizes and --epsilons belong to 'sweep'"
fi

TOTAL_START=$(now_seconds)
cd "$REPO_DIR"
ensure_asyncdp
have_gnuplot || warn "gnuplot is not installed (scripts/install-deps.sh installs gnuplot-nox): no PNGs"
"${MODE}_main"
