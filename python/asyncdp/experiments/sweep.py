"""``run_experiments.sh sweep --config FILE.toml --sample-sizes LIST --epsilons LIST [--seeds N] [--jobs N | --mpi P]``:
the grid the user asks for, over seeds, with intervals and verdicts from paired differences.

For every seed, sample size s and target ε: one DP run in which asyncdp derives σ from ε (``dp.epsilon`` =
ε, ``dp.sigma = 0``: calibrated by the configured accountant, which also halts clients at the budget), plus
one non-private twin per (s, seed) (``dp.enabled = false``: clipped, no noise). The sample size ``max``
asks the paper's DP calculator (``asyncdp.calc``, §6.2) for (σ, s_max) at each ε; such runs use the
calculator's σ and keep ε as the budget. Runs that differ only in s, in ε or in DP share their seeds, so
every comparison is a paired difference.
"""

from __future__ import annotations

import math
import pathlib
import re
import time
import tomllib

import pandas as pd

from .. import calc
from . import env, plots, report
from .runner import RunSpec, child_cpu_seconds, failed_section, one_thread, run_all
from .stats import (ACCURACY, FAILS, HOLDS, INCONCLUSIVE, family_false_alarm, mean_interval, paired_by_seed,
                    verdict_above)

TINY = {"data.rows_per_client": 500, "schedule.iterations": 0, "schedule.rounds": 0, "schedule.epochs": 5,
        "data.eval_rows": 1000, "eval.points": 4}
_NUMBER = re.compile(r"^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$")


def _list(text: str | None, flag: str, pattern: re.Pattern) -> list[str]:
    if not text:
        raise env.UsageError(f"sweep needs {flag}")
    items = text.split(",")
    for item in items:
        if not pattern.match(item):
            raise env.UsageError(f"{flag}: '{item}' is not valid")
    return items


def _majority(config: dict, repo: pathlib.Path) -> tuple[float, str]:
    """The majority-class rate of the runs' test labels (the training labels when the test set is a held-out
    split of them), from the resolved configuration."""
    data = config["data"]
    fmt = data.get("format", "auto")
    test = data.get("test") or ""
    path = pathlib.Path(test or data["train"])
    if not path.is_absolute():
        path = repo / path
    if fmt == "auto":
        fmt = "idx" if "idx3" in path.name else "libsvm"
    rate = env.majority_rate(env.DataSet(path.name, path, path, "", fmt), int(data.get("eval_rows") or 0))
    return rate, ("test labels" if test else "training labels (the test set is a held-out split)")


