"""``run_experiments.sh checkins``: random check-ins (Balle et al. 2020) accounted by random allocation
(Feldman & Shenfeld 2025; docs/random_allocation.md).

(a) ε against m and p0 for check-ins beside Poisson subsampling at the *same expected participation*
    (rate p0·k/m over the m steps of a window) and one shuffled pass (FMT21), at equal noise; plus the table
    of every allocation bound (σ ∈ {1, 2, 4}, m ∈ {100, 1000}, E ∈ {1, 10}).
(b) DP-SGD on a9a with one record per client: check-ins (fixed window; averaged at the fixed window's σ,
    which has no bound), Poisson and shuffled DP-SGD at equal ε, over seeds, with paired differences and
    the majority-class baseline.
(c) Empty steps of the fixed window against their expectation m (1 − p0/m)^n over seeds.
"""

from __future__ import annotations

import dataclasses
import math
import time

import pandas as pd

from .. import account
from . import env, plots, report
from .runner import RunSpec, child_cpu_seconds, failed_section, run_all
from .stats import (ACCURACY, FAILS, HOLDS, INCONCLUSIVE, family_false_alarm, mean_interval, paired_by_seed,
                    verdict_below)


@dataclasses.dataclass(frozen=True)
class Scale:
    ms: tuple[int, ...]
    p0s: tuple[float, ...]
    epsilons: tuple[float, ...]
    windows: int
    clients: int
    seeds: int
    empty_seeds: int
    empty_ms: tuple[int, ...]


SCALES = {
    # tiny: sigma near 3 keeps the calibrations fast (the allocation bounds take seconds at sigma < 1)
    "tiny": Scale((100, 1000), (1.0, 0.5), (0.05,), 1, 4000, 2, 1, (2000, 4000)),
    "default": Scale((100, 300, 1000, 3000, 10000), (1.0, 0.5, 0.1), (1.0, 4.0), 2, 32561, 5, 5, (16000, 32561, 65122)),
}
BATCH = 32
DELTA = 1e-5
SIGMA = 1.0  # noise multiplier of the sum aggregator in part (a)
METHODS = {
    "fixed": "check-ins, fixed window (Alg. 1)",
    "averaged": "check-ins, averaged (Alg. 2): NO BOUND, the fixed window's σ",
    "poisson": "Poisson DP-SGD",
    "shuffle": "shuffled DP-SGD (one Gaussian per epoch)",
    "nondp": "non-private fixed window",
}


