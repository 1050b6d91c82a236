#!/usr/bin/env python3
"""Python module overhead against the CLI, measured side by side (BENCHMARKS.md, "Python module").

    PYTHONPATH=build/release/python python3 python/benchmarks/overhead.py [--repeats 15]

Interleaves the two sides so both see the same machine load, and prints medians:
  * account: `asyncdp account --q 0.01 --sigma 1 --steps 100000 --delta 1e-5 --accountant pld` (whole
    process wall) against the asyncdp.account(...) call with the same arguments;
  * train: `asyncdp train --quiet --config experiments/table3_strongly_convex.toml --out DIR` (whole
    process wall) against the asyncdp.train(config, out=DIR) call; and the run's own summary.wall_seconds
    (build the experiment + run + summary) on each side, which excludes process start-up.
Interpreter start-up and `import asyncdp` are reported separately (paid once per session).
"""

import argparse
import json
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[2]


CPU = {"cli": [], "py": []}


def cpu_seconds(who):
    usage = resource.getrusage(resource.RUSAGE_CHILDREN if who == "cli" else resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(fn, who):
    """Wall seconds of fn() and its value; its CPU seconds (user + sys, all threads) go to CPU[who]."""
    cpu = cpu_seconds(who)
    start = time.perf_counter()
    value = fn()
    wall = time.perf_counter() - start
    CPU[who].append(cpu_seconds(who) - cpu)
    return wall, value


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--binary", default=str(REPO / "build" / "release" / "asyncdp"))
    args = parser.parse_args()

    start_import = time.perf_counter()
    import asyncdp
    import numpy  # noqa: F401  (train needs it; counted with the import)
    import_seconds = time.perf_counter() - start_import

    account_args = ["account", "--q", "0.01", "--sigma", "1", "--steps", "100000", "--delta", "1e-5",
                    "--accountant", "pld"]
    cli, py = [], []
    for _ in range(args.repeats):
        seconds, out = timed(lambda: subprocess.run([args.binary, *account_args], check=True,
                                                    capture_output=True, text=True).stdout, "cli")
        cli.append(seconds)
        cli_json = json.loads(out)
        seconds, result = timed(lambda: asyncdp.account(q=0.01, sigma=1.0, steps=100000, delta=1e-5), "py")
        py.append(seconds)
        assert result.to_dict() == cli_json
    report("account T=1e5 PLD (wall: whole CLI process vs Python call)", cli, py)
    report("account T=1e5 PLD (CPU user+sys)", CPU["cli"], CPU["py"])
    CPU["cli"].clear()
    CPU["py"].clear()

    config = REPO / "experiments" / "table3_strongly_convex.toml"
    cli, py, cli_run, py_run = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(REPO)  # the config names its data relative to the repository root
        for i in range(args.repeats):
            out = pathlib.Path(tmp) / f"cli{i}"
            seconds, _ = timed(lambda: subprocess.run([args.binary, "train", "--quiet", "--config", str(config),
                                                       "--out", str(out)], check=True, capture_output=True), "cli")
            cli.append(seconds)
            cli_run.append(json.loads((out / "summary.json").read_text())["wall_seconds"])
            seconds, run = timed(lambda: asyncdp.train(config, out=pathlib.Path(tmp) / f"py{i}"), "py")
            py.append(seconds)
            py_run.append(run.summary["wall_seconds"])
    report("train Table 3 (whole CLI process vs Python call)", cli, py)
    report("train Table 3 (summary.wall_seconds on each side)", cli_run, py_run)
    report("train Table 3 (CPU user+sys)", CPU["cli"], CPU["py"])
    print(f"python3 start-up + import asyncdp, numpy: {import_seconds * 1e3:.1f} ms (once per session)")


def report(name, cli, py):
    c, p = statistics.median(cli), statistics.median(py)
    print(f"{name}: CLI median {c * 1e3:.1f} ms, Python median {p * 1e3:.1f} ms, "
          f"Python/CLI = {p / c:.3f} (n = {len(cli)}; CLI min {min(cli) * 1e3:.1f}, Python min {min(py) * 1e3:.1f})")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
