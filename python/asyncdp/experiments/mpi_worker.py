"""One rank of ``run_experiments.sh ... --mpi P`` (runner.run_over_mpi): runs its share of the queued runs,
specs rank, rank + P, ..., one after another, and leaves each result as ``.result-NAME.pkl`` in the runs
folder for the parent to collect. Usage (by run_over_mpi only):
``mpirun -np P python3 -m asyncdp.experiments.mpi_worker QUEUE RUNS_DIR``."""

import os
import pathlib
import pickle
import sys

from . import env
from .runner import _run_one, mpi_rank


def main(argv) -> int:
    queue, runs_dir = pathlib.Path(argv[0]), pathlib.Path(argv[1])
    rank, size = mpi_rank()
    specs = pickle.loads(queue.read_bytes())
    timeout = env.run_timeout()
    for i, spec in enumerate(specs):
        if i % size != rank:
            continue
        result = _run_one(spec, os.fspath(runs_dir), timeout)
        target = runs_dir / f".result-{spec.name}.pkl"
        partial = target.with_suffix(f".rank{rank}.partial")
        partial.write_bytes(pickle.dumps(result))
        os.replace(partial, target)  # the parent never reads half a result
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