def main(args) -> int:
    if args.config is None:
        raise env.UsageError("sweep needs --config FILE.toml")
    config = pathlib.Path(args.config).resolve()
    if not config.is_file():
        raise env.UsageError(f"--config {args.config}: no such file")
    try:
        base = tomllib.loads(config.read_text())
    except tomllib.TOMLDecodeError as e:
        raise env.UsageError(f"{args.config}: {e}") from None
    sizes = _list(args.sample_sizes, "--sample-sizes (e.g. 1,5,10,26 or 1,5,max)", re.compile(r"^([1-9][0-9]*|max)$"))
    epsilons = [float(e) for e in _list(args.epsilons, "--epsilons (e.g. 0.05,0.1,0.5,1)", _NUMBER)]
    model = base.get("model", {}).get("kind", "")
    seeds_n = args.seeds or (3 if model in ("lenet", "alexnet", "cnn") else 5)
    base_seed = int(base.get("seed", 1))
    seeds = [base_seed + j for j in range(seeds_n)]
    out, log, repo = args.output, args.log, env.repo_dir()
    scale = TINY if args.scale == "tiny" else {}
    threads = one_thread((args.jobs > 1 or args.mpi))
    common = {**scale, **threads}
    start = time.monotonic()
    log(f"sweep: {len(sizes)} sample sizes x {len(epsilons)} epsilons (+ non-DP) x {seeds_n} seeds of {config.name}")

    specs = []
    for seed in seeds:
        for s in sizes:
            if s == "max":
                continue
            specs.append(RunSpec(f"nondp_s{s}_seed{seed}", config, {**common, "dp.enabled": False,
                                 "schedule.sample_size": int(s)}, seed, {"kind": "non-DP", "s": int(s), "eps": math.inf}))
    first = run_all(specs, out.path("runs"), args.jobs, log, args.mpi)
    probe = next((r for r in first if r.ok), None)
    if probe is None:
        probe = run_all([RunSpec(f"probe_seed{base_seed}", config, {**common, "dp.enabled": False}, base_seed,
                                 {"kind": "probe", "s": 0, "eps": math.inf})], out.path("runs"), 1, log)[0]
        if not probe.ok:
            raise env.UsageError(f"asyncdp cannot use {args.config}: {probe.error}")
    resolved = tomllib.loads(probe.summary["config"])
    smax = {}
    if "max" in sizes:
        n_c = int(probe.summary["records_per_client"])
        # K per client: schedule.iterations, else epochs × N_c; a plan of schedule.rounds (whose file leaves
        # iterations and epochs unread, so config.resolved.toml has them as comments) plans its own.
        schedule = resolved["schedule"]
        k = (int(schedule.get("iterations", 0)) or round(float(schedule.get("epochs", 0)) * n_c)
             or max(probe.summary["planned_grads_per_client"]))
        delta = float(probe.summary["delta"]) if probe.summary.get("delta") else 1.0 / n_c
        for e in epsilons:
            r = calc(N=n_c, delta=delta, K=k, epsilon=e, mode="paper")
            if r.s_max and r.s_max >= 1:
                smax[e] = (int(r.s_max), float(r.sigma))
                log(f"sweep: epsilon {e:g} -> s_max {r.s_max}, sigma {r.sigma:.6g} (asyncdp calc, N = {n_c}, K = {k})")
            else:
                log(f"sweep: no admissible s_max for epsilon {e:g} (N = {n_c}, K = {k}); skipped")
    specs = []
    for seed in seeds:
        for s in sizes:
            for e in epsilons:
                if s == "max":
                    if e not in smax:
                        continue
                    specs.append(RunSpec(f"dp_smax_eps{e:g}_seed{seed}", config,
                                         {**common, "dp.enabled": True, "schedule.sample_size": smax[e][0],
                                          "dp.sigma": smax[e][1], "dp.epsilon": e}, seed,
                                         {"kind": "s_max", "s": smax[e][0], "eps": e}))
                else:
                    specs.append(RunSpec(f"dp_s{s}_eps{e:g}_seed{seed}", config,
                                         {**common, "dp.enabled": True, "schedule.sample_size": int(s),
                                          "dp.sigma": 0, "dp.epsilon": e}, seed, {"kind": "DP", "s": int(s), "eps": e}))
    second = run_all(specs, out.path("runs"), args.jobs, log, args.mpi)
    results = first + second
    run_seconds = time.monotonic() - start

    rows = []
    for r in results:
        lab = r.spec.labels
        row = {"kind": lab["kind"], "sample_size": lab["s"], "epsilon_target": lab["eps"], "seed": r.spec.seed,
               "run": r.spec.name, "ok": r.ok, "error": r.error or ""}
        if r.ok:
            eps = r.summary.get("epsilon") or {}
            row.update({"sigma": float(r.summary["sigma"]), "test_accuracy": _num(r.summary.get("test_accuracy")),
                        **{f"eps_{a}": _num(eps.get(a), math.inf) for a in ("rdp", "pld", "gdp", "proactive")},
                        "wall_seconds": float(r.summary["wall_seconds"]), "cpu_seconds": r.cpu_seconds})
        rows.append(row)
    runs = pd.DataFrame(rows)
    runs.to_csv(out.path("sweep_runs.csv"), index=False)
    ok = runs[runs["ok"]]
    grid = _aggregate(ok)
    grid.to_csv(out.path("sweep.csv"), index=False)
    majority, majority_of = _majority(resolved, repo)
    checks = _checks(ok, grid, majority, args.scale)
    pd.DataFrame(checks, columns=["claim", "measured", "verdict"]).to_csv(out.path("checks.csv"), index=False)
    note = "TINY SCALE: a smoke test of the pipeline, not a result" if args.scale == "tiny" else ""
    figures = _figures(out, grid, ok, majority, note)
    cpu = child_cpu_seconds()
    how = (f"spread over {args.mpi} MPI ranks with `{' '.join(_launcher())}`, one run per rank at a time"
           if args.mpi else f"{args.jobs} run(s) at a time on this machine")
    lines = [f"# Sweep: {config.stem}", "", report.provenance(args.command, args.scale, args.jobs), ""]
    if args.scale == "tiny":
        lines += ["> **Tiny scale**: seconds-long runs that test the pipeline; no verdict is drawn.", ""]
    lines += [
        f"**Run matrix.** {len(runs)} runs: {len([s for s in sizes if s != 'max'])} sample sizes × (non-DP + "
        f"{len(epsilons)} ε) {'+ s_max per ε ' if 'max' in sizes else ''}× {seeds_n} seeds (seeds {seeds[0]}–"
        f"{seeds[-1]}). Wall time of the runs **{run_seconds:.0f} s** ({how}), **{cpu:.0f} CPU s** in this "
        "machine's worker processes.",
        "",
        f"Base configuration: `{_rel(config, repo)}` (its data, model, K, clients and accountant); per run only "
        "`schedule.sample_size`, `dp.*` and `seed` change (`sweep_runs.csv`, and each run's "
        "`config.resolved.toml`). DP runs set `dp.epsilon` = the target and `dp.sigma = 0`, so asyncdp "
        "calibrates σ with the configured accountant and halts a client before it would exceed the budget; "
        "`s_max` runs take σ and s from the paper's calculator. Non-DP twins: `dp.enabled = false` (clipped, no "
        "noise). ε is per client (δ of the run); the ε columns are the largest any seed reported.",
        "",
        f"Baseline: the majority-class rate of the {majority_of}, **{majority:.4f}**. A run group at or below it "
        "gets no verdict.",
        "",
        f"## Results (mean and 95% interval over {seeds_n} seeds)",
        "",
        report.table(["kind", "s", "target ε", "n", "σ", "test accuracy [95%]", "ε RDP", "ε PLD", "ε GDP", "ε (6)",
                      "wall s"],
                     [[r["kind"], r["sample_size"], _e(r["epsilon_target"]), r["n"], f"{r['sigma']:.5g}",
                       report.interval_cell(r), _e(r["eps_rdp"]), _e(r["eps_pld"]), _e(r["eps_gdp"]), _e(r["eps_proactive"]),
                       f"{r['wall_seconds']:.1f}"] for r in grid.to_dict("records")]),
        "",
        report.image("accuracy vs sample size", figures["accuracy_vs_sample_size"]),
        "",
        report.image("accuracy vs epsilon", figures["accuracy_vs_epsilon"]),
        "",
        "## Checks",
        "",
        "Each row compares two run groups that share their seeds: the interval is the paired difference of "
        "test accuracy. **holds** when it lies above 0, **does not hold** when below, **inconclusive** when it "
        "contains 0.",
        "",
        report.table(["claim", "paired difference [95%]", "verdict"],
                     [[c, m, report.verdict(v)] for c, m, v in checks]),
        "",
    ]
    decided = [c for c in checks if c[2] in (HOLDS, FAILS, INCONCLUSIVE)]
    counts = {v: sum(1 for c in decided if c[2] == v) for v in (HOLDS, FAILS, INCONCLUSIVE)}
    lines += [f"Of {len(checks)} comparisons: holds {counts[HOLDS]}, does not hold {counts[FAILS]}, inconclusive "
              f"{counts[INCONCLUSIVE]}, no verdict {len(checks) - len(decided)}. With {len(decided)} verdicts at 95%, "
              f"the chance of at least one decided wrongly by chance is up to "
              f"{family_false_alarm(len(decided)):.0%}.", "",
              "Files: `sweep.csv` (aggregated), `sweep_runs.csv` (every run), `checks.csv`, `plots/*.csv` (each "
              "figure's table), `runs/<run>/` (configuration, seed, curves).", "",
              failed_section(results)]
    out.write_text("REPORT.md", "\n".join(lines))
    log(f"sweep: {len(results)} runs in {run_seconds:.1f} s")
    return 0 if runs["ok"].all() else 1