def main(args) -> int:
    out, log, repo = args.output, args.log, env.repo_dir()
    sc = SCALES[args.scale]
    seeds = list(range(1, (args.seeds or sc.seeds) + 1))
    libsvm = env.resolve_libsvm(args.libsvm)
    if libsvm.test is None:
        raise env.UsageError(f"checkins needs a LIBSVM test file beside {libsvm.train}")
    start = time.monotonic()

    log("checkins (a): epsilon vs m and p0, and the table of every bound")
    eps_rows = []
    for p0 in sc.p0s:
        for m in sc.ms:
            r = account(sampling="random_allocation", m=m, p0=p0, sigma=SIGMA, delta=1e-6)
            shuffle = (r.shuffle or {}).get("epsilon")
            eps_rows.append({"m": m, "p0": p0, "checkin_epsilon": r.random_allocation.epsilon,
                             "binding_bound": r.random_allocation.extra.get("binding_bound"),
                             "poisson_rate": r.poisson["q"], "poisson_pld_epsilon": r.poisson["pld"]["epsilon"],
                             "shuffle_fmt21_epsilon": math.nan if shuffle is None else shuffle})
    eps_vs_m = pd.DataFrame(eps_rows)
    eps_vs_m.to_csv(out.path("eps_vs_m.csv"), index=False)
    bound_rows = []
    for sigma in (1.0, 2.0, 4.0):
        for m in (100, 1000):
            for e in (1, 10):
                r = account(sampling="random_allocation", m=m, windows=e, sigma=sigma, delta=1e-6)
                # One column per bound and direction (decomposition, recursive and pld bound both).
                bounds = {f'{b["bound"]}_{b["direction"]}': b for b in r.random_allocation.extra.get("bounds", [])}
                bound_rows.append({"sigma": sigma, "m": m, "windows": e, "reported": r.random_allocation.epsilon,
                                   "binding": f"{r.random_allocation.extra.get('binding_bound')} "
                                              f"{r.random_allocation.extra.get('binding_direction')}",
                                   **{name: (b["epsilon"] if b.get("applicable") else math.nan)
                                      for name, b in bounds.items()},
                                   "poisson_pld": r.poisson["pld"]["epsilon"], "poisson_rdp": r.poisson["rdp"]["epsilon"],
                                   "seconds": r.random_allocation.extra.get("seconds")})
    bounds = pd.DataFrame(bound_rows)
    bounds.to_csv(out.path("bounds.csv"), index=False)

    log("checkins (b): DP-SGD on a9a, one record per client, over seeds")
    n = sc.clients
    base = {"data.train": str(libsvm.train), "data.test": str(libsvm.test), "data.features": 123,
            "model.kind": "logistic", "dp.clip": 1, "dp.delta": DELTA, "schedule.step_rule": "constant",
            "schedule.eta0": 0.5, "eval.points": 4}
    checkin = {"protocol.participation": "check_in", "clients.count": n, "checkin.steps": n,
               "checkin.windows": sc.windows, "checkin.batch_steps": BATCH}
    central = {"protocol.participation": "async_rounds", "clients.count": 1, "data.rows_per_client": n,
               "schedule.sample_size": BATCH, "schedule.rounds": n * sc.windows // BATCH,
               "schedule.divide_round_update_by_sample_size": True, "protocol.tau": 0}
    ck_config = repo / "experiments" / "checkins_a9a.toml"
    central_config = {"seed": 1, "data": {"train": str(libsvm.train)}, "model": {"kind": "logistic"}}
    method_config = {"fixed": (ck_config, {**checkin, "checkin.variant": "fixed_window"}),
                     "poisson": (central_config, {**central, "dp.sampling": "poisson"}),
                     "shuffle": (central_config, {**central, "dp.sampling": "shuffle"})}
    # Seed 1 of each (method, ε) calibrates σ with the method's own accountant; the other seeds reuse it.
    first = [RunSpec(f"{meth}_eps{e:g}_s1", cfg, {**base, **o, "dp.epsilon": e}, 1,
                     {"part": "utility", "method": meth, "eps": e})
             for e in sc.epsilons for meth, (cfg, o) in method_config.items()]
    # The non-private baseline accounts nothing: dp.delta is not given to it (asyncdp refuses an unread key).
    nondp = {key: value for key, value in base.items() if key != "dp.delta"}
    first += [RunSpec(f"nondp_s{seed}", ck_config, {**nondp, **checkin, "checkin.variant": "fixed_window",
                                                     "dp.enabled": False, "dp.epsilon": 0}, seed,
                      {"part": "utility", "method": "nondp", "eps": math.inf}) for seed in seeds]
    done1 = run_all(first, out.path("runs"), args.jobs, log)
    sigma = {(r.spec.labels["method"], r.spec.labels["eps"]): float(r.summary["sigma"])
             for r in done1 if r.ok and r.spec.labels["method"] != "nondp"}
    rest = []
    for e in sc.epsilons:
        for meth, (cfg, o) in method_config.items():
            if (meth, e) not in sigma:
                continue
            for seed in seeds[1:]:
                rest.append(RunSpec(f"{meth}_eps{e:g}_s{seed}", cfg, {**base, **o, "dp.sigma": sigma[(meth, e)],
                                                                     "dp.epsilon": 0}, seed,
                                    {"part": "utility", "method": meth, "eps": e}))
        if ("fixed", e) in sigma:  # Alg. 2 has no bound: run at the fixed window's sigma, labelled so
            rest += [RunSpec(f"averaged_sigma_of_eps{e:g}_s{seed}", ck_config,
                             {**base, **checkin, "checkin.variant": "averaged", "dp.sigma": sigma[("fixed", e)],
                              "dp.epsilon": 0}, seed, {"part": "utility", "method": "averaged", "eps": e})
                     for seed in seeds]
    log("checkins (c): empty steps against their expectation")
    empty_base = {"data.train": str(libsvm.train), "data.test": str(libsvm.test), "data.features": 123,
                  "model.kind": "logistic", "dp.enabled": False, "dp.epsilon": 0, "eval.points": 0,
                  "data.eval_rows": 100, "protocol.participation": "check_in", "clients.count": n,
                  # the realised empty steps are the randomness the epsilon assumes secret: a labelled diagnostic
                  "output.diagnostics": True}
    for m in sc.empty_ms:
        for p0 in (1.0, 0.5):
            for seed in range(1, sc.empty_seeds + 1):
                rest.append(RunSpec(f"empty_m{m}_p{p0:g}_s{seed}", ck_config,
                                    {**empty_base, "checkin.steps": m, "checkin.p0": p0}, seed,
                                    {"part": "empty", "m": m, "p0": p0}))
    done2 = run_all(rest, out.path("runs"), args.jobs, log)
    results = done1 + done2
    run_seconds = time.monotonic() - start

    util_rows = []
    for r in results:
        if r.spec.labels["part"] != "utility" or not r.ok:
            continue
        s = r.summary
        ck = s.get("checkin")
        privacy = s.get("privacy") or {}
        if ck is not None:
            eps, bound = (s.get("epsilon") or {}).get("random_allocation"), privacy.get("bound")
        else:
            eps, bound = (s.get("epsilon") or {}).get("pld"), "upper_bound (pld)"
        util_rows.append({"run": r.spec.name, "method": r.spec.labels["method"], "target_epsilon": r.spec.labels["eps"],
                          "seed": r.spec.seed, "epsilon": math.nan if eps is None else float(eps), "bound": bound,
                          "sigma": float(s["sigma"]), "test_accuracy": float(s["test_accuracy"]),
                          # check-ins: public only under the one-client rule (fixed by the plan); the averaged
                          # rule's count is realised randomness and not released; DP-SGD: its global rounds
                          "model_updates": (ck["model_updates"] if "model_updates" in ck else math.nan)
                          if ck is not None else s["global_rounds"]})
    utility = pd.DataFrame(util_rows)
    utility.to_csv(out.path("utility.csv"), index=False)
    empty_rows = []
    for r in results:
        if r.spec.labels["part"] != "empty" or not r.ok:
            continue
        ck, realised = r.summary["checkin"], r.summary["diagnostics"]["checkin"]
        empty_rows.append({"m": r.spec.labels["m"], "p0": r.spec.labels["p0"], "seed": r.spec.seed,
                           "empty_steps": realised["empty_steps"], "expected": ck["expected_empty_steps"],
                           "sd": ck["empty_steps_sd"],
                           "z": (realised["empty_steps"] - ck["expected_empty_steps"]) / ck["empty_steps_sd"]})
    empty = pd.DataFrame(empty_rows)
    empty.to_csv(out.path("empty_steps.csv"), index=False)
    majority = env.majority_rate(libsvm)
    groups, checks = _utility_groups(utility, majority, args.scale)
    groups.to_csv(out.path("utility_groups.csv"), index=False)
    figures = _figures(out, eps_vs_m, utility, empty, majority, sc, args.scale)
    text = _report(args, libsvm, sc, eps_vs_m, bounds, groups, checks, empty, figures, majority, run_seconds,
                   child_cpu_seconds(), seeds)
    out.write_text("REPORT.md", text + "\n" + failed_section(results))
    log(f"checkins: {len(results)} runs in {run_seconds:.0f} s")
    return 0 if all(r.ok for r in results) else 1


