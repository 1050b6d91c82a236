#!/usr/bin/env bash
# One rank of `run_experiments.sh ... --mpi P` (see mpi.sh): runs its share of the queued independent runs,
# lines rank, rank + P, ... of QUEUE, one after another. The rank and the number of ranks come from the
# launcher's environment (Open MPI, MPICH/Hydra, PMIx or Slurm). Each rank appends only to its own files
# ($OUT_DIR/.manifest.rank<r>, .failed.rank<r>); the parent merges them when every rank is done.
# Usage (by mpi_run_queue only): mpirun -np P env ASYNCDP_BIN=... OUT_DIR=... mpi_worker.sh QUEUE
set -uo pipefail
# shellcheck source=scripts/experiments/common.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/common.sh"

queue=${1:?usage: mpi_worker.sh QUEUE}
rank=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${PMI_RANK:-${SLURM_PROCID:-}}}}
size=${OMPI_COMM_WORLD_SIZE:-${PMI_SIZE:-${SLURM_NTASKS:-}}}
[[ $rank =~ ^[0-9]+$ && $size =~ ^[1-9][0-9]*$ ]] ||
  die "mpi_worker.sh: no MPI rank in the environment (start it through run_experiments.sh --mpi P)"
[ -n "${OUT_DIR:-}" ] && [ -n "$ASYNCDP" ] || die "mpi_worker.sh: OUT_DIR and ASYNCDP_BIN must be set"
MANIFEST=$OUT_DIR/.manifest.rank$rank
: >"$MANIFEST"

line_number=0
while IFS= read -r line; do
  if [ $((line_number % size)) = "$rank" ]; then
    eval "set -- $line"  # the line was written with printf %q by spawn: exactly the original words
    "$@" || printf '%s\n' "$* (rank $rank)" >>"$OUT_DIR/.failed.rank$rank"
  fi
  line_number=$((line_number + 1))
done <"$queue"
