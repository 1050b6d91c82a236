"""``run_experiments.sh proactive``: the proactive framework (Appendix E.1 and Figure 15; docs/theory.md §9,
"Proactive phases" and "Budget allocation").

(a) The Figure 15 flow: 5 clients with different accuracy targets and budgets (experiments/proactive_flow.toml,
    and a softmax flow on Fashion-MNIST when installed): per-client phases, pauses and re-joins marked on the
    global model's accuracy curve beside each client's target, final check vs target (reached / missed), ε
    vs budget.
(b) Budget allocation at equal ε_total: uniform, decreasing noise, increasing noise and adaptive phases over
    seeds, every client holding the same rows; each strategy against uniform as a paired difference with a
    95% interval and a verdict.
"""

from __future__ import annotations

import math
import re
import time
import tomllib

import pandas as pd

from . import env, plots, report
from .runner import RunSpec, child_cpu_seconds, failed_section, one_thread, run_all
from .stats import (ACCURACY, FAILS, HOLDS, INCONCLUSIVE, family_false_alarm, mean_interval, paired_by_seed,
                    verdict_above)

STRATEGIES = {
    "uniform": ("uniform σ (calibrated for the whole plan)", {}),
    "decreasing_noise": ("decreasing noise σ_j ∝ (2, 1.5, 1)", {"dp.sigma_schedule": [2.0, 1.5, 1.0]}),
    "increasing_noise": ("increasing noise σ_j ∝ (1, 1.5, 2)", {"dp.sigma_schedule": [1.0, 1.5, 2.0]}),
    # Adaptive phases: the same total budget, σ_j = c·(2, 1.5, 1) calibrated for all three phases, and the
    # private accuracy checks of Figure 15 between phases (a client at target pauses and saves the rest).
    "adaptive": ("adaptive phases σ_j = c·(2, 1.5, 1) with accuracy checks",
                 {"dp.epsilon": 0, "targets.accuracy": 0.835, "targets.epsilon": 1, "targets.enforce": "dp_accountant",
                  "proactive.phase_sizing": "calibrated", "proactive.phase_sigmas": [2.0, 1.5, 1.0],
                  "proactive.phase_epochs": [1.0, 1.0, 1.0]}),
}
EVENT = re.compile(r"^(?P<kind>[a-z_]+)@k=(?P<k>\d+)(\((acc=(?P<acc>[0-9.eE+-]+))\))?$")
EVENT_LABELS = {"pause": "pause", "rejoin": "re-join", "target_reached": "last check: target reached",
                "target_missed": "last check: target missed", "check": "phase-end check"}
MARKERS = (("pause", "v"), ("re-join", "^"), ("last check: target reached", "o"), ("last check: target missed", "X"),
           ("phase-end check", "."))


