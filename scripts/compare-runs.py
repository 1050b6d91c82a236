#!/usr/bin/env python3
"""Behaviour preservation across a change: run every configuration in experiments/ at a small size with two
asyncdp binaries (before and after) on the same machine, and compare summary.json, metrics.csv and
clients.csv, timing fields aside.

    scripts/compare-runs.py BEFORE_BINARY AFTER_BINARY [--out DIR] [--only NAME ...]

Each configuration is shrunk with overrides that keep its mechanism (fewer rows per client, fewer evaluation
points, a smaller check-in population); an override the configuration does not read (the tool refuses
unread keys) is dropped and the run retried. Exit 0 when every run is identical, 1 when something differs
(each difference is listed: explain it in the change's notes), 2 on bad usage.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import pathlib
import re
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent
# Wall-clock measurements and build identity: never equal between two runs.
TIMING = re.compile(r"(seconds|_per_second|wall|overhead|asyncdp_version|git|build|elapsed|compute_threads|cpu_share)", re.I)
SHRINK = [("data.rows_per_client", 300), ("data.eval_rows", 400), ("eval.points", 2), ("clients.count", 2000),
          ("checkin.steps", 2000), ("checkin.windows", 1)]


def run(binary: str, config: pathlib.Path, out: pathlib.Path) -> tuple[int, str, list[str]]:
    """Runs `binary train` on the shrunk config; returns (exit code, stderr tail, the overrides used)."""
    checkins = "check_in" in config.read_text()
    shrink = [(k, v) for k, v in SHRINK if checkins or not (k == "clients.count" or k.startswith("checkin."))]
    for _ in range(len(shrink) + 3):
        args = [binary, "train", "--config", str(config), "--out", str(out), "--set", "seed=3"]
        for key, value in shrink:
            args += ["--set", f"{key}={value}"]
        done = subprocess.run(args, capture_output=True, text=True, cwd=REPO, timeout=600)
        refused = re.search(r"error: ([a-z_.]+): is set to .* but this run does not read it", done.stderr, re.I)
        if done.returncode == 2 and refused and any(k == refused.group(1) for k, _ in shrink):
            shrink = [(k, v) for k, v in shrink if k != refused.group(1)]
            continue
        # The cap would leave fewer records than the configuration samples: keep the clients' data.
        if done.returncode == 2 and "a client holds only N_c" in done.stderr and ("data.rows_per_client", 300) in shrink:
            shrink.remove(("data.rows_per_client", 300))
            continue
        # Configurations whose data run_experiments.sh supplies: the shipped a9a.
        if done.returncode == 2 and "cannot open" in done.stderr and not any(k == "data.train" for k, _ in shrink):
            shrink += [("data.train", "datasets/libsvm/a9a.gz"), ("data.test", "datasets/libsvm/a9a.t.gz")]
            continue
        return done.returncode, done.stderr[-400:], [f"{k}={v}" for k, v in shrink]
    return 2, "could not shrink", []


def diff_json(a, b, path="") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(set(a) | set(b)):
            if TIMING.search(key):
                continue
            if key not in a or key not in b:
                out.append(f"{path}.{key}: only in {'after' if key not in a else 'before'}")
            else:
                out += diff_json(a[key], b[key], f"{path}.{key}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} vs {len(b)} entries"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in diff_json(x, y, f"{path}[{i}]")]
    if isinstance(a, float) and isinstance(b, float) and (a == b or (math.isnan(a) and math.isnan(b))):
        return []
    return [] if a == b else [f"{path}: {a!r} -> {b!r}"]


def diff_csv(a: pathlib.Path, b: pathlib.Path) -> list[str]:
    if not a.exists() or not b.exists():
        return [] if a.exists() == b.exists() else [f"{a.name}: only in {'after' if b.exists() else 'before'}"]
    ra, rb = list(csv.DictReader(a.open())), list(csv.DictReader(b.open()))
    if len(ra) != len(rb):
        return [f"{a.name}: {len(ra)} vs {len(rb)} rows"]
    out = []
    for i, (x, y) in enumerate(zip(ra, rb)):
        for key in sorted(set(x) | set(y)):
            if not TIMING.search(key) and x.get(key) != y.get(key):
                out.append(f"{a.name} row {i} {key}: {x.get(key)} -> {y.get(key)}")
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--out", default="/tmp/asyncdp-compare-runs")
    p.add_argument("--only", nargs="*", help="configuration names (stems) to run")
    a = p.parse_args()
    configs = sorted((REPO / "experiments").glob("*.toml"))
    if a.only:
        configs = [c for c in configs if c.stem in a.only]
    root = pathlib.Path(a.out)
    identical, differing = 0, 0
    for config in configs:
        results = {}
        for side, binary in (("before", a.before), ("after", a.after)):
            out = root / side / config.stem
            if out.exists():
                subprocess.run(["rm", "-rf", str(out)], check=True)
            results[side] = run(binary, config, out)
        (rc_a, err_a, used), (rc_b, err_b, _) = results["before"], results["after"]
        diffs = []
        if rc_a != rc_b:
            diffs.append(f"exit code {rc_a} -> {rc_b} ({err_b.strip().splitlines()[-1] if err_b.strip() else ''})")
        elif rc_a == 0:
            before, after = root / "before" / config.stem, root / "after" / config.stem
            diffs += diff_json(json.loads((before / "summary.json").read_text()),
                               json.loads((after / "summary.json").read_text()), "summary")
            diffs += diff_csv(before / "metrics.csv", after / "metrics.csv")
            diffs += diff_csv(before / "clients.csv", after / "clients.csv")
        status = "identical" if not diffs else f"{len(diffs)} differences"
        note = "" if rc_a == 0 else f" (both exit {rc_a}: {err_a.strip().splitlines()[-1] if err_a.strip() else ''})"
        print(f"{config.stem}: {status}{note}  [{' '.join(used)}]")
        for d in diffs[:12]:
            print(f"    {d}")
        identical += not diffs
        differing += bool(diffs)
    print(f"{identical} identical, {differing} differing, of {len(configs)} configurations")
    return 0 if differing == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
