"""Running a matrix of simulator runs: each an ``asyncdp.train`` call in a worker process.

A run is a ``RunSpec``: a configuration file, ``--set``-style overrides, a seed and the experiment's labels
for it (problem, privacy setting, ...). ``run_all`` runs them ``jobs`` at a time (one process each, so
runs never share a thread pool or a log level) and returns typed ``RunResult``s: the summary, metrics and
clients tables as the ``asyncdp`` module gives them, the CPU seconds the run used, or the error that ended
it. Each run also writes the CLI's four files into ``runs/NAME/`` of the output folder, so every number in
a REPORT can be traced to a run directory holding its resolved configuration and seed, and ``runs/index.csv``
lists every run with the configuration file, overrides and seed it was started from (``record``).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import json
import math
import multiprocessing
import os
import pathlib
import pickle
import resource
import shlex
import subprocess
import sys
import time
import traceback
from typing import Any, Mapping, Sequence

import pandas as pd

from . import env


@dataclasses.dataclass(frozen=True)
class RunSpec:
    name: str                       # unique; the run directory under runs/
    config: pathlib.Path | Mapping[str, Any]  # a TOML configuration (experiments/*.toml), or one as a dict
    overrides: Mapping[str, Any]    # dotted keys, as --set
    seed: int
    labels: Mapping[str, Any]       # the experiment's factors for this run (problem, setting, ...)


@dataclasses.dataclass
class RunResult:
    spec: RunSpec
    summary: dict | None
    metrics: pd.DataFrame | None
    clients: pd.DataFrame | None
    cpu_seconds: float
    wall_seconds: float
    error: str | None = None
    applied: Mapping[str, Any] | None = None  # the overrides the run was started with (None: not started)

    @property
    def ok(self) -> bool:
        return self.error is None


class RunTimeout(Exception):
    pass


# The keys that give a run one thread of its own (the threads runtime's workers, a CNN's batch work), for
# runs that go in parallel (``one_thread``). A run is given only those it reads: asyncdp refuses a key a run
# does not read, even at its default value, so the cap is applied per run (``_train_overrides``).
ONE_THREAD_KEYS = ("protocol.worker_threads", "model.threads")


def one_thread(parallel: bool) -> dict[str, int]:
    """The overrides that cap each run at one thread when runs go in parallel (``parallel``), else none."""
    return {key: 1 for key in ONE_THREAD_KEYS} if parallel else {}


def _train_overrides(config, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """OVERRIDES without the thread cap's keys that the run of CONFIG does not read."""
    import asyncdp

    if not any(key in overrides for key in ONE_THREAD_KEYS):
        return dict(overrides)
    config = config if isinstance(config, Mapping) else os.fspath(config)
    rest = {key: value for key, value in overrides.items() if key not in ONE_THREAD_KEYS}
    unread = asyncdp.unread_keys(config, **{key.replace(".", "__"): value for key, value in rest.items()})
    return {key: value for key, value in overrides.items() if not (key in ONE_THREAD_KEYS and key in unread)}


def _run_one(spec: RunSpec, runs_dir: str, timeout: float) -> RunResult:
    import asyncdp

    # Errors reach the REPORT as exceptions; the per-run warnings (e.g. that output.diagnostics is on,
    # which the REPORT states once) would only repeat themselves for every run.
    asyncdp.set_log_level("error")
    start_wall = time.monotonic()
    start_cpu = time.process_time()
    deadline = start_wall + timeout if timeout > 0 else None

    def progress(_state):
        if deadline is not None and time.monotonic() > deadline:
            raise RunTimeout(f"stopped after ASYNCDP_RUN_TIMEOUT={timeout:g} s")

    out = pathlib.Path(runs_dir) / spec.name
    applied = None
    try:
        config = spec.config if isinstance(spec.config, Mapping) else os.fspath(spec.config)
        applied = _train_overrides(config, spec.overrides)
        kwargs = {key.replace(".", "__"): value for key, value in applied.items()}
        run = asyncdp.train(config, out=out, progress=progress, seed=spec.seed, **kwargs)
    except Exception as e:  # noqa: BLE001 - every failure is reported in the REPORT, none is fatal to the others
        detail = "".join(traceback.format_exception_only(type(e), e)).strip()
        return RunResult(spec, None, None, None, time.process_time() - start_cpu, time.monotonic() - start_wall,
                         detail, applied)
    return RunResult(spec, run.summary, run.metrics_frame(), run.clients_frame(),
                     time.process_time() - start_cpu, time.monotonic() - start_wall, applied=applied)


