"""``run_experiments.sh audit``: the empirical privacy audit (``asyncdp audit``, docs/audit.md) of a set of
configurations — Poisson / fixed-size / shuffled batches, 1 round, 10 rounds and a full short run, logistic
regression and a small MLP, both observer views, the one-run audit — plus deliberately wrong accountants
that must come out as VIOLATION, and one-run audits attached to training runs.

Many verdicts are made at once, so each is made at the Bonferroni-corrected confidence 1 − 0.05/k for the
k audit rows: the chance that *any* honest row is flagged by chance is then at most 5% (at 95% per row it
would be up to 1 − 0.95^k, 62% for 19 rows). The ROC curves are drawn on log-log axes beside the reported
(ε, δ) bound on the trade-off (TPR ≤ e^ε FPR + δ) and the μ-GDP curve of the GDP approximation.
"""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import time

import numpy as np
import pandas as pd
from scipy import optimize, stats as st

from . import env, plots, report
from .runner import RunSpec, child_cpu_seconds, failed_section, run_all
from .stats import family_false_alarm

FAMILY_ALPHA = 0.05


@dataclasses.dataclass(frozen=True)
class Row:
    name: str
    what: str
    expected: str
    args: tuple[str, ...] = ()


def _s(*pairs: str) -> tuple[str, ...]:
    """--set key=value pairs as CLI words."""
    out = []
    for p in pairs:
        out += ["--set", p] if "=" in p and not p.startswith("--") else [p]
    return tuple(out)


# The base configuration is experiments/audit_logistic.toml (5 clients, N_c = 1,000, T = 10, full batch,
# sigma = sqrt(10): mu = 1).
AUDITS = [
    Row("poisson_full_T1", "Poisson, full batch, 1 round, σ = 1 (the Gaussian mechanism)", "consistent",
        _s("schedule.rounds=1", "dp.sigma=1")),
    Row("poisson_full_T10", "Poisson, full batch, 10 rounds, σ = √10", "consistent"),
    Row("poisson_q0.1_T10", "Poisson, q = 0.1, 10 rounds, σ = 1 (likelihood ratio)", "consistent",
        _s("schedule.sample_size=100", "dp.sigma=1")),
    Row("poisson_short_run", "Poisson, q = 0.05, one epoch (20 rounds), L2 logistic, inverse-sqrt steps", "consistent",
        _s("schedule.sample_size=50", "schedule.rounds=0", "schedule.epochs=1", "model.kind=logistic_l2",
           "schedule.step_rule=inverse_sqrt", "schedule.beta=0.01", "dp.sigma=1")),
    Row("fixed_q0.1_T10", "fixed-size, q = 0.1, 10 rounds, σ = 1", "consistent",
        _s("dp.sampling=fixed_size_without_replacement", "schedule.sample_size=100", "dp.sigma=1")),
    Row("fixed_q0.5_T1_opposite", "fixed-size, q = 0.5, 1 round, σ = 1, opposite records (replace-one worst case)",
        "consistent", _s("dp.sampling=fixed_size_without_replacement", "schedule.sample_size=500", "schedule.rounds=1",
                         "dp.sigma=1") + ("--canary", "opposite")),
    Row("shuffle_2_epochs", "shuffle, s = 500 (2 epochs in 4 rounds), σ = 2", "consistent",
        _s("dp.sampling=shuffle", "schedule.sample_size=500", "schedule.rounds=4", "dp.sigma=2")),
    Row("mlp_poisson_q0.1_T10", "MLP (16 hidden), Poisson, q = 0.1, 10 rounds, σ = 1", "consistent",
        _s("model.kind=mlp", "model.hidden=[16]", "schedule.sample_size=100", "dp.sigma=1")),
    Row("poisson_full_T10_final_model", "as poisson_full_T10, final-model view (other clients' noise too)",
        "consistent", ("--view", "final-model")),
    Row("poisson_full_T10_mislabelled", "as poisson_full_T10, a mislabelled real record, final-model loss (black box)",
        "consistent", ("--canary", "mislabelled", "--view", "final-model")),
    Row("poisson_full_T10_one_run", "as poisson_full_T10, one-run audit with 1,000 canaries", "consistent",
        ("--mode", "one-run", "--canaries", "1000")),
    Row("poisson_full_T10_adaptive_clip", "as poisson_full_T10, adaptive clipping (count noise σ_b = 3, "
        "accounted with the gradient as one Gaussian)", "consistent",
        _s("dp.clip_mode=adaptive", "dp.clip_count_sigma=3")),
    Row("FAULT_noise_0.7sigma", "fault: noise 0.7σ accounted as σ (as poisson_full_T10)", "VIOLATION",
        ("--test-noise-scale", "0.7")),
    Row("FAULT_old_fixed_size_pair", "fault: fixed_q0.5_T1_opposite accounted with the old pair (1−q)N(0)+qN(1)",
        "VIOLATION", _s("dp.sampling=fixed_size_without_replacement", "schedule.sample_size=500", "schedule.rounds=1",
                        "dp.sigma=1") + ("--canary", "opposite", "--test-accounted-sampling", "poisson")),
]