def main(args) -> int:
    out, log, repo = args.output, args.log, env.repo_dir()
    libsvm = env.resolve_libsvm(args.libsvm)
    cfg = repo / "experiments"
    seeds = list(range(1, (args.seeds or (3 if args.scale == "tiny" else 5)) + 1))
    scale = {"data.eval_rows": 1000, "eval.points": 4} if args.scale == "tiny" else {}
    threads = one_thread(args.jobs > 1)
    common = {**scale, **threads, "output.diagnostics": True}
    start = time.monotonic()
    specs = [RunSpec(f"flow_{libsvm.name}", cfg / "proactive_flow.toml",
                     {**libsvm.overrides(), **common, "eval.points": 40 if args.scale != "tiny" else 4}, 1,
                     {"part": "flow", "data": libsvm.name})]
    fashion_note = ""
    try:
        images = env.resolve_images(args.images)
        specs.append(RunSpec(f"flow_{images.name}", cfg / "proactive_flow.toml",
                             {**images.overrides(), **common, "model.kind": "softmax",
                              "targets.client_accuracy": [0.6, 0.7, 0.75, 0.8, 0.9],
                              "eval.points": 40 if args.scale != "tiny" else 4}, 1,
                             {"part": "flow", "data": images.name}))
    except env.UsageError as e:
        fashion_note = f"Fashion-MNIST flow skipped: {e}"
        log(fashion_note)
    for seed in seeds:
        for key, (_, o) in STRATEGIES.items():
            specs.append(RunSpec(f"alloc_{key}_s{seed}", cfg / "proactive_allocation.toml",
                                 {**libsvm.overrides(), **common, **o}, seed, {"part": "allocation", "strategy": key}))
    log(f"proactive: {len(specs)} runs (flow, and 4 allocation strategies x {len(seeds)} seeds)")
    results = run_all(specs, out.path("runs"), args.jobs, log)
    run_seconds = time.monotonic() - start

    flows = [r for r in results if r.spec.labels["part"] == "flow" and r.ok]
    flow_rows, figures = [], {}
    for r in flows:
        flow_rows += _flow_rows(r)
        figures[r.spec.name] = _flow_figure(out, r, args.scale)
    flow = pd.DataFrame(flow_rows)
    flow.to_csv(out.path("flow.csv"), index=False)

    alloc = pd.DataFrame([{"strategy": r.spec.labels["strategy"], "seed": r.spec.seed,
                           "test_accuracy": r.summary["test_accuracy"], "epsilon_pld": _pld(r.summary),
                           # the rows each client holds (adaptive phases hold 20% of them out for their checks)
                           "rows_per_client": int(tomllib.loads(r.summary["config"])["data"]["rows_per_client"]),
                           "training_rows_per_client": int(r.summary["records_per_client"])}
                          for r in results if r.spec.labels["part"] == "allocation" and r.ok])
    alloc.to_csv(out.path("allocation.csv"), index=False)
    majority = env.majority_rate(libsvm)
    comparisons = _compare(alloc, majority, args.scale)
    comparisons.to_csv(out.path("allocation_comparison.csv"), index=False)
    figures["allocation"] = _allocation_figure(out, results, majority, libsvm.name, args.scale)
    cpu = child_cpu_seconds()
    text = _report(args, libsvm, flow, alloc, comparisons, figures, majority, run_seconds, cpu, fashion_note, seeds)
    out.write_text("REPORT.md", text + "\n" + failed_section(results))
    log(f"proactive: {len(results)} runs in {run_seconds:.0f} s")
    return 0 if all(r.ok for r in results) else 1


def _pld(summary: dict) -> float:
    eps = (summary.get("epsilon") or {}).get("pld")
    return math.inf if eps is None else float(eps)


def _events(client: dict) -> list[tuple[str, int, float]]:
    out = []
    for text in client.get("events") or []:
        m = EVENT.match(text)
        if m is None:
            raise ValueError(f"unknown proactive event {text!r}")  # a renamed event must fail, never vanish
        out.append((m["kind"], int(m["k"]), float(m["acc"]) if m["acc"] else math.nan))
    return out


def _flow_rows(r) -> list[dict]:
    rows = []
    stops = r.clients["stop"].tolist()
    for c in r.summary["proactive"]["clients"]:
        ev = _events(c)
        last = next((e for e in reversed(ev) if e[0] in ("target_reached", "target_missed")), None)
        rows.append({
            "data": r.spec.labels["data"], "client": c["client"], "target_accuracy": c["target_accuracy"],
            "target_epsilon": c["target_epsilon"], "admitted": c["admitted"], "phases_run": c.get("phases_run", 0),
            "rounds": c["rounds"], "pauses": c["pauses"], "rejoins": c["rejoins"],
            "outcome": stops[c["client"]],  # clients.csv: target_reached, target_missed, not_admitted, ...
            "last_check_accuracy": last[2] if last else math.nan,
            "holdout_accuracy_final_model": c.get("diag_holdout_accuracy_final_model", math.nan),
            "epsilon_pld": c["epsilon_pld"], "epsilon_rdp": c["epsilon_rdp"], "e1_epsilon": c.get("e1_epsilon"),
            "within_budget": c["within_target"],
            "events": " ".join(c.get("events") or []) if c["admitted"] else f"not admitted: {c['plan_note']}",
        })
    return rows