def run_all(specs: Sequence[RunSpec], runs_dir: pathlib.Path, jobs: int, log=print, mpi_ranks: int = 0) -> list[RunResult]:
    """Runs every spec (``jobs`` processes at a time; in the order given, so put the longest first) and
    returns their results in the same order. ``ASYNCDP_RUN_TIMEOUT`` (seconds, default none) stops a run
    that takes longer and reports it as failed. ``mpi_ranks`` > 0 spreads the runs over that many MPI ranks
    instead (``run_over_mpi``)."""
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise ValueError("run names must be unique")
    timeout = env.run_timeout()
    runs_dir.mkdir(parents=True, exist_ok=True)
    if mpi_ranks > 0:
        return record(runs_dir, run_over_mpi(specs, runs_dir, mpi_ranks, timeout, log))
    results: dict[str, RunResult] = {}
    context = multiprocessing.get_context("spawn")  # a fresh interpreter per worker: no inherited threads
    with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, jobs), mp_context=context) as pool:
        futures = {pool.submit(_run_one, s, os.fspath(runs_dir), timeout): s for s in specs}
        done = 0
        for future in concurrent.futures.as_completed(futures):
            spec = futures[future]
            try:
                result = future.result()
            except Exception as e:  # noqa: BLE001 - a crashed worker fails its run only
                result = RunResult(spec, None, None, None, 0.0, 0.0, f"worker failed: {e!r}")
            results[spec.name] = result
            done += 1
            if not result.ok:
                log(f"run {spec.name} failed: {result.error}")
            elif done % 10 == 0 or done == len(specs):
                log(f"{done}/{len(specs)} runs done")
    return record(runs_dir, [results[n] for n in names])


INDEX_COLUMNS = ["run", "config", "overrides", "seed", "labels", "ok", "error"]


def _json(labels: Mapping[str, Any]) -> str:
    """Labels as strict JSON: an infinite ε (a non-DP twin) is the string "inf", not JSON's missing Infinity."""
    finite = {k: (str(v) if isinstance(v, float) and not math.isfinite(v) else v) for k, v in labels.items()}
    return json.dumps(finite, sort_keys=True, default=str, allow_nan=False)


def record(runs_dir: pathlib.Path, results: Sequence[RunResult]) -> list[RunResult]:
    """Appends ``results`` to ``runs_dir/index.csv``: each run's configuration (a file, relative to the
    repository when inside it, or the inline table as JSON), the overrides it was started with as the
    ``key=value`` words of ``asyncdp train --set``, quoted for a shell (a path may hold a space; the thread
    cap only where the run reads it), its seed,
    the experiment's labels, and whether it finished. Every REPORT's provenance points here; a mode that
    calls ``run_all`` twice (check-ins, the sweep) gets one table."""
    try:
        repo = env.repo_dir()
    except env.UsageError:  # the package installed with pip, used outside a clone
        repo = None

    def config_text(config) -> str:
        if isinstance(config, Mapping):
            return json.dumps(config, sort_keys=True, default=str)
        path = pathlib.Path(config).resolve()
        return str(path.relative_to(repo)) if repo is not None and path.is_relative_to(repo) else str(path)

    rows = pd.DataFrame([{"run": r.spec.name, "config": config_text(r.spec.config),
                          "overrides": shlex.join(f"{key}={cli_value(value)}" for key, value in
                                                  (r.spec.overrides if r.applied is None else r.applied).items()),
                          "seed": r.spec.seed, "labels": _json(r.spec.labels),
                          "ok": r.ok, "error": r.error or ""} for r in results], columns=INDEX_COLUMNS)
    index = runs_dir / "index.csv"
    if index.exists():
        rows = pd.concat([pd.read_csv(index, keep_default_na=False), rows], ignore_index=True)
    rows.to_csv(index, index=False)
    return list(results)


def cli_value(value) -> str:
    """A Python value as the TOML text of a CLI ``--set key=value``."""
    from ..training import _toml_value

    return _toml_value(value, "value")


def _set_args(overrides: Mapping[str, Any], skip: tuple[str, ...] = ()) -> list[str]:
    """The CLI's ``--set key=value`` words for OVERRIDES, leaving out keys that start with one of SKIP."""
    words = []
    for key, value in overrides.items():
        if not key.startswith(skip):
            words += ["--set", f"{key}={cli_value(value)}"]
    return words


def run_cli(binary, command: str, config, out_dir: pathlib.Path, overrides: Mapping[str, Any], *args: str,
            skip: tuple[str, ...] = ()) -> dict:
    """``asyncdp COMMAND --config CONFIG --set k=v ... ARGS --out OUT --quiet`` for the commands the module does
    not bind (reference-optimum, utility-graph); returns OUT/summary.json. Overrides whose key starts with
    one of ``skip`` are left out, and so are the thread cap's keys the run does not read (both commands
    refuse an override they do not read)."""
    import json

    cmd = [str(binary), command, "--config", str(config), "--out", str(out_dir), "--quiet", *args,
           *_set_args(_train_overrides(config, overrides), skip)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"asyncdp {command} exited {done.returncode}: {done.stderr.strip()[-400:]}")
    return json.loads((out_dir / "summary.json").read_text())


@functools.lru_cache(maxsize=None)
def objective_keys(binary: str) -> frozenset[str]:
    """The configuration keys ``asyncdp reference-optimum`` reads (its ``--objective-keys``): F depends on these
    alone, and the command refuses an override of any other."""
    done = subprocess.run([binary, "reference-optimum", "--objective-keys"], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"asyncdp reference-optimum --objective-keys exited {done.returncode}: "
                           f"{done.stderr.strip()[-400:]}")
    return frozenset(done.stdout.split())


