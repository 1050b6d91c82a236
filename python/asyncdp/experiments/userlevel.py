"""``run_experiments.sh userlevel``: user-level DP on a9a (docs/theory.md §4) — asynchronous rounds with
client-side noise against random check-ins, at equal user-level ε, over seeds.

Both protect a client's whole data set (neighbours add or remove one client) with noise the client adds
itself; the data are split iid among n clients and each client's update is clipped as a whole to C_u = 2
(records to C = 1). *Asynchronous rounds* (`experiments/user_level_a9a.toml`): every client runs T = 200
rounds of s = 16 records and the server sees every round, so a client's ε composes all T Gaussian releases
without amplification. *Random check-ins* (`experiments/user_level_checkins_a9a.toml`, fixed window): in each
of E = 50 windows of m = n steps every client checks in to one uniform step, a step's selected client sends
its whole data set's update, and the ε is the random-allocation bound over clients (the population size n
public). σ is calibrated for each to the same ε at δ = 1e-5. Baselines: the same asynchronous runs without
noise, and the majority class. The question: at equal user-level ε, which participation protocol learns
more, and how does it change with n?
"""

from __future__ import annotations

import dataclasses
import math
import time

import pandas as pd

from . import env, plots, report
from .runner import RunSpec, child_cpu_seconds, failed_section, run_all
from .stats import (ACCURACY, FAILS, HOLDS, INCONCLUSIVE, family_false_alarm, mean_interval, paired_by_seed,
                    verdict_above)


@dataclasses.dataclass(frozen=True)
class Scale:
    clients: tuple[int, ...]
    epsilons: tuple[float, ...]
    seeds: int
    rounds: int    # asynchronous rounds per client
    windows: int   # check-in windows
    points: int


SCALES = {
    "tiny": Scale((100,), (4.0,), 2, 20, 5, 2),
    "default": Scale((100, 1000), (1.0, 4.0), 5, 200, 50, 10),
}
METHODS = {
    "async": "asynchronous rounds, client noise (every round seen)",
    "checkins": "random check-ins, fixed window (one client per step)",
    "nondp": "asynchronous rounds without noise",
}
NONDP_BASELINE = "baseline: asynchronous rounds without noise (mean over seeds)"
MAJORITY_BASELINE = "baseline: majority class"