def _launcher():
    from .runner import mpi_launcher

    return mpi_launcher()


def _rel(path: pathlib.Path, repo: pathlib.Path) -> str:
    try:
        return str(path.relative_to(repo))
    except ValueError:
        return str(path)


def _num(value, default=math.nan) -> float:
    return default if value is None else float(value)


def _e(x) -> str:
    return "∞" if isinstance(x, float) and math.isinf(x) else ("n/a" if x is None or x != x else f"{x:.4g}")




def _aggregate(ok: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (kind, s, e), g in ok.groupby(["kind", "sample_size", "epsilon_target"], sort=True):
        iv = mean_interval(g["test_accuracy"], bounds=ACCURACY)
        rows.append({"kind": kind, "sample_size": s, "epsilon_target": e, "n": len(g), "sigma": g["sigma"].mean(),
                     "accuracy": iv.mean, "accuracy_low": iv.low, "accuracy_high": iv.high,
                     "eps_rdp": g["eps_rdp"].max(), "eps_pld": g["eps_pld"].max(), "eps_gdp": g["eps_gdp"].max(),
                     "eps_proactive": g["eps_proactive"].max(), "wall_seconds": g["wall_seconds"].mean()})
    return pd.DataFrame(rows)


def _paired(a: pd.DataFrame, b: pd.DataFrame):
    return paired_by_seed(a, b, "test_accuracy")


def _checks(ok: pd.DataFrame, grid: pd.DataFrame, majority: float, scale: str) -> list[tuple[str, str, str]]:
    """Paired comparisons of neighbouring grid points: larger s (same ε), larger ε (same s), the non-private
    twin above DP (same s)."""
    dp = ok[ok["kind"] == "DP"]
    above = {(r["kind"], r["sample_size"], r["epsilon_target"]): r["accuracy_low"] > majority
             for r in grid.to_dict("records")}

    def decide(diff, keys):
        if scale == "tiny":
            return "no verdict (tiny scale)"
        if not all(above.get(k, False) for k in keys):
            return "no verdict: a group is not above the majority class"
        return verdict_above(diff, 0.0)

    out = []
    for e, g in dp.groupby("epsilon_target"):
        ss = sorted(g["sample_size"].unique())
        for s1, s2 in zip(ss, ss[1:]):
            d = _paired(g[g["sample_size"] == s2], g[g["sample_size"] == s1])
            out.append((f"larger s gives better accuracy: ε = {e:g}, s = {s2} vs {s1}", d.text_n(),
                        decide(d, [("DP", s1, e), ("DP", s2, e)])))
    for s, g in dp.groupby("sample_size"):
        es = sorted(g["epsilon_target"].unique())
        for e1, e2 in zip(es, es[1:]):
            d = _paired(g[g["epsilon_target"] == e2], g[g["epsilon_target"] == e1])
            out.append((f"larger eps gives better accuracy: s = {s}, ε = {e2:g} vs {e1:g}", d.text_n(),
                        decide(d, [("DP", s, e1), ("DP", s, e2)])))
    twins = ok[ok["kind"] == "non-DP"]
    for (s, e), g in dp.groupby(["sample_size", "epsilon_target"]):
        t = twins[twins["sample_size"] == s]
        if t.empty:
            continue
        d = _paired(t, g)
        out.append((f"non-private is the ceiling: s = {s}, ε = {e:g} (non-DP − DP)", d.text_n(),
                    decide(d, [("DP", s, e)])))
    return out


def _figures(out, grid: pd.DataFrame, ok: pd.DataFrame, majority: float, note: str) -> dict:
    made = {}
    rows = []
    dp = ok[ok["kind"] != "non-DP"]
    for e in sorted(dp["epsilon_target"].unique()):
        g = dp[(dp["epsilon_target"] == e) & (dp["kind"] == "DP")]
        rows += _points("accuracy vs s", f"ε = {e:g}", g, "sample_size")
        m = dp[(dp["epsilon_target"] == e) & (dp["kind"] == "s_max")]
        rows += _points("accuracy vs s", f"s_max (calc), ε = {e:g}", m, "sample_size")
    rows += _points("accuracy vs s", "non-DP twin", ok[ok["kind"] == "non-DP"], "sample_size")
    rows.append(plots.baseline_row("accuracy vs s", "baseline: majority class", majority))
    made["accuracy_vs_sample_size"] = plots.save(out, plots.LineFigure(
        "accuracy_vs_sample_size", "Final test accuracy vs sample size s (mean and 95% interval over seeds)",
        "sample size s", "test accuracy", logx=True, note=note, bounds=(0.0, 1.0)), plots.table(rows))
    rows = []
    for s in sorted(dp.loc[dp["kind"] == "DP", "sample_size"].unique()):
        rows += _points("accuracy vs ε", f"s = {s}", dp[(dp["kind"] == "DP") & (dp["sample_size"] == s)],
                        "epsilon_target")
    rows += _points("accuracy vs ε", "s = s_max (calc)", dp[dp["kind"] == "s_max"], "epsilon_target")
    for s in sorted(ok.loc[ok["kind"] == "non-DP", "sample_size"].unique()):
        t = ok[(ok["kind"] == "non-DP") & (ok["sample_size"] == s)]
        rows.append(plots.baseline_row("accuracy vs ε", f"non-DP twin, s = {s}", float(t["test_accuracy"].mean())))
    rows.append(plots.baseline_row("accuracy vs ε", "baseline: majority class", majority))
    made["accuracy_vs_epsilon"] = plots.save(out, plots.LineFigure(
        "accuracy_vs_epsilon", "Final test accuracy vs target ε (mean and 95% interval over seeds)",
        "target ε (σ derived by asyncdp)", "test accuracy", logx=True, note=note, bounds=(0.0, 1.0)),
        plots.table(rows))
    return made


def _points(panel: str, series: str, runs: pd.DataFrame, x: str) -> list[dict]:
    if runs.empty:
        return []
    curves = [(g[x].to_numpy(float), g["test_accuracy"].to_numpy(float)) for _, g in runs.groupby("seed")]
    return plots.curve_rows(panel, series, curves)