def _utility_groups(utility: pd.DataFrame, majority: float, scale: str):
    rows, checks = [], []
    for (meth, e), g in utility.groupby(["method", "target_epsilon"], sort=False):
        acc = mean_interval(g["test_accuracy"], bounds=ACCURACY)
        rows.append({"method": meth, "label": METHODS[meth], "target_epsilon": e, "n": len(g),
                     "epsilon_max": g["epsilon"].max(), "sigma": g["sigma"].mean(), "accuracy": acc.mean,
                     "accuracy_low": acc.low, "accuracy_high": acc.high,
                     "above_majority": acc.low > majority if acc.n >= 2 else False})
    groups = pd.DataFrame(rows)

    def pair(a, b):
        return paired_by_seed(a, b, "test_accuracy")

    for e in sorted(utility.loc[utility["method"] == "fixed", "target_epsilon"].unique()):
        fixed = utility[(utility["method"] == "fixed") & (utility["target_epsilon"] == e)]
        for other in ("poisson", "shuffle"):
            o = utility[(utility["method"] == other) & (utility["target_epsilon"] == e)]
            if o.empty or fixed.empty:
                continue
            d = pair(fixed, o)
            ok = groups[(groups["target_epsilon"] == e) & groups["method"].isin(["fixed", other])]["above_majority"].all()
            verdict = ("no verdict (tiny scale)" if scale == "tiny" else
                       "no verdict: a group is not above the majority class" if not ok else verdict_below(d, 0.0))
            checks.append({"claim": f"ε = {e:g}: check-ins (fixed window) are less accurate than {METHODS[other]}",
                           "measured": f"fixed − {other} {d.text_n()}", "verdict": verdict})
    return groups, pd.DataFrame(checks, columns=["claim", "measured", "verdict"])


