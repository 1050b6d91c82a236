#!/usr/bin/env bash
# 10^6 one-record clients over MPI (issue #33): generates a synthetic LIBSVM data set of 10^6 rows (10
# features, a linear separator plus label noise; numpy, seed 1) once, then runs logistic regression with
# s = 1, T = 5 over `mpirun --oversubscribe -np NP` (default 5) and prints every rank's peak RSS and the run's
# times. No data set shipped here has 10^6 rows.
#   bench/mpi/million_clients.sh BINARY [NP=5] [CLIENTS=1000000]
set -euo pipefail
binary=$(readlink -f "$1")
np=${2:-5}
clients=${3:-1000000}
data=${ASYNCDP_SYNTH_DIR:-/tmp/asyncdp-synth}
mkdir -p "$data"
if [ ! -s "$data/synth1m.gz" ]; then
  /usr/bin/python3 - "$data" <<'PY'
import gzip, sys
import numpy as np
out = sys.argv[1]
rng = np.random.default_rng(1)
d = 10
w = rng.normal(size=d)
for name, n, noise in (("synth1m.gz", 1_000_000, 0.5), ("synth1m.t.gz", 10_000, 0.0)):
    x = rng.normal(size=(n, d)).astype(np.float32)
    y = np.where(x @ w + noise * rng.normal(size=n) > 0, 1, -1)
    with gzip.open(f"{out}/{name}", "wt", compresslevel=1) as f:
        for i in range(n):
            f.write(f"{y[i]:+d} " + " ".join(f"{j + 1}:{x[i, j]:.3f}" for j in range(d)) + "\n")
PY
fi
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpirun --oversubscribe -np "$np" sh -c '/usr/bin/time -f "%M %e" -o "$0/rss.$OMPI_COMM_WORLD_RANK" "$@"' "$work" \
  "$binary" train --quiet --out "$work/out" \
  --set data.train="$data/synth1m.gz" --set data.test="$data/synth1m.t.gz" --set data.features=10 \
  --set model.kind=logistic --set clients.count="$clients" --set protocol.runtime=mpi \
  --set protocol.server_step=per_client --set schedule.sample_size=1 --set schedule.rounds=5 --set dp.sigma=1 \
  --set dp.delta=1e-6 --set eval.points=1 --set protocol.mpi_timeout=600 >/dev/null 2>"$work/stderr" ||
  { tail -5 "$work/stderr"; exit 1; }
echo "rank rss_kb process_seconds"
for ((r = 0; r < np; r++)); do echo "$r $(tail -1 "$work/rss.$r")"; done
python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print('run_seconds', s['run_seconds'], 'wall_seconds', s['wall_seconds'], 'truncated', s['truncated'])" "$work/out/summary.json"