def reference_optimum(binary, config, out_dir: pathlib.Path, overrides: Mapping[str, Any]) -> dict:
    """w* of the objective of a ``train`` run of CONFIG with OVERRIDES (``asyncdp reference-optimum``): the
    overrides F reads are passed on, the run's others (schedule, privacy, evaluation, outputs, threads) are
    not — they change the run, not its objective. Returns OUT/summary.json."""
    keys = objective_keys(str(binary))
    return run_cli(binary, "reference-optimum", config, out_dir, {k: v for k, v in overrides.items() if k in keys})


def resolved_config(binary, config, overrides: Mapping[str, Any]) -> dict:
    """The configuration a ``train`` run of CONFIG with OVERRIDES would resolve — data-derived defaults, σ
    calibrated to ``dp.epsilon`` — from ``asyncdp train --print-config`` (the run's config.resolved.toml),
    without training: what a calibration costs, not a run."""
    import tomllib

    cmd = [str(binary), "train", "--config", str(config), "--quiet", "--print-config",
           *_set_args(_train_overrides(config, overrides))]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"asyncdp train --print-config exited {done.returncode}: {done.stderr.strip()[-400:]}")
    return tomllib.loads(done.stdout)


def mpi_launcher() -> list[str]:
    """The launcher command: ASYNCDP_MPIRUN (e.g. ``srun`` inside a Slurm allocation), else mpirun with
    Open MPI's flags for running as root and for more ranks than cores (on a cluster the hostfile or the
    allocation decides placement)."""
    if os.environ.get("ASYNCDP_MPIRUN"):
        return os.environ["ASYNCDP_MPIRUN"].split()
    words = ["mpirun"]
    try:
        version = subprocess.run(["mpirun", "--version"], capture_output=True, text=True).stdout
    except OSError:
        return words
    if "Open MPI" in version:
        if os.geteuid() == 0:
            words.append("--allow-run-as-root")
        words.append("--oversubscribe")
    return words


def run_over_mpi(specs: Sequence[RunSpec], runs_dir: pathlib.Path, ranks: int, timeout: float, log) -> list[RunResult]:
    """The embarrassingly parallel matrix on a cluster: ``ranks`` copies of ``asyncdp.experiments.mpi_worker``
    under the MPI launcher; rank r runs specs r, r + P, ... one after another and leaves each result beside
    its run directory (a cluster's shared file system). Only the launcher is MPI: the workers exchange no
    messages, and every run keeps its own seed and folder, so results do not depend on P. A run whose
    result is missing (a rank killed, a bad host file) counts as failed."""
    queue = runs_dir / ".mpi_queue.pkl"
    queue.write_bytes(pickle.dumps(list(specs)))
    cmd = [*mpi_launcher(), "-np", str(ranks), "/usr/bin/env", f"PYTHONPATH={os.environ.get('PYTHONPATH', '')}",
           f"ASYNCDP_RUN_TIMEOUT={timeout:g}", sys.executable, "-m", "asyncdp.experiments.mpi_worker", str(queue),
           str(runs_dir)]
    log(f"mpi: {len(specs)} run(s) over {ranks} rank(s): {' '.join(cmd[:cmd.index('/usr/bin/env')])}")
    done = subprocess.run(cmd)
    results = []
    for spec in specs:
        path = runs_dir / f".result-{spec.name}.pkl"
        if path.exists():
            results.append(pickle.loads(path.read_bytes()))
            path.unlink()
        else:
            results.append(RunResult(spec, None, None, None, 0.0, 0.0,
                                     f"no result from its MPI rank (launcher exit {done.returncode})"))
    queue.unlink()
    return results


def mpi_rank() -> tuple[int, int]:
    """(rank, size) from the launcher's environment (Open MPI, MPICH/Hydra, PMIx or Slurm)."""
    e = os.environ
    rank = e.get("OMPI_COMM_WORLD_RANK") or e.get("PMIX_RANK") or e.get("PMI_RANK") or e.get("SLURM_PROCID")
    size = e.get("OMPI_COMM_WORLD_SIZE") or e.get("PMI_SIZE") or e.get("SLURM_NTASKS")
    if rank is None or size is None:
        raise RuntimeError("no MPI rank in the environment (start it through run_experiments.sh --mpi P)")
    return int(rank), int(size)


def child_cpu_seconds() -> float:
    """CPU seconds of finished worker processes (user + system), for the REPORT's run matrix."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def failed_section(results: Sequence[RunResult]) -> str:
    failed = [r for r in results if not r.ok]
    if not failed:
        return ""
    lines = ["## Failed runs", "", "These runs did not finish; every table and verdict above leaves them out.", ""]
    lines += [f"* `runs/{r.spec.name}`: {r.error}" for r in failed]
    return "\n".join(lines) + "\n"