def _figures(out, eps_vs_m, utility, empty, majority, sc, scale):
    note = "TINY SCALE: a smoke test of the pipeline, not a result" if scale == "tiny" else ""
    made = {}
    rows, styles = [], []
    panel = f"one window, σ = {SIGMA:g} (sum aggregator), δ = 1e-6"
    for i, p0 in enumerate(sc.p0s):
        part = eps_vs_m[eps_vs_m["p0"] == p0]
        a, b = f"check-ins, p0 = {p0:g} (random allocation)", f"Poisson at rate p0/m = {p0:g}/m (PLD)"
        rows += [{"panel": panel, "series": a, "kind": "curve", "x": m, "mean": e, "low": math.nan, "high": math.nan,
                  "n": 1} for m, e in zip(part["m"], part["checkin_epsilon"])]
        rows += [{"panel": panel, "series": b, "kind": "curve", "x": m, "mean": e, "low": math.nan, "high": math.nan,
                  "n": 1} for m, e in zip(part["m"], part["poisson_pld_epsilon"])]
        styles += [(a, "-", f"C{i}"), (b, "--", f"C{i}")]
    part = eps_vs_m[(eps_vs_m["p0"] == 1.0) & eps_vs_m["shuffle_fmt21_epsilon"].notna()]
    rows += [{"panel": panel, "series": "shuffle, one pass of m records (FMT21)", "kind": "curve", "x": m, "mean": e,
              "low": math.nan, "high": math.nan, "n": 1} for m, e in zip(part["m"], part["shuffle_fmt21_epsilon"])]
    styles.append(("shuffle, one pass of m records (FMT21)", ":", "0.3"))
    made["eps_vs_m"] = plots.save(out, plots.LineFigure(
        "eps_vs_m", "ε of check-ins beside Poisson at equal expected participation p0/m", "steps per window m",
        "ε (upper bound)", logx=True, logy=True, note=note, styles=tuple(styles)), plots.table(rows))
    rows = []
    panel = "DP-SGD on a9a, one record per client"
    for meth in ("fixed", "averaged", "poisson", "shuffle"):
        g = utility[utility["method"] == meth]
        if g.empty:
            continue
        curves = [(s["target_epsilon"].to_numpy(float), s["test_accuracy"].to_numpy(float)) for _, s in g.groupby("seed")]
        rows += plots.curve_rows(panel, METHODS[meth], curves)
    nd = utility[utility["method"] == "nondp"]
    if not nd.empty:
        rows.append(plots.baseline_row(panel, "non-private fixed window", float(nd["test_accuracy"].mean())))
    rows.append(plots.baseline_row(panel, "baseline: majority class", majority))
    made["utility"] = plots.save(out, plots.LineFigure(
        "utility", "Test accuracy at equal target ε, mean and 95% interval over seeds", "target ε", "test accuracy",
        logx=True, note=note, bounds=(0.0, 1.0)), plots.table(rows))
    rows = [{"panel": "empty steps", "series": f"runs, p0 = {p0:g}", "kind": "event", "x": x, "mean": y,
             "low": math.nan, "high": math.nan, "n": 1}
            for p0, g in empty.groupby("p0") for x, y in zip(g["expected"], g["empty_steps"])]
    if len(empty):
        lo, hi = float(empty["expected"].min()), float(empty["expected"].max())
        rows += [{"panel": "empty steps", "series": "observed = expected", "kind": "curve", "x": x, "mean": x,
                  "low": math.nan, "high": math.nan, "n": 1} for x in (lo * 0.8, hi * 1.2)]
        made["empty_steps"] = plots.save(out, plots.LineFigure(
            "empty_steps", "Empty steps of the fixed window: observed against m (1 − p0/m)^n", "expected empty steps",
            "observed empty steps", logx=True, logy=True, note=note,
            styles=(("observed = expected", ":", "0.4"),)), plots.table(rows))
    return made