def _flow_figure(out, r, scale: str) -> str:
    """The global model's test accuracy against the global round k, each client's target as a line and its
    pauses, re-joins and last checks as markers at the round and (private) check value they happened at."""
    panel = f"Figure 15 flow on {r.spec.labels['data']}"
    met = r.metrics
    rows = [{"panel": panel, "series": "global model, test accuracy", "kind": "curve", "x": float(k), "mean": float(a),
             "low": math.nan, "high": math.nan, "n": 1} for k, a in zip(met["global_round"], met["test_accuracy"])]
    styles, groups = [], []
    for c in r.summary["proactive"]["clients"]:
        if not c["admitted"]:
            continue
        label = f"target of client {c['client']}"
        color = f"C{1 + c['client'] % 9}"
        rows.append(plots.baseline_row(panel, label, c["target_accuracy"]))
        styles.append((label, ":", color))
        groups.append((str(c["client"]), color))
        for kind, k, acc in _events(c):
            rows.append({"panel": panel, "series": EVENT_LABELS[kind], "kind": "event", "x": float(k), "mean": acc,
                         "low": math.nan, "high": math.nan, "n": 1, "group": str(c["client"])})
    note = "TINY SCALE: a smoke test of the pipeline, not a result" if scale == "tiny" else ""
    return plots.save(out, plots.LineFigure(
        r.spec.name, "Proactive flow: targets, phase-end checks, pauses and re-joins\n(markers: a client's private, "
        "noisy check value, in the colour of its target)", "global round k", "accuracy", note=note,
        bounds=(0.0, 1.0), styles=tuple(styles), markers=MARKERS, group_colors=tuple(groups)),
        plots.table(rows))


def _compare(alloc: pd.DataFrame, majority: float, scale: str) -> pd.DataFrame:
    rows = []
    uniform = alloc[alloc["strategy"] == "uniform"].set_index("seed")
    for key in STRATEGIES:
        g = alloc[alloc["strategy"] == key].set_index("seed")
        if g.empty:
            continue
        acc = mean_interval(g["test_accuracy"], bounds=ACCURACY)
        row = {"strategy": key, "label": STRATEGIES[key][0], "n": len(g), "accuracy": acc.mean,
               "accuracy_low": acc.low, "accuracy_high": acc.high, "epsilon_pld_max": g["epsilon_pld"].max(),
               "rows_per_client": int(g["rows_per_client"].iloc[0])}
        if key != "uniform" and not uniform.empty:
            d = paired_by_seed(g.reset_index(), uniform.reset_index(), "test_accuracy")
            row.update({"minus_uniform": d.mean, "minus_uniform_low": d.low, "minus_uniform_high": d.high})
            if scale == "tiny":
                row["verdict"] = "no verdict (tiny scale)"
            elif not (acc.low > majority):
                row["verdict"] = "no verdict: not above the majority class"
            else:
                row["verdict"] = verdict_above(d, 0.0)
        rows.append(row)
    return pd.DataFrame(rows)


def _allocation_figure(out, results, majority: float, data: str, scale: str) -> str:
    rows = []
    panel = f"budget allocation at equal ε on {data}"
    for key, (label, _) in STRATEGIES.items():
        curves = [(r.metrics["gradients_per_client"].to_numpy(float), r.metrics["test_accuracy"].to_numpy(float))
                  for r in results if r.ok and r.spec.labels.get("strategy") == key]
        rows += plots.curve_rows(panel, label, curves)
    rows.append(plots.baseline_row(panel, "baseline: majority class", majority))
    note = "TINY SCALE: a smoke test of the pipeline, not a result" if scale == "tiny" else ""
    return plots.save(out, plots.LineFigure(
        "allocation", "Budget allocation at equal ε_total, mean and 95% interval over seeds",
        "gradient computations per client", "test accuracy", note=note, bounds=(0.0, 1.0)), plots.table(rows))


