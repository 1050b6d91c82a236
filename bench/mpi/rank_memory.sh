#!/usr/bin/env bash
# Peak RSS of every MPI rank (docs/mpi.md, "Memory"): logistic regression on ijcnn1 with CLIENTS_PER_WORKER
# one-record clients per worker rank, s = 1, T = 10, for each rank count given (oversubscribed on one
# machine). Each rank runs under /usr/bin/time; prints "np clients rank rss_kb run_seconds" rows.
#   bench/mpi/rank_memory.sh BINARY [CLIENTS_PER_WORKER=5000] [NP ...=3 5 9]
set -euo pipefail
binary=$(readlink -f "$1"); shift
per_worker=${1:-5000}; shift || true
nps=("$@"); [ ${#nps[@]} -gt 0 ] || nps=(3 5 9)
repo=$(cd "$(dirname "$0")/../.." && pwd)
data=${ASYNCDP_SHARED_DIR:-$repo/../shared}/datasets/libsvm
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "np clients rank rss_kb run_seconds"
for np in "${nps[@]}"; do
  clients=$(( per_worker * (np - 1) ))
  out="$work/out_$np"
  mpirun --oversubscribe -np "$np" sh -c '/usr/bin/time -f %M -o "$0/rss.$OMPI_COMM_WORLD_RANK" "$@"' "$work" \
    "$binary" train --quiet --out "$out" \
    --set data.train="$data/ijcnn1.gz" --set data.test="$data/ijcnn1.t.gz" --set data.eval_rows=1000 \
    --set model.kind=logistic --set clients.count="$clients" --set protocol.runtime=mpi --set protocol.server_step=per_client \
    --set schedule.sample_size=1 --set schedule.rounds=10 --set dp.sigma=1 --set dp.delta=1e-5 \
    --set eval.points=1 >/dev/null 2>"$work/stderr_$np"
  seconds=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['run_seconds'])" "$out/summary.json")
  for ((r = 0; r < np; r++)); do echo "$np $clients $r $(tail -1 "$work/rss.$r") $seconds"; done
done
