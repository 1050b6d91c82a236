"""``run_experiments.sh paper [--full] [--libsvm PATH] [--images DIR]``: the Proactive-DP paper's experiments
beside its printed numbers (Section 3.3, Appendices D–E; docs/theory.md §6, §9), over seeds:

(a) utility graphs, Figs 1a–3a (``asyncdp utility-graph``);
(b) accuracy vs gradient computations for the constant sample sizes of Tables 3–4 (Figs 1b–3b, 7–9);
(c) accuracy for the privacy budgets of Tables 6–7, replaying the printed (σ, s) (Figs 1c–3c, 11–13);
(d) Tables 9–11 from the calculator and ε of every printed setting (paper_tables.py);
(e) convergence of the convex runs: F(ŵ_t) − F(w*) against the exact optimum.

CIFAR-10 (Tables 5, 8, Figs 10, 14) is not available here: its settings are only accounted for. LeNet's
rows above s = 543 run at the step η0·543/s (``schedule.step_cap_sample_size``, docs/theory.md §2); the
first-round probes and an uncapped pair at the largest s are the evidence, run every time.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import math
import time

import numpy as np
import pandas as pd

from . import env, paper_report, paper_tables
from .runner import RunSpec, child_cpu_seconds, one_thread, reference_optimum, run_all, run_cli
from .stats import ACCURACY, loglog_slope, mean_interval

STEP_CAP = 543  # LeNet: rounds above s = 543 run at η0·543/s (the first-round probes say why)


@dataclasses.dataclass(frozen=True)
class Scale:
    name: str
    convex_k: int
    convex_points: int
    lenet_k: int
    lenet_rows: int
    lenet_eval_rows: int
    lenet_points: int
    lenet_train_rows: int
    ug_convex: tuple[str, str, int]   # clips, sigmas, draws
    ug_lenet: tuple[str, str, int]
    all_rows: bool                    # False: the first two and the last row of each table
    convex_seeds: int
    lenet_seeds: int


SCALES = {
    "default": Scale("default", 50000, 25, 360000, 0, 2000, 20, 1000, ("0.025,0.05,0.075,0.1", "0:30:2", 20),
                     ("0.025,0.05,0.1", "0,1,2,3,4,6,8,12,16,20,24", 5), True, 5, 3),
    "full": Scale("full", 50000, 25, 360000, 0, 0, 20, 1000, ("0.025,0.05,0.075,0.1", "0:30:2", 20),
                  ("0.025,0.05,0.1", "0:24:1", 20), True, 5, 3),
    # LeNet rows >= the largest s of the tables (2159): a client cannot sample more records than it holds
    "tiny": Scale("tiny", 3000, 5, 600, 2200, 200, 3, 100, ("0.05,0.1", "0,10,20", 2), ("0.025,0.1", "0,12,24", 2),
                  False, 2, 2),
}
PROBLEMS = {
    "strongly_convex": {"config": "table3_strongly_convex.toml", "sizes": 3, "budgets": 6, "label": "strongly convex"},
    "plain_convex": {"config": "table3_plain_convex.toml", "sizes": 3, "budgets": 6, "label": "plain convex"},
    "lenet": {"config": "table4_lenet.toml", "sizes": 4, "budgets": 7, "label": "non-convex LeNet-5"},
}


def rows_in_use(settings: pd.DataFrame, scale: Scale) -> pd.DataFrame:
    if scale.all_rows:
        return settings
    keep = []
    for _, g in settings.groupby("table", sort=False):
        idx = list(g.index)
        keep += idx[:2] + ([idx[-1]] if len(idx) > 2 else [])
    return settings.loc[keep]


@dataclasses.dataclass
class Context:
    scale: Scale
    settings: pd.DataFrame      # rows in use
    libsvm: env.DataSet
    images: env.DataSet
    majority_convex: float
    majority_lenet: float


def _overrides(problem: str, ctx: Context, threads: dict) -> dict:
    sc = ctx.scale
    if problem == "lenet":
        return {**ctx.images.overrides(), "schedule.iterations": sc.lenet_k, "data.rows_per_client": sc.lenet_rows,
                "data.eval_rows": sc.lenet_eval_rows, "eval.points": sc.lenet_points,
                "eval.train_rows": sc.lenet_train_rows, "schedule.step_cap_sample_size": STEP_CAP,
                "output.diagnostics": True, **threads}
    # F(ŵ) over every training row, for the suboptimality curves
    return {**ctx.libsvm.overrides(), "schedule.iterations": sc.convex_k, "eval.points": sc.convex_points,
            "eval.train_rows": 2147483647, "output.diagnostics": True, **threads}


def _table_rows(ctx: Context, table: int) -> pd.DataFrame:
    return ctx.settings[ctx.settings["table"] == table]


def _utility_graph(binary, out_dir, config, overrides, clips, sigmas, draws) -> dict:
    summary = run_cli(binary, "utility-graph", config, out_dir, overrides, "--clips", clips, "--sigmas", sigmas,
                      "--draws", str(draws), skip=("eval.points", "eval.train_rows", "output."))
    return {"summary": summary, "table": pd.read_csv(out_dir / "utility_graph.csv")}


def main(args) -> int:
    out, log, repo = args.output, args.log, env.repo_dir()
    sc = SCALES[args.scale]
    binary = env.asyncdp_binary()
    libsvm = env.resolve_libsvm(args.libsvm)
    images = env.resolve_images(args.images)
    settings = rows_in_use(paper_tables.read_settings(repo), sc)
    ctx = Context(sc, settings, libsvm, images, env.majority_rate(libsvm),
                  env.majority_rate(images, sc.lenet_eval_rows))
    start = time.monotonic()
    threads = one_thread(args.jobs > 1)
    convex_seeds = list(range(1, (args.seeds or sc.convex_seeds) + 1))
    lenet_seeds = list(range(1, (args.seeds or sc.lenet_seeds) + 1))

    log("paper: (d) Tables 9-11 and the accountants' epsilon for every printed setting")
    comparison, notes = paper_tables.tables_9_11(paper_tables.read_tables_9_11(repo))
    comparison.to_csv(out.path("tables_9_11.csv"), index=False)
    notes.to_csv(out.path("tables_9_11_notes.csv"), index=False)
    printed = paper_tables.printed_settings(settings)
    printed.to_csv(out.path("printed_settings_epsilon.csv"), index=False)

    log("paper: (a) utility graphs and the reference optima of the convex objectives")
    failures = []
    utility, refs = {}, {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        jobs = {}
        for problem, p in PROBLEMS.items():
            ug = sc.ug_lenet if problem == "lenet" else sc.ug_convex
            jobs[("ug", problem, 0)] = pool.submit(_utility_graph, binary, out.path(f"utility/{problem}"),
                                                   repo / "experiments" / p["config"],
                                                   _overrides(problem, ctx, threads), *ug)
            if problem != "lenet":
                for seed in convex_seeds:
                    jobs[("ref", problem, seed)] = pool.submit(
                        reference_optimum, binary, repo / "experiments" / p["config"],
                        out.path(f"reference/{problem}_s{seed}"), {**_overrides(problem, ctx, threads), "seed": seed})
        for (kind, problem, seed), future in jobs.items():
            try:
                value = future.result()
            except RuntimeError as e:
                failures.append(f"{kind} {problem} seed {seed}: {e}")
                continue
            if kind == "ug":
                utility[problem] = value
            else:
                refs[(problem, seed)] = value

    log("paper: (b) Tables 3-4 sample sizes, (c) Tables 6-7 budgets, over seeds")
    specs = _run_specs(ctx, repo, threads, convex_seeds, lenet_seeds, refs, out)
    log(f"paper: {len(specs)} runs, {args.jobs} at a time")
    results = run_all(specs, out.path("runs"), args.jobs, log)
    run_seconds = time.monotonic() - start
    measured = pd.DataFrame([_measure(r) for r in results])
    measured.to_csv(out.path("runs.csv"), index=False)
    text = paper_report.write(out, args, ctx, comparison, notes, printed, utility, refs, results, measured,
                              run_seconds, child_cpu_seconds(), failures, convex_seeds, lenet_seeds)
    out.write_text("REPORT.md", text)
    log(f"paper: {len(results)} runs in {run_seconds:.0f} s")
    return 0 if not failures and all(r.ok for r in results) else 1


def _run_specs(ctx, repo, threads, convex_seeds, lenet_seeds, refs, out) -> list[RunSpec]:
    specs = []
    order = ["lenet", "strongly_convex", "plain_convex"]  # longest first
    for problem in order:
        p = PROBLEMS[problem]
        config = repo / "experiments" / p["config"]
        base = _overrides(problem, ctx, threads)
        seeds = lenet_seeds if problem == "lenet" else convex_seeds
        rows = pd.concat([_table_rows(ctx, p["sizes"]), _table_rows(ctx, p["budgets"])])
        distinct = rows.drop_duplicates(subset=["sigma", "s"])
        nondp = {}
        if problem == "lenet":  # one ceiling per s of the budget table, and at the sample-size table's largest s
            for r in _table_rows(ctx, p["budgets"]).to_dict("records"):
                nondp[r["s"]] = r["C"]
            biggest = _table_rows(ctx, p["sizes"]).sort_values("s").iloc[-1]
            nondp[int(biggest["s"])] = biggest["C"]
        else:
            for r in rows.to_dict("records"):
                nondp[r["s"]] = r["C"]
        for seed in seeds:
            extra = {}
            if problem != "lenet" and (problem, seed) in refs:
                extra["eval.reference_optimum"] = str(out.path(f"reference/{problem}_s{seed}"))
            for r in distinct.to_dict("records"):
                specs.append(RunSpec(f"{problem}_s{r['s']}_sigma{r['sigma']:g}_seed{seed}", config,
                                     {**base, **extra, "dp.enabled": True, "dp.sigma": r["sigma"], "dp.clip": r["C"],
                                      "schedule.sample_size": int(r["s"])}, seed,
                                     {"problem": problem, "kind": "dp", "sigma": r["sigma"], "s": int(r["s"])}))
            for s, clip in sorted(nondp.items()):
                specs.append(RunSpec(f"{problem}_nondp_s{s}_seed{seed}", config,
                                     {**base, **extra, "dp.enabled": False, "dp.clip": clip,
                                      "schedule.sample_size": int(s)}, seed,
                                     {"problem": problem, "kind": "nondp", "sigma": 0.0, "s": int(s)}))
            if problem == "lenet":
                top = _table_rows(ctx, p["budgets"]).sort_values("s").iloc[-1]
                if int(top["s"]) > STEP_CAP:  # the evidence for the cap: the largest s at the configuration's η0
                    for kind, dp in (("uncapped_dp", True), ("uncapped_nondp", False)):
                        o = {**base, "schedule.step_cap_sample_size": 0, "dp.enabled": dp, "dp.clip": top["C"],
                             "schedule.sample_size": int(top["s"])}
                        if dp:
                            o["dp.sigma"] = top["sigma"]
                        specs.append(RunSpec(f"lenet_{kind}_s{int(top['s'])}_seed{seed}", config, o, seed,
                                             {"problem": problem, "kind": kind, "sigma": top["sigma"] if dp else 0.0,
                                              "s": int(top["s"])}))
        if problem == "lenet":
            # First-round probes: one noise-free round per client at every s (and s = 1, which barely moves
            # the initial model): the training loss after it says whether that round already overshoots.
            sizes = sorted({1, *map(int, rows["s"])})
            for s in sizes:
                specs.append(RunSpec(f"lenet_probe_s{s}", config,
                                     {**base, "schedule.step_cap_sample_size": 0, "dp.enabled": False,
                                      "schedule.sample_size": s, "schedule.rounds": 1, "schedule.iterations": 0,
                                      "eval.points": 1}, 1, {"problem": problem, "kind": "probe", "sigma": 0.0, "s": s}))
    return specs


def _measure(r) -> dict:
    lab = r.spec.labels
    row = {"run": r.spec.name, "problem": lab["problem"], "kind": lab["kind"], "sigma": lab["sigma"], "s": lab["s"],
           "seed": r.spec.seed, "ok": r.ok, "error": r.error or "", "cpu_seconds": r.cpu_seconds}
    if not r.ok:
        return row
    s, met = r.summary, r.metrics
    eps = s.get("epsilon") or {}
    x = met["gradients_per_client"].to_numpy(float)
    acc = met["test_accuracy"].to_numpy(float)
    tail = acc[x >= 0.75 * x.max()] if len(x) else acc
    row.update({
        "accuracy": float(s["test_accuracy"]) if s.get("test_accuracy") is not None else math.nan,
        "tail_accuracy": float(np.mean(tail)) if len(tail) else math.nan,
        "mean_accuracy": float(np.mean(acc)) if len(acc) else math.nan,
        "rounds_per_client": float(np.mean(s["rounds_per_client"])),
        "k_per_client": float(np.mean(s["planned_grads_per_client"])),
        "eps_rdp": _num(eps.get("rdp")), "eps_pld": _num(eps.get("pld")), "eps_pld_lower": _num(eps.get("pld_lower")),
        "eps_proactive": _num(eps.get("proactive")), "records_per_client": int(s["records_per_client"]),
        "delta": float(s["delta"]) if s.get("delta") else math.nan, "parameters": int(s["model"]["parameters"]),
        "collapsed": _collapsed(met, 10 if lab["problem"] == "lenet" else 2),
        "train_loss_last": float(met["diag_train_loss"].iloc[-1]) if "diag_train_loss" in met else math.nan,
    })
    if "diag_suboptimality" in met:
        y = met["diag_suboptimality"].to_numpy(float)
        row["final_subopt"] = float(y[-1])
        row["slope"], row["slope_points"], row["window_from"], row["window_to"] = loglog_slope(x, y)
    return row


def _num(v) -> float:
    return math.inf if v is None else float(v)


def _collapsed(met: pd.DataFrame, classes: int) -> bool:
    """A classifier that ends at a constant prediction: test loss within 1% of ln(classes) and accuracy at
    most 1.1 / classes (a network whose ReLUs all died predicts the class prior)."""
    loss, acc = float(met["test_loss"].iloc[-1]), float(met["test_accuracy"].iloc[-1])
    return bool(0.99 * math.log(classes) < loss < 1.01 * math.log(classes) and acc <= 1.1 / classes)


def group(measured: pd.DataFrame, problem: str, kind: str, s: int, sigma: float | None = None) -> pd.DataFrame:
    m = measured[(measured["problem"] == problem) & (measured["kind"] == kind) & (measured["s"] == s) & measured["ok"]]
    if sigma is not None:
        m = m[np.isclose(m["sigma"], sigma)]
    return m.sort_values("seed")


def interval(frame: pd.DataFrame, column: str):
    """The column's mean and interval over the frame's seeds; an accuracy's clipped to [0, 1]."""
    bounds = ACCURACY if "accuracy" in column else None
    return mean_interval(frame[column], bounds=bounds) if column in frame else mean_interval([])