# One-run audits attached to a training run (`asyncdp train --set audit.canaries=m`).
TRAIN_AUDITS = [
    Row("train_dirac_fixed_full_T10", "Dirac canaries, fixed-size full batch (each planted canary replaces a record), "
        "10 rounds, σ = √10", "consistent", ("dp.sampling=fixed_size_without_replacement",)),
    Row("train_dirac_poisson_s1000_T10", "Dirac canaries, Poisson, s = 1000 (client 0: q = 1000 / (1000 + planted)), "
        "10 rounds, σ = √10", "consistent"),
    Row("train_dirac_poisson_s100_T10", "Dirac canaries, Poisson, s = 100, 10 rounds, σ = 1 (likelihood ratio)",
        "consistent", ("schedule.sample_size=100", "dp.sigma=1")),
    Row("train_dirac_fixed_q0.1_T10", "Dirac canaries, fixed-size, q = 0.1, 10 rounds, σ = 1 (replace-one)",
        "consistent", ("dp.sampling=fixed_size_without_replacement", "schedule.sample_size=100", "dp.sigma=1")),
    Row("train_mislabelled_fixed_full_T10", "mislabelled records, fixed-size full batch, 10 rounds, final model",
        "consistent", ("dp.sampling=fixed_size_without_replacement", "audit.canary=mislabelled")),
    Row("FAULT_train_noise_0.05sigma", "fault: noise 0.05σ accounted as σ = 16 (fixed-size full batch, 10 rounds)",
        "VIOLATION", ("dp.sampling=fixed_size_without_replacement", "dp.sigma=16", "audit.test_noise_scale=0.05")),
]


def _overrides(words: tuple[str, ...]) -> dict:
    out = {}
    for w in words:
        key, value = w.split("=", 1)
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def gdp_mu(epsilon: float, delta: float) -> float:
    """μ of the μ-GDP curve whose δ(ε) passes through (ε, δ) (Dong, Roth & Su 2022, Corollary 2.13):
    δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)."""
    if not (epsilon > 0 and 0 < delta < 1):
        return math.nan

    def f(mu):
        return st.norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * st.norm.cdf(-epsilon / mu - mu / 2) - delta

    try:
        return optimize.brentq(f, 1e-6, 100.0)
    except ValueError:
        return math.nan