def _report(args, libsvm, flow, alloc, comparisons, figures, majority, run_seconds, cpu, fashion_note, seeds) -> str:
    f = report.cell

    admitted = flow[flow["admitted"]]
    lines = ["# Proactive framework: targets, phases and budget allocation", "",
             report.provenance(args.command, args.scale, args.jobs), ""]
    if args.scale == "tiny":
        lines += ["> **Tiny scale**: a smoke test of the pipeline; no verdict is drawn.", ""]
    lines += ["## Summary", ""]
    for data, g in admitted.groupby("data", sort=False):
        lines.append(f"* Flow on {data}: {len(g)} of {len(flow[flow['data'] == data])} clients admitted; "
                     f"{int((g['outcome'] == 'target_reached').sum())} reached their target at the last check, "
                     f"{int((g['outcome'] == 'target_missed').sum())} missed it; {int(g['pauses'].sum())} pauses and "
                     f"{int(g['rejoins'].sum())} re-joins; every client within its budget: "
                     f"{'yes' if g['within_budget'].all() else 'NO'} (largest ε PLD {g['epsilon_pld'].max():.3g}).")
    decided = comparisons.dropna(subset=["verdict"]) if "verdict" in comparisons else comparisons.iloc[0:0]
    for r in decided.to_dict("records"):
        lines.append(f"* {r['label']} minus uniform, final test accuracy: {_iv(r, 'minus_uniform')} over {r['n']} "
                     f"paired seeds: {report.verdict(r['verdict'])} (claim: better than uniform).")
    n_verdicts = sum(1 for v in decided.get("verdict", []) if v in (HOLDS, FAILS, INCONCLUSIVE))
    if n_verdicts:
        lines.append(f"* {n_verdicts} verdicts at 95% each: the chance of at least one decided by chance is up to "
                     f"{family_false_alarm(n_verdicts):.0%}.")
    lines += ["", f"Runs: {run_seconds:.0f} s wall, {cpu:.0f} CPU s. Data: {libsvm.origin}."]
    if fashion_note:
        lines += ["", fashion_note]
    lines += [
        "", "## (a) Figure 15 flow: per-client phases, pauses and re-joins, final check vs target, ε vs budget", "",
        "Each client plans its phases with the E.1 calculator (experiments/proactive_flow.toml), checks the last global "
        "model it received on its held-out rows after each phase, and pauses at target, re-joining when a later model "
        "checks below it. Each check is private: the held-out accuracy plus Gaussian noise costing 5% of the budget "
        "(summary.json accuracy_checks), so a check can pass or fail by chance — that is what the re-joins show. "
        "**outcome** is clients.csv's stop column: target_reached / target_missed at the last check. ε PLD / ε RDP: "
        "every round of the client's admitted plan, composed heterogeneously — upper bounds that hold whatever the "
        "pauses (the rounds actually run are `epsilon_realised_tally` in summary.json); ε E.1: the paper's Theorem "
        "B.4 analysis of the same phases. The held-out accuracy of the final model is a non-private diagnostic.", "",
        report.table(["data", "client", "target acc", "budget ε", "phases run", "pauses", "re-joins", "outcome",
                      "last check (private)", "held-out acc, final model (diagnostic)", "ε PLD", "ε RDP", "ε E.1",
                      "events"],
                     [[r["data"], r["client"], r["target_accuracy"], r["target_epsilon"], r["phases_run"], r["pauses"],
                       r["rejoins"], f"**{r['outcome']}**", f(r["last_check_accuracy"]),
                       f(r["holdout_accuracy_final_model"]), f(r["epsilon_pld"]), f(r["epsilon_rdp"]),
                       f(r["e1_epsilon"]), r["events"]] for r in flow.to_dict("records")]),
        "",
    ]
    for name, path in figures.items():
        if name.startswith("flow_"):
            lines += [report.image(name, path), ""]
    lines += [
        "## (b) Budget allocation at equal ε_total = 1 (PLD, δ = 1/N_c)", "",
        "Every strategy is calibrated by the PLD accountant so the whole plan spends the same ε_total "
        "(experiments/proactive_allocation.toml), and every client holds the same rows "
        f"({int(alloc['rows_per_client'].iloc[0]) if len(alloc) else 0} per client): adaptive phases hold out 20% of "
        "them for their accuracy checks, the price of adaptivity. Each strategy is compared with uniform on the same "
        f"seeds (paired); baseline: the majority class of the test set, {majority:.4f}.", "",
        report.table(["strategy", "seeds", "final test accuracy [95%]", "ε PLD (max)", "minus uniform [95%]", "verdict"],
                     [[r["label"], r["n"], _iv(r, "accuracy"), f(r["epsilon_pld_max"]),
                       _iv(r, "minus_uniform") if r["strategy"] != "uniform" else "",
                       report.verdict(r.get("verdict", "")) if r["strategy"] != "uniform" else ""]
                      for r in comparisons.to_dict("records")]),
        "", report.image("allocation", figures["allocation"]), "",
        "Files: `flow.csv`, `allocation.csv`, `allocation_comparison.csv`, `plots/*.csv` (each figure's table); "
        "every run in `runs/*/` (phases.csv, clients.csv, summary.json, config.resolved.toml).", ""]
    return "\n".join(lines)


def _iv(row: dict, column: str) -> str:
    m, lo, hi = row.get(column), row.get(f"{column}_low"), row.get(f"{column}_high")
    if m is None or (isinstance(m, float) and math.isnan(m)):
        return ""
    if lo is None or (isinstance(lo, float) and math.isnan(lo)):
        return f"{m:+.4f}" if column.startswith("minus") else f"{m:.4f}"
    fmt = "{:+.4f}" if column.startswith("minus") else "{:.4f}"
    return f"{fmt.format(m)} [{fmt.format(lo)}, {fmt.format(hi)}]"
