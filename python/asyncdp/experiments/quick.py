"""``run_experiments.sh quick``: how fast DP-SGD converges on strongly convex, plain convex and non-convex
objectives, measured the way the theory states it, over seeds, against baselines.

Convex problems (a9a, or the Fashion-MNIST binary task): the suboptimality F(ŵ_t) − F(w*) against a
reference optimum w* (``asyncdp reference-optimum``), on log-log axes, with the fitted slope over the last
decade beside the slope of the step size η(t) over the same window (docs/theory.md §2: the bounds scale
with η(t)). Strongly and plain convex run under *both* step schedules, so the class comparison is made at
an equal schedule. Privacy: ε ∈ {0.5, 2, 8} with σ calibrated by the PLD accountant, the paper's Table 3 σ,
the non-private twin (same C and s, no noise) and plain SGD (s = 1, unclipped: what the rate bounds are
about). Non-convex: LeNet-5 on Fashion-MNIST, training loss and test accuracy, at the same ε plus the
Table 4 σ and its non-private twin.

Every compared quantity is over seeds (default: 5 for the convex problems, 3 for LeNet), with 95%
intervals; verdicts come from the interval of the (paired) difference; no verdict at tiny scale or on a run
group that does not beat its baseline. Suboptimality and training loss are non-private diagnostics
(output.diagnostics): the REPORT says so beside them.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import math
import time

import numpy as np
import pandas as pd

from . import env
from .quick_report import QuickReport
from .quick_setup import (ALL_ROWS, COMBOS, CONVEX_SETTINGS, EPSILONS, LENET_SETTINGS, PROBLEMS, SCALES, SCHEDULES,
                          Problem, eps_key)
from .runner import (RunResult, RunSpec, child_cpu_seconds, cli_value, one_thread, reference_optimum, resolved_config,
                     run_all)
from .stats import last_quarter_median, loglog_slope


def _f0_minus_fstar(problem: Problem, data: env.DataSet, f_star: float) -> float:
    """F(0) − F* of the untrained (zero) model, the baseline of every suboptimality curve. For logistic
    regression every score is 0 at w = 0, so each example's loss is ln 2 (the L2 term vanishes); for the
    geometric median F(0) = mean ‖x_r‖ over the training rows."""
    if problem.model in ("logistic", "logistic_l2"):
        return math.log(2.0) - f_star
    from .. import load_libsvm

    x, _ = load_libsvm(str(data.train))
    norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
    return float(norms.mean()) - f_star


@dataclasses.dataclass
class Measured:
    """Per-run measurements, one row of runs.csv."""

    name: str
    family: str          # "convex" or "lenet"
    problem: str
    schedule: str
    setting: str
    seed: int
    ok: bool
    sigma: float = math.nan
    eps_pld: float = math.nan
    eps_rdp: float = math.nan
    delta: float = math.nan
    accuracy: float = math.nan
    final_subopt: float = math.nan
    floor_subopt: float = math.nan
    slope: float = math.nan
    slope_points: int = 0
    window_from: float = math.nan
    window_to: float = math.nan
    distance_slope: float = math.nan
    final_train_loss: float = math.nan
    clipped_fraction: float = math.nan
    k_per_client: float = math.nan
    wall_seconds: float = math.nan
    cpu_seconds: float = math.nan
    error: str = ""


def _measure(r: RunResult) -> Measured:
    lab = r.spec.labels
    m = Measured(r.spec.name, lab["family"], lab["problem"], lab.get("schedule", ""), lab["setting"], r.spec.seed,
                 r.ok, cpu_seconds=r.cpu_seconds, wall_seconds=r.wall_seconds, error=r.error or "")
    if not r.ok:
        return m
    s, met, cl = r.summary, r.metrics, r.clients
    m.sigma = float(s["sigma"])
    eps = s.get("epsilon") or {}
    m.eps_pld = float(eps["pld"]) if eps.get("pld") is not None else math.inf
    m.eps_rdp = float(eps["rdp"]) if eps.get("rdp") is not None else math.inf
    m.delta = float(s["delta"])
    m.accuracy = float(s["test_accuracy"]) if s.get("test_accuracy") is not None else math.nan
    m.k_per_client = float(np.mean(s["planned_grads_per_client"]))
    x = met["gradients_per_client"].to_numpy(float)
    if "diag_suboptimality" in met:
        y = met["diag_suboptimality"].to_numpy(float)
        m.final_subopt = float(y[-1])
        m.floor_subopt = last_quarter_median(y)
        m.slope, m.slope_points, m.window_from, m.window_to = loglog_slope(x, y)
    if "diag_distance_sq" in met:
        m.distance_slope = loglog_slope(x, met["diag_distance_sq"].to_numpy(float))[0]
    if "diag_train_loss" in met:
        m.final_train_loss = last_quarter_median(met["diag_train_loss"].to_numpy(float))
    if "diag_clipped_fraction" in cl and "diag_gradients" in cl:
        g = cl["diag_gradients"].to_numpy(float)
        m.clipped_fraction = float((g * cl["diag_clipped_fraction"].to_numpy(float)).sum() / g.sum()) if g.sum() else math.nan
    return m


def main(args) -> int:
    scale = SCALES[args.scale]
    out = args.output
    repo = env.repo_dir()
    cfg_dir = repo / "experiments"
    binary = env.asyncdp_binary()
    start = time.monotonic()
    libsvm = env.resolve_libsvm(args.libsvm)
    images = env.resolve_images(args.images)
    log = args.log
    jobs = args.jobs
    threads = one_thread(jobs > 1)
    lenet_eval_rows = scale.lenet.get("data.eval_rows", 2000)
    convex_base = {**libsvm.overrides(), "eval.train_rows": ALL_ROWS, "output.diagnostics": True, **scale.convex,
                   **threads}
    lenet_base = {**images.overrides(), "eval.gradient_norm": True, "output.diagnostics": True, **scale.lenet,
                  **threads}
    convex_seeds = list(range(1, (args.seeds or scale.convex_seeds) + 1))
    lenet_seeds = list(range(1, (args.seeds or scale.lenet_seeds) + 1))
    log(f"quick: {libsvm.name} (convex) and {images.name} (LeNet-5), scale {scale.name}, "
        f"{len(convex_seeds)}/{len(lenet_seeds)} seeds, {jobs} job(s); the runs opt in to output.diagnostics "
        "(F − F*, training loss: not covered by epsilon, labelled so in the REPORT)")

    # 1. w* of each convex objective, for each seed (the objective key includes the seed).
    refs: dict[tuple[str, int], dict] = {}
    ref_jobs = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for p in PROBLEMS.values():
            for seed in convex_seeds:
                d = out.path(f"reference/{p.key}_s{seed}")
                ref_jobs[(p.key, seed)] = pool.submit(reference_optimum, binary, cfg_dir / p.config, d,
                                                      {**convex_base, "seed": seed})
    failures = []
    for key, future in ref_jobs.items():
        try:
            refs[key] = future.result()
        except RuntimeError as e:
            failures.append(f"reference optimum {key[0]} seed {key[1]}: {e}")

    # 2. σ for each ε, calibrated by the PLD accountant as the simulator resolves a run (`asyncdp train
    # --print-config`: the run's config.resolved.toml, nothing trained). The convex problems share N_c, s and
    # K, so one calibration serves them all; LeNet has its own.
    calib = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for e in EPSILONS:
            calib[("convex", eps_key(e))] = pool.submit(
                resolved_config, binary, cfg_dir / "quick_strongly_convex.toml",
                {**convex_base, "dp.sigma": 0, "dp.epsilon": e})
            calib[("lenet", eps_key(e))] = pool.submit(
                resolved_config, binary, cfg_dir / "quick_lenet.toml",
                {**lenet_base, "dp.sigma": 0, "dp.epsilon": e})
    sigma = {}
    for key, future in calib.items():
        try:
            sigma[key] = float(future.result()["dp"]["sigma"])
        except RuntimeError as err:
            failures.append(f"calibration {key[0]} {key[1]}: {err}")

    # 3. The run matrix. The running-ε column of metrics.csv is computed by RDP (cheap at every evaluation);
    # the ε every table reports is each run's final PLD value from summary.json.
    specs: list[RunSpec] = []
    for st in LENET_SETTINGS:
        o = dict(lenet_base)
        o.update(st.overrides)
        if st.epsilon is not None:
            if ("lenet", st.key) not in sigma:
                continue
            o.update({"dp.sigma": sigma[("lenet", st.key)], "dp.accountant": "rdp"})
        for seed in lenet_seeds:
            specs.append(RunSpec(f"lenet_{st.key}_s{seed}", cfg_dir / "quick_lenet.toml", o, seed,
                                 {"family": "lenet", "problem": "lenet", "setting": st.key}))
    for pk, sk in COMBOS:
        p = PROBLEMS[pk]
        for st in CONVEX_SETTINGS:
            if st.epsilon is not None and ("convex", st.key) not in sigma:
                continue
            for seed in convex_seeds:
                if (pk, seed) not in refs:
                    continue
                o = {**convex_base, **SCHEDULES[sk][0], **st.overrides,
                     "eval.reference_optimum": str(out.path(f"reference/{pk}_s{seed}"))}
                if st.epsilon is not None:
                    o.update({"dp.sigma": sigma[("convex", st.key)], "dp.accountant": "rdp"})
                specs.append(RunSpec(f"{pk}_{sk}_{st.key}_s{seed}", cfg_dir / p.config, o, seed,
                                     {"family": "convex", "problem": pk, "schedule": sk, "setting": st.key}))
    log(f"quick: {len(specs)} runs")
    results = run_all(specs, out.path("runs"), jobs, log)
    run_seconds = time.monotonic() - start
    measured = [_measure(r) for r in results]
    frame = pd.DataFrame([dataclasses.asdict(m) for m in measured])
    frame.insert(6, "config", [str(r.spec.config.relative_to(repo)) for r in results])
    frame.insert(7, "overrides", [" ".join(f"{k}={cli_value(v)}" for k, v in r.spec.overrides.items()) for r in results])
    frame.to_csv(out.path("runs.csv"), index=False)

    # 4. Baselines.
    majority = env.majority_rate(libsvm)
    lenet_chance = env.majority_rate(images, lenet_eval_rows)
    f0 = {}
    for p in PROBLEMS.values():
        values = [_f0_minus_fstar(p, libsvm, float(refs[(p.key, s)]["evaluated_objective"]))
                  for s in convex_seeds if (p.key, s) in refs]
        f0[p.key] = float(np.mean(values)) if values else math.nan

    ctx = QuickReport(scale, frame, results, majority, lenet_chance, f0, sigma, convex_seeds, lenet_seeds)
    groups = ctx.group_table()
    groups.to_csv(out.path("groups.csv"), index=False)
    figures = ctx.figures(out, libsvm, images)
    checks = ctx.checks()
    pd.DataFrame([dataclasses.asdict(c) for c in checks]).to_csv(out.path("checks.csv"), index=False)
    cpu = child_cpu_seconds()
    text = ctx.report(args, libsvm, images, refs, groups, figures, checks, run_seconds, cpu, failures)
    out.write_text("REPORT.md", text)
    failed = failures + [r.spec.name for r in results if not r.ok]
    log(f"quick: {len(results)} runs in {run_seconds:.1f} s ({cpu:.0f} CPU s)"
        + (f"; {len(failed)} failed" if failed else ""))
    return 1 if failed else 0