def main(args) -> int:
    out, log = args.output, args.log
    repo = env.repo_dir()
    binary = env.asyncdp_binary()
    libsvm = env.resolve_libsvm(args.libsvm)
    config = repo / "experiments" / "audit_logistic.toml"
    runs_per_side = 50 if args.scale == "tiny" else 2000
    canaries = 100 if args.scale == "tiny" else 1000
    k = len(AUDITS) + len(TRAIN_AUDITS)
    confidence = 1 - FAMILY_ALPHA / k
    data = [w for key, value in libsvm.overrides().items() for w in ("--set", f"{key}={value}")]
    start = time.monotonic()
    log(f"audit: {len(AUDITS)} audits and {len(TRAIN_AUDITS)} training-run audits on {libsvm.name}, "
        f"{runs_per_side} runs per side, confidence {confidence:.5f} each (Bonferroni over {k})")
    failures = []
    rows = []
    for row in AUDITS:
        log(f"audit: {row.name} ({row.what})")
        folder = out.path(f"runs/{row.name}")
        # The one-run audit trains once: it refuses the multi-run audit's --runs and --jobs.
        one_run = "one-run" in row.args
        multi = [] if one_run else ["--runs", str(runs_per_side), "--jobs", str(args.jobs_given or 0)]
        cmd = [str(binary), "audit", "--config", str(config), *data, *multi, "--confidence", f"{confidence:.6f}",
               "--quiet", *row.args, "--out", str(folder)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        out.write_text(f"runs/{row.name}.log", " ".join(cmd) + "\n" + done.stdout + done.stderr)
        if done.returncode not in (0, 3):  # 3 = VIOLATION, a result
            failures.append(f"`runs/{row.name}`: asyncdp audit exited {done.returncode}: "
                            f"{done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ''}")
            continue
        a = json.loads((folder / "audit.json").read_text())
        reported = a["reported"]
        pld = reported["pld"]["epsilon"] if reported.get("pld", {}).get("available") else math.nan
        gdp = reported["gdp"]["epsilon"] if reported.get("gdp", {}).get("available") else math.nan
        multi = a.get("multi_run") or {}
        rows.append({
            "run": row.name, "what": row.what, "mode": a["audit"]["mode"], "view": a["audit"]["view"],
            "sampling": a["audited"]["sampling"], "statistic": a["audit"]["statistic"],
            "rounds": a["audited"]["rounds"], "sigma": a["audited"]["sigma"], "delta": a["audited"]["delta"],
            "eps_rdp": reported["rdp"]["epsilon"] if reported.get("rdp", {}).get("available") else math.nan,
            "eps_pld": pld, "eps_gdp": gdp, "eps_lower": a["eps_lower"]["epsilon"],
            "gdp_counts": (multi.get("gdp_counts") or {}).get("epsilon", math.nan),
            "ratio_lower": (a.get("ratio") or {}).get("eps_lower_over_pld", math.nan),
            "roc_area": multi.get("roc_area", math.nan), "verdict": a["verdict"], "expected": row.expected,
            "confidence": a["audit"]["confidence"], "trainings": a.get("trainings"), "wall_seconds": a["wall_seconds"],
        })
    audits = pd.DataFrame(rows)
    audits.to_csv(out.path("audit.csv"), index=False)

    specs = [RunSpec(r.name, config, {**libsvm.overrides(), "audit.canaries": canaries,
                                      "audit.confidence": round(confidence, 6), **_overrides(r.args)}, 1,
                     {"expected": r.expected, "what": r.what}) for r in TRAIN_AUDITS]
    trained = run_all(specs, out.path("runs"), args.jobs, log)
    train_rows = []
    for r in trained:
        if not r.ok:
            # A VIOLATION verdict of a training-run audit is a result: the run finished and reported it.
            failures.append(f"`runs/{r.spec.name}`: {r.error}")
            continue
        au = r.summary["audit"]
        train_rows.append({
            "run": r.spec.name, "what": r.spec.labels["what"], "eps_rdp": au["reported"]["rdp"]["epsilon"],
            "eps_pld": au["reported"]["pld"]["epsilon"], "eps_lower": au["eps_lower"]["epsilon"],
            "canaries": au["one_run"]["canaries"], "planted": au["one_run"]["planted"],
            "correct": au["one_run"]["correct"], "guesses": au["one_run"]["guesses"], "verdict": au["verdict"],
            "eps_fdp": _number(au["one_run"]["fdp"]["approximate_dp"]["epsilon"]),
            "eps_fdp_gaussian": _number(au["one_run"]["fdp"]["gaussian"]["epsilon"]),
            "expected": r.spec.labels["expected"], "test_accuracy": r.summary.get("test_accuracy"),
            "wall_seconds": r.summary["wall_seconds"]})
    train = pd.DataFrame(train_rows)
    train.to_csv(out.path("train_audit.csv"), index=False)
    figures = _figures(out, audits, args.scale)
    seconds = time.monotonic() - start
    unexpected = [r["run"] for r in rows + train_rows if r["verdict"] != r["expected"]]
    lines = _report(args, libsvm, audits, train, runs_per_side, canaries, confidence, k, figures, seconds,
                    child_cpu_seconds(), unexpected, failures)
    lines.append(failed_section(trained))
    out.write_text("REPORT.md", "\n".join(lines))
    log(f"audit: done in {seconds:.0f} s")
    if failures:
        return 1
    if unexpected:
        log(f"audit: a verdict differs from the expected one: {', '.join(unexpected)} (UNEXPECTED in REPORT.md)")
        return 0 if args.scale == "tiny" else 1  # tiny: 50 runs a side cannot resolve the FAULT rows
    return 0


def _number(x) -> float:
    """A JSON number, null (not finite) as NaN."""
    return math.nan if x is None else float(x)


def _roc_rows(out, a: dict) -> list[dict]:
    roc = pd.read_csv(out.path(f"runs/{a['run']}/roc.csv"))
    panel = a["run"]
    rows = [{"panel": panel, "series": "empirical ROC", "kind": "curve", "x": f, "mean": t, "low": math.nan,
             "high": math.nan, "n": 1} for f, t in zip(roc["fpr"], roc["tpr"])]
    fpr = np.logspace(-4, 0, 60)
    if math.isfinite(a["eps_pld"]):
        bound = np.minimum(1.0, np.minimum(math.exp(a["eps_pld"]) * fpr + a["delta"],
                                           1 - math.exp(-a["eps_pld"]) * (1 - a["delta"] - fpr)))
        rows += [{"panel": panel, "series": "reported (ε_PLD, δ): the most TPR allowed", "kind": "curve", "x": f,
                  "mean": b, "low": math.nan, "high": math.nan, "n": 1} for f, b in zip(fpr, bound)]
    # The whole reported privacy curve (the tested profile's trade-off, asyncdp audit's tradeoff.csv): at
    # every FPR the most TPR any test can reach under it — at most the single (ε_PLD, δ) line above.
    curve = pd.read_csv(out.path(f"runs/{a['run']}/tradeoff.csv"))
    rows += [{"panel": panel, "series": "reported privacy curve: the most TPR allowed", "kind": "curve", "x": f,
              "mean": t, "low": math.nan, "high": math.nan, "n": 1}
             for f, t in zip(curve["alpha"], curve["tpr_allowed"])]
    mu = gdp_mu(a["eps_gdp"], a["delta"]) if math.isfinite(a["eps_gdp"]) else math.nan
    if math.isfinite(mu):
        curve = st.norm.cdf(st.norm.ppf(fpr) + mu)
        rows += [{"panel": panel, "series": "μ-GDP curve of the GDP approximation", "kind": "curve", "x": f,
                  "mean": c, "low": math.nan, "high": math.nan, "n": 1} for f, c in zip(fpr, curve)]
    rows += [{"panel": panel, "series": "chance (TPR = FPR)", "kind": "curve", "x": f, "mean": f, "low": math.nan,
              "high": math.nan, "n": 1} for f in fpr]
    return rows


def _figures(out, audits: pd.DataFrame, scale: str) -> dict:
    note = "TINY SCALE: a smoke test of the pipeline, not a result" if scale == "tiny" else ""
    made = {}
    multi = audits[audits["mode"] == "multi"]
    rows = []
    for a in multi.to_dict("records"):
        rows += _roc_rows(out, a)
    if rows:
        made["roc"] = plots.save(out, plots.LineFigure(
            "roc", "Audit ROC curves (log-log) against the reported bounds", "false positive rate",
            "true positive rate", logx=True, logy=True, note=note,
            styles=(("reported (ε_PLD, δ): the most TPR allowed", "--", "black"),
                    ("reported privacy curve: the most TPR allowed", "-", "tab:red"),
                    ("μ-GDP curve of the GDP approximation", "-.", "tab:green"),
                    ("chance (TPR = FPR)", ":", "0.5"))), plots.table(rows))
    rows = []
    for a in multi.to_dict("records"):
        h = pd.read_csv(out.path(f"runs/{a['run']}/histogram.csv"))
        centre = (h["bin_low"] + h["bin_high"]) / 2
        for series, column in (("with the canary", "in_count"), ("without the canary", "out_count")):
            rows += [{"panel": a["run"], "series": series, "kind": "curve", "x": x, "mean": y, "low": math.nan,
                      "high": math.nan, "n": 1} for x, y in zip(centre, h[column])]
    if rows:
        made["scores"] = plots.save(out, plots.LineFigure(
            "scores", "Audit score distributions with and without the canary", "score (higher: canary looks present)",
            "runs", note=note), plots.table(rows))
    return made


def _report(args, libsvm, audits, train, runs_per_side, canaries, confidence, k, figures, seconds, cpu, unexpected,
            failures) -> list[str]:
    def f(x):
        return report.cell(x, 3)

    def verdict(r):
        return r["verdict"] + (" **UNEXPECTED**" if r["verdict"] != r["expected"] else "")

    honest = int((audits["expected"] == "consistent").sum() + (train["expected"] == "consistent").sum()) \
        if len(train) else int((audits["expected"] == "consistent").sum())
    lines = ["# Empirical privacy audit of asyncdp", "",
             report.provenance(args.command, args.scale, args.jobs), ""]
    if args.scale == "tiny":
        lines += ["> **Tiny scale**: 50 runs a side cannot resolve the FAULT rows; the table tests the pipeline.", ""]
    honest_ratio = audits.loc[audits["expected"] == "consistent", "ratio_lower"]
    n_ok = int((audits["verdict"] == audits["expected"]).sum()) + int((train["verdict"] == train["expected"]).sum()
                                                                        if len(train) else 0)
    lines += [
        "## Summary", "",
        f"* **{n_ok} of {len(audits) + len(train)}** audit rows give the expected verdict"
        + (f"; unexpected: {', '.join(unexpected)}." if unexpected else "."),
        f"* Every verdict is made at confidence {confidence:.5f} (Bonferroni over the {k} rows), so the chance that "
        f"any of the {honest} honest rows is flagged by chance is at most {FAMILY_ALPHA:.0%}; at 95% per row it would "
        f"be up to {family_false_alarm(honest):.0%} (1 − 0.95^{honest}).",
        f"* Tightness: ε_lower / ε_PLD ranges from {honest_ratio.min():.3g} to {honest_ratio.max():.3g} over the "
        f"{len(honest_ratio)} honest audit rows (1 = the accountant is tight for this canary and view).",
        "", f"Total {seconds:.0f} s wall, {cpu:.0f} CPU s in worker processes (the audit commands use every core).", "",
        "## Audits", "",
        f"Each row is one `asyncdp audit` of client 0 (docs/audit.md): {runs_per_side} trainings with a canary in the "
        f"client's data and {runs_per_side} without (multi-run rows), each through the real client/server protocol on "
        f"the virtual runtime with its own seed, data {libsvm.name} ({libsvm.origin}). The white-box observer sees every "
        "(i, U) the client sends. **ε_lower** is the assumption-free lower bound at the run's δ; the **verdict** is the "
        "assumption-free test of the whole reported δ(ε) profile (VIOLATION iff refuted). **GDP-counts** (Nasr et al. "
        "2023) assumes a Gaussian trade-off curve: it measures tightness, never the verdict. The FAULT rows make the "
        "report wrong on purpose and must be flagged.", "",
        report.table(["config", "what", "ε RDP", "ε PLD", "ε GDP (approx.)", "ε_lower", "ε GDP-counts",
                      "ε_lower / ε_PLD", "ROC area", "verdict", "expected", "trainings", "wall s"],
                     [[r["run"], r["what"], f(r["eps_rdp"]), f(r["eps_pld"]), f(r["eps_gdp"]), f"**{f(r['eps_lower'])}**",
                       f(r["gdp_counts"]), f(r["ratio_lower"]), f(r["roc_area"]), verdict(r), r["expected"],
                       r["trainings"], f"{r['wall_seconds']:.1f}"] for r in audits.to_dict("records")]),
        "",
    ]
    if "roc" in figures:
        lines += [report.image("ROC curves", figures["roc"]), "",
                  "On log-log axes the low-FPR corner, where privacy is decided, is visible (points at FPR = 0 "
                  "cannot be drawn there: the empirical curve starts at 1 / runs per side). The dashed boundary is what the reported (ε_PLD, δ) allows (TPR ≤ e^ε FPR + δ and its complement); an "
                  "empirical ROC above it would refute the report. The μ-GDP curve is the GDP approximation's "
                  "trade-off, not a bound.", ""]
    if "scores" in figures:
        lines += [report.image("score distributions", figures["scores"]), ""]
    lines += [
        "## One-run audits attached to training runs", "",
        f"Each row is one `asyncdp train --set audit.canaries={canaries}` (Steinke, Nasr & Jagielski 2023): the "
        "canaries are planted in client 0's data, each with probability ½ from the run's seed, and are part of the "
        "data the run trains on and accounts. The verdict is VIOLATION iff the one-run ε_lower exceeds an "
        "upper-bound accountant's ε for client 0. One run cannot certify much more than ln(r / ln(1/β)) with r "
        "guesses, so these rows are far from tight by design and the fault they catch is gross. Beside ε_lower, not in "
        "the verdict: the f-DP one-run estimates (Mahloujifar, Melis & Chaudhuri 2024) on the same guesses, "
        "assumption-free (the (ε, δ) trade-off family) and under a Gaussian trade-off (μ-GDP, valid only if the "
        "training's trade-off is Gaussian).", "",
    ]
    if len(train):
        lines.append(report.table(
            ["config", "what", "ε RDP", "ε PLD", "ε_lower", "f-DP ε (assumption-free)", "f-DP ε (if Gaussian)",
             "canaries (planted)", "correct / guesses", "verdict", "expected", "test accuracy", "wall s"],
            [[r["run"], r["what"], f(r["eps_rdp"]), f(r["eps_pld"]), f"**{f(r['eps_lower'])}**", f(r["eps_fdp"]),
              f(r["eps_fdp_gaussian"]),
              f"{r['canaries']} ({r['planted']})", f"{r['correct']} / {r['guesses']}", verdict(r), r["expected"],
              f(r["test_accuracy"]), f"{r['wall_seconds']:.1f}"] for r in train.to_dict("records")]))
    lines += ["", "Per-row outputs: `runs/NAME/audit.json` (every bound with its assumptions, the resolved configuration), "
              "`scores.csv`, `histogram.csv`, `roc.csv`, `tradeoff.csv`; all rows in `audit.csv` and `train_audit.csv`; each "
              "figure's table in `plots/*.csv`.", ""]
    if failures:
        lines += ["## Failures", ""] + [f"* {x}" for x in failures] + [""]
    return lines