def _report(args, libsvm, sc, eps_vs_m, bounds, groups, checks, empty, figures, majority, run_seconds, cpu, seeds):
    f = report.cell

    lines = ["# Random check-ins: privacy by random allocation, utility on a9a", "",
             report.provenance(args.command, args.scale, args.jobs), ""]
    if args.scale == "tiny":
        lines += ["> **Tiny scale**: a smoke test of the pipeline; no verdict is drawn.", ""]
    ratio = eps_vs_m["checkin_epsilon"] / eps_vs_m["poisson_pld_epsilon"]
    decided = [c for c in checks.to_dict("records") if c["verdict"] in (HOLDS, FAILS, INCONCLUSIVE)]
    lines += ["## Summary", "",
              f"* At equal noise and equal expected participation (Poisson at p0/m), the check-ins' reported ε is "
              f"{ratio.min():.3g}–{ratio.max():.3g} × Poisson's PLD ε over the {len(eps_vs_m)} (m, p0) points of (a): "
              + ("the allocation bounds are looser than Poisson's accountant everywhere at this σ." if ratio.min() > 1
                 else "the allocation bounds are at least as tight as Poisson's accountant everywhere at this σ."
                 if ratio.max() <= 1 else "tighter at some points, looser at others."),
              *[f"* {c['claim']}: {c['measured']}: {report.verdict(c['verdict'])}." for c in checks.to_dict("records")],
              f"* Empty steps: {len(empty)} runs, z = (observed − expected)/sd between {empty['z'].min():.2f} and "
              f"{empty['z'].max():.2f}; {int((empty['z'].abs() > 3).sum())} beyond 3 sd." if len(empty) else "",
              (f"* {len(decided)} verdicts at 95%: up to {family_false_alarm(len(decided)):.0%} chance of one decided by "
               "chance." if decided else ""),
              "", f"Runs: {run_seconds:.0f} s wall, {cpu:.0f} CPU s in worker processes. Data: {libsvm.origin}.", "",
              "Neighbours: add/remove of one client (one record). Every ε is an upper bound at the δ shown, with its "
              "theorem in the run's `summary.json` or `bounds.csv` (docs/random_allocation.md). Check-ins with one "
              "client per step (Alg. 1) are accounted as random allocation of the Gaussian randomizer; averaged updates "
              "(Alg. 2) have **no bound** and are never given an ε.", "",
              f"## (a) ε against m and p0 at equal noise (σ = {SIGMA:g}, sum aggregator, δ = 1e-6, one window)", "",
              "The fair Poisson comparison has the same expected participation: a record joins each of the m steps with "
              "probability p0·k/m (k = 1), so both runs see it p0 times on average.", "",
              report.table(["m", "p0", "check-ins ε (binding bound)", "Poisson rate", "Poisson ε, PLD",
                            "ratio", "shuffle, one pass of m (FMT21)"],
                           [[r["m"], r["p0"], f"{f(r['checkin_epsilon'])} ({r['binding_bound']})", f(r["poisson_rate"]),
                             f(r["poisson_pld_epsilon"]), f(r["checkin_epsilon"] / r["poisson_pld_epsilon"], 3),
                             f(r["shuffle_fmt21_epsilon"])] for r in eps_vs_m.to_dict("records")]),
              "", report.image("epsilon vs m", figures["eps_vs_m"]), "",
              "### Every bound (δ = 1e-6, k = 1, p0 = 1) beside Poisson at rate 1/m over mE rounds", "",
              report.table(["σ", "m", "E", *[c for c in bounds.columns if c not in
                                             ("sigma", "m", "windows", "reported", "binding", "poisson_pld",
                                              "poisson_rdp", "seconds")],
                            "**reported** (binding)", "Poisson 1/m PLD", "Poisson 1/m RDP", "s"],
                           [[r["sigma"], r["m"], r["windows"],
                             *[f(r[c], 3) for c in bounds.columns if c not in
                               ("sigma", "m", "windows", "reported", "binding", "poisson_pld", "poisson_rdp", "seconds")],
                             f"**{f(r['reported'], 3)}** ({r['binding']})", f(r["poisson_pld"], 3),
                             f(r["poisson_rdp"], 3), f(r["seconds"], 2)] for r in bounds.to_dict("records")]),
              "", "–: outside the theorem (Thm. 4.3 bounds one window).", "",
              f"## (b) DP-SGD on a9a, one record per client (n = {sc.clients}), equal ε (δ = {DELTA:g}), "
              f"{len(seeds)} seeds", "",
              f"Check-ins: m = n steps per window, {sc.windows} window(s), p0 = 1, b = {BATCH} steps per model update. "
              f"Poisson / shuffled DP-SGD: batches of (expected) {BATCH} records, the same number of model updates "
              "(n E / b), accounted by PLD (shuffle: one full-batch Gaussian of sensitivity 2C per epoch). Seed 1 of each "
              "method calibrates σ to the target ε with the method's accountant; the other seeds reuse that σ. Baseline: "
              f"the majority class of the test set, {majority:.4f}.", "",
              report.table(["method", "target ε", "seeds", "ε (largest reported)", "σ", "test accuracy [95%]"],
                           [[r["label"], f(r["target_epsilon"]), r["n"],
                             "no bound" if r["method"] == "averaged" else f(r["epsilon_max"]), f(r["sigma"]),
                             report.interval_cell(r)] for r in groups.to_dict("records")]),
              "", report.table(["claim", "paired difference [95%]", "verdict"],
                               [[c["claim"], c["measured"], report.verdict(c["verdict"])]
                                for c in checks.to_dict("records")]),
              "", report.image("utility", figures["utility"]), "",
              "## (c) Empty steps of the fixed window against m (1 − p0/m)^n", "",
              report.table(["m", "p0", "seed", "empty steps", "expected", "sd", "z"],
                           [[r["m"], r["p0"], r["seed"], r["empty_steps"], f"{r['expected']:.2f}", f"{r['sd']:.2f}",
                             f"{r['z']:.2f}"] for r in empty.to_dict("records")]), ""]
    if "empty_steps" in figures:
        lines += [report.image("empty steps", figures["empty_steps"]), ""]
    lines += ["Files: `eps_vs_m.csv`, `bounds.csv`, `utility.csv`, `utility_groups.csv`, `empty_steps.csv`, "
              "`plots/*.csv` (each figure's table), `runs/*/`.", ""]
    return "\n".join(line for line in lines if line is not None)