def _specs(repo, libsvm, sc: Scale, seeds, threads) -> list[RunSpec]:
    specs = []
    for n in sc.clients:
        base = {**libsvm.overrides(), "clients.count": n, "eval.points": sc.points}
        asynchronous = {**base, "schedule.rounds": sc.rounds, **threads}  # check-ins run on one thread
        # One expected check-in per step (m = n); a model update every n/20 steps (at least 5).
        checkin = {**base, "checkin.steps": n, "checkin.windows": sc.windows, "checkin.batch_steps": max(5, n // 20)}
        for e in sc.epsilons:
            for seed in seeds:
                specs.append(RunSpec(f"n{n}_eps{e:g}_checkins_s{seed}", repo / "experiments" / "user_level_checkins_a9a.toml",
                                     {**checkin, "dp.epsilon": e}, seed, {"clients": n, "eps": e, "method": "checkins"}))
                specs.append(RunSpec(f"n{n}_eps{e:g}_async_s{seed}", repo / "experiments" / "user_level_a9a.toml",
                                     {**asynchronous, "dp.epsilon": e}, seed, {"clients": n, "eps": e, "method": "async"}))
        for seed in seeds:
            specs.append(RunSpec(f"n{n}_nondp_s{seed}", repo / "experiments" / "user_level_a9a.toml",
                                 {**asynchronous, "dp.enabled": False, "dp.epsilon": 0}, seed,
                                 {"clients": n, "eps": math.inf, "method": "nondp"}))
    return specs


def main(args) -> int:
    out, log, repo = args.output, args.log, env.repo_dir()
    sc = SCALES[args.scale]
    libsvm = env.resolve_libsvm(args.libsvm)
    seeds = list(range(1, (args.seeds or sc.seeds) + 1))
    threads = {"protocol.worker_threads": 1} if args.jobs > 1 else {}
    start = time.monotonic()
    specs = _specs(repo, libsvm, sc, seeds, threads)
    log(f"userlevel: {len(specs)} runs (user-level DP: asynchronous rounds vs random check-ins, {len(seeds)} seeds)")
    results = run_all(specs, out.path("runs"), args.jobs, log)
    run_seconds = time.monotonic() - start
    runs = _runs_table(results)
    runs.to_csv(out.path("runs.csv"), index=False)
    majority = env.majority_rate(libsvm)
    groups, checks = _groups(runs, majority, args.scale)
    groups.to_csv(out.path("groups.csv"), index=False)
    checks.to_csv(out.path("checks.csv"), index=False)
    figures = _figures(out, runs, majority, args.scale)
    out.write_text("REPORT.md", _report(args, libsvm, sc, groups, checks, figures, results, run_seconds))
    log(f"userlevel: {len(results)} runs in {run_seconds:.0f} s")
    return 0 if runs["ok"].all() else 1


def _runs_table(results) -> pd.DataFrame:
    rows = []
    for r in results:
        row = {"run": r.spec.name, **r.spec.labels, "seed": r.spec.seed, "ok": r.ok, "error": r.error or ""}
        if r.ok:
            s = r.summary
            privacy = s["privacy"]
            # One shape for both policies: each bound keyed by the accountant that gave it.
            accountant = {"checkins": "random_allocation", "async": "pld"}.get(r.spec.labels["method"])
            if accountant is not None:
                eps = s["epsilon"][accountant]
                record = privacy.get("epsilon_record_level", {}).get(accountant)
            else:
                eps, record = math.inf, math.inf
            row.update({"sigma": float(s["sigma"]), "eps_user": float(eps),
                        "eps_record": math.nan if record is None else float(record),
                        "accuracy": float(s["test_accuracy"]), "wall_seconds": float(s["wall_seconds"])})
        rows.append(row)
    return pd.DataFrame(rows)


def _groups(runs: pd.DataFrame, majority: float, scale: str):
    ok = runs[runs["ok"]]
    groups, checks = [], []
    for (n, e, method), g in ok.groupby(["clients", "eps", "method"], sort=False):
        acc = mean_interval(g["accuracy"], bounds=ACCURACY)
        groups.append({"clients": n, "eps": e, "method": method, "n": len(g), "sigma": g["sigma"].mean(),
                       "eps_user_max": g["eps_user"].max(), "eps_record_max": g["eps_record"].max(),
                       "accuracy": acc.mean, "accuracy_low": acc.low, "accuracy_high": acc.high,
                       "majority": majority})
    groups = pd.DataFrame(groups)
    for (n, e), g in ok[ok["method"] != "nondp"].groupby(["clients", "eps"], sort=False):
        ck, asy = g[g["method"] == "checkins"], g[g["method"] == "async"]
        d = paired_by_seed(ck, asy, "accuracy")  # the same seed: the same partition of the data
        best = max(mean_interval(p["accuracy"]).low for p in (ck, asy)) if min(len(ck), len(asy)) > 1 else math.nan
        verdict = ("no verdict (tiny scale)" if scale == "tiny" else
                   "no verdict: neither protocol is above the majority class" if not best > majority
                   else verdict_above(d, 0.0))
        checks.append({"claim": f"n = {n}, user-level ε = {e:g}: check-ins are more accurate than asynchronous rounds",
                       "measured": f"check-ins − async {d.text_n()}", "verdict": verdict})
    return groups, pd.DataFrame(checks, columns=["claim", "measured", "verdict"])


def _figures(out, runs: pd.DataFrame, majority: float, scale: str) -> dict:
    note = "TINY SCALE: a smoke test of the pipeline, not a result" if scale == "tiny" else ""
    ok = runs[runs["ok"]]
    rows = []
    for n, g in ok.groupby("clients", sort=True):
        panel = f"{n} clients"
        for method in ("async", "checkins"):
            part = g[g["method"] == method]
            rows += plots.curve_rows(panel, METHODS[method], [([e], [a]) for e, a in zip(part["eps"], part["accuracy"])])
        nondp = g[g["method"] == "nondp"]["accuracy"]
        rows.append(plots.baseline_row(panel, NONDP_BASELINE, float(nondp.mean()) if len(nondp) else math.nan))
        rows.append(plots.baseline_row(panel, MAJORITY_BASELINE, majority))
    return {"accuracy": plots.save(out, plots.LineFigure(
        "accuracy", "Test accuracy at equal user-level ε (mean and 95% interval over seeds)", "user-level ε",
        "test accuracy", note=note, bounds=(0.0, 1.0),
        styles=((NONDP_BASELINE, ":", "black"), (MAJORITY_BASELINE, "--", "grey"))), plots.table(rows))}


def _report(args, libsvm, sc, groups, checks, figures, results, run_seconds) -> str:
    decided = checks[checks["verdict"].isin([HOLDS, FAILS, INCONCLUSIVE])]
    lines = ["# User-level DP: asynchronous rounds against random check-ins at equal ε", "",
             report.provenance(args.command, args.scale, args.jobs), ""]
    if args.scale == "tiny":
        lines += ["> **Tiny scale**: a smoke test of the pipeline; no verdict is drawn.", ""]
    lines += ["## Summary", ""]
    lines += [f"* {c['claim']}: {c['measured']}: {report.verdict(c['verdict'])}." for c in checks.to_dict("records")]
    if len(decided):
        lines.append(f"* {len(decided)} verdicts at 95%: up to {family_false_alarm(len(decided)):.0%} chance that one "
                     "is decided by chance.")
    lines += ["", f"Runs: {len(results)}, **{run_seconds:.0f} s** wall, {child_cpu_seconds():.0f} CPU s.", "",
              "## Setting", "", __doc__.split("\n\n", 1)[1].strip(), "",
              f"Data: {libsvm.name} ({libsvm.origin}). Scale: n ∈ {{{', '.join(map(str, sc.clients))}}} clients, "
              f"T = {sc.rounds} asynchronous rounds, E = {sc.windows} check-in windows. Every ε is the run's "
              "summary.json headline (asynchronous rounds: the PLD upper bound; check-ins: the random-allocation "
              "bound); the record-level ε of the same runs is beside it.", "",
              "## Results", "",
              report.table(["clients", "user-level ε", "protocol", "seeds", "σ", "ε user (max)", "ε record (max)",
                            "test accuracy [95%]", "majority class"],
                           [[r["clients"], "∞" if math.isinf(r["eps"]) else f"{r['eps']:g}", METHODS[r["method"]],
                             r["n"], f"{r['sigma']:.4g}", report.cell(r["eps_user_max"]),
                             report.cell(r["eps_record_max"]), report.interval_cell(r), f"{r['majority']:.4f}"]
                            for r in groups.to_dict("records")]), "",
              report.table(["claim", "paired difference [95%]", "verdict"],
                           [[c["claim"], c["measured"], report.verdict(c["verdict"])] for c in checks.to_dict("records")]),
              ""]
    for name in figures:
        lines += [report.image(name, figures[name]), ""]
    lines += ["Files: `runs.csv`, `groups.csv`, `checks.csv`, `plots/*.csv` (each figure's table), `runs/*/`.", "",
              failed_section(results)]
    return "\n".join(lines)
