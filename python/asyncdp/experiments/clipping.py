"""``run_experiments.sh clipping``: fixed against adaptive clipping (Andrew et al. 2021; docs/theory.md §2,
"Adaptive clipping") at equal ε, over seeds.

Fixed clipping uses the paper's C (chosen from its utility graph: 0.1 for logistic regression on a9a, 0.025
for LeNet). Adaptive clipping starts from the same C and follows the median of each client's per-example
gradient norms (Andrew et al.'s defaults: quantile 0.5, learning rate 0.2, count noise σ_b = s/20: 1.3 for
a9a's s = 26, 18.5 for LeNet's s = 370), paying for the noisy count out of the same budget: σ is calibrated for the combined multiplier (σ⁻² + σ_b⁻²)^(−1/2) to the same ε, so the
gradients of the adaptive runs carry more noise. The question the REPORT answers: at equal ε, does not
having to tune C cost or gain accuracy?
"""

from __future__ import annotations

import dataclasses
import math
import time

import pandas as pd

from . import env, plots, report
from .runner import RunSpec, child_cpu_seconds, failed_section, one_thread, run_all
from .stats import (ACCURACY, FAILS, HOLDS, INCONCLUSIVE, family_false_alarm, mean_interval, paired_by_seed,
                    verdict_above)


@dataclasses.dataclass(frozen=True)
class Task:
    key: str
    label: str
    config: str
    epsilons: tuple[float, ...]
    count_sigma: float
    tiny: dict
    default: dict


TASKS = [
    Task("a9a", "logistic regression on a9a", "quick_plain_convex.toml", (0.5, 2.0), 1.3,
         {"schedule.iterations": 3000, "eval.points": 6}, {"eval.points": 20}),
    Task("lenet", "LeNet-5 on Fashion-MNIST", "quick_lenet.toml", (2.0,), 18.5,
         {"data.rows_per_client": 300, "schedule.iterations": 600, "schedule.sample_size": 60, "data.eval_rows": 200,
          "eval.points": 3}, {"eval.points": 12}),
]
MODES = {"fixed": "fixed C (the paper's)", "adaptive": "adaptive C (median, lr 0.2)"}


def main(args) -> int:
    out, log, repo = args.output, args.log, env.repo_dir()
    libsvm = env.resolve_libsvm(args.libsvm)
    images = env.resolve_images(args.images)
    seeds = list(range(1, (args.seeds or (2 if args.scale == "tiny" else 5)) + 1))
    threads = one_thread(args.jobs > 1)
    start = time.monotonic()
    specs = []
    for task in TASKS:
        data = images if task.key == "lenet" else libsvm
        base = {**data.overrides(), **(task.tiny if args.scale == "tiny" else task.default), **threads}
        for e in task.epsilons:
            for mode in MODES:
                o = {**base, "dp.sigma": 0, "dp.epsilon": e}
                if mode == "adaptive":
                    o.update({"dp.clip_mode": "adaptive", "dp.clip_quantile": 0.5, "dp.clip_lr": 0.2,
                              "dp.clip_count_sigma": task.count_sigma})
                for seed in seeds:
                    specs.append(RunSpec(f"{task.key}_eps{e:g}_{mode}_s{seed}", repo / "experiments" / task.config, o,
                                         seed, {"task": task.key, "eps": e, "mode": mode}))
    log(f"clipping: {len(specs)} runs (fixed vs adaptive clipping at equal epsilon, {len(seeds)} seeds)")
    results = run_all(specs, out.path("runs"), args.jobs, log)
    run_seconds = time.monotonic() - start
    rows = []
    for r in results:
        row = {"run": r.spec.name, **r.spec.labels, "seed": r.spec.seed, "ok": r.ok, "error": r.error or ""}
        if r.ok:
            s = r.summary
            ac = (s.get("privacy") or {}).get("adaptive_clipping") or {}
            row.update({"sigma": float(s["sigma"]), "accounted_sigma": ac.get("accounted_noise_multiplier", s["sigma"]),
                        "eps_pld": float(s["epsilon"]["pld"]), "accuracy": float(s["test_accuracy"]),
                        "final_clip": float(r.metrics["clip"].iloc[-1]) if "clip" in r.metrics else float(s["clip"])})
        rows.append(row)
    runs = pd.DataFrame(rows)
    runs.to_csv(out.path("runs.csv"), index=False)
    ok = runs[runs["ok"]]
    majority = {"a9a": env.majority_rate(libsvm), "lenet": env.majority_rate(images, 200 if args.scale == "tiny" else 2000)}
    groups, checks = [], []
    for (task, e), g in ok.groupby(["task", "eps"], sort=False):
        fixed, adaptive = g[g["mode"] == "fixed"], g[g["mode"] == "adaptive"]
        for mode, part in (("fixed", fixed), ("adaptive", adaptive)):
            acc = mean_interval(part["accuracy"], bounds=ACCURACY)
            groups.append({"task": task, "eps": e, "mode": mode, "n": len(part), "sigma": part["sigma"].mean(),
                           "accounted_sigma": part["accounted_sigma"].mean(), "eps_pld_max": part["eps_pld"].max(),
                           "accuracy": acc.mean, "accuracy_low": acc.low, "accuracy_high": acc.high,
                           "final_clip": part["final_clip"].mean(), "majority": majority[task]})
        d = paired_by_seed(adaptive, fixed, "accuracy")
        above = all(mean_interval(p["accuracy"]).low > majority[task] for p in (fixed, adaptive) if len(p) > 1)
        verdict = ("no verdict (tiny scale)" if args.scale == "tiny" else
                   "no verdict: a group is not above the majority class" if not above else verdict_above(d, 0.0))
        checks.append({"claim": f"{task}, ε = {e:g}: adaptive clipping is more accurate than fixed C",
                       "measured": f"adaptive − fixed {d.text_n()}", "verdict": verdict})
    groups = pd.DataFrame(groups)
    groups.to_csv(out.path("groups.csv"), index=False)
    checks = pd.DataFrame(checks, columns=["claim", "measured", "verdict"])
    checks.to_csv(out.path("checks.csv"), index=False)
    figures = _figures(out, results, majority, args.scale)
    decided = checks[checks["verdict"].isin([HOLDS, FAILS, INCONCLUSIVE])]
    lines = ["# Fixed against adaptive clipping at equal ε", "",
             report.provenance(args.command, args.scale, args.jobs), ""]
    if args.scale == "tiny":
        lines += ["> **Tiny scale**: a smoke test of the pipeline; no verdict is drawn.", ""]
    lines += ["## Summary", ""]
    lines += [f"* {c['claim']}: {c['measured']}: {report.verdict(c['verdict'])}." for c in checks.to_dict("records")]
    if len(decided):
        lines.append(f"* {len(decided)} verdicts at 95%: up to {family_false_alarm(len(decided)):.0%} chance that one is "
                     "decided by chance.")
    lines += ["", f"Runs: {len(results)}, **{run_seconds:.0f} s** wall, {child_cpu_seconds():.0f} CPU s.", "",
              "## Setting", "", __doc__.split("\n\n", 1)[1].strip(), "",
              f"Data: {libsvm.name} ({libsvm.origin}); {images.name} ({images.origin}). Configurations: "
              "`experiments/quick_plain_convex.toml` and `experiments/quick_lenet.toml` with the overrides in "
              "`runs.csv`. Every ε is the PLD upper bound of the run's summary.json; the adaptive runs' includes the "
              "count (`privacy.adaptive_clipping`). The clip trajectory is public: a function of the noisy counts.", "",
              "## Results", "",
              report.table(["task", "ε", "clipping", "seeds", "σ (gradient)", "accounted multiplier", "ε PLD (max)",
                            "test accuracy [95%]", "majority class", "final clip (mean)"],
                           [[r["task"], f"{r['eps']:g}", MODES[r["mode"]], r["n"], f"{r['sigma']:.4g}",
                             f"{r['accounted_sigma']:.4g}", f"{r['eps_pld_max']:.4g}",
                             mean_interval([]).text() if r["n"] == 0 else report.interval_cell(r), f"{r['majority']:.4f}",
                             f"{r['final_clip']:.4g}"] for r in groups.to_dict("records")]), "",
              report.table(["claim", "paired difference [95%]", "verdict"],
                           [[c["claim"], c["measured"], report.verdict(c["verdict"])] for c in checks.to_dict("records")]),
              ""]
    for name in figures:
        lines += [report.image(name, figures[name]), ""]
    lines += ["Files: `runs.csv`, `groups.csv`, `checks.csv`, `plots/*.csv` (each figure's table), `runs/*/`.", "",
              failed_section(results)]
    out.write_text("REPORT.md", "\n".join(lines))
    log(f"clipping: {len(results)} runs in {run_seconds:.0f} s")
    return 0 if runs["ok"].all() else 1




def _figures(out, results, majority, scale) -> dict:
    note = "TINY SCALE: a smoke test of the pipeline, not a result" if scale == "tiny" else ""
    made = {}
    clip_rows, acc_rows = [], []
    for task in TASKS:
        for e in task.epsilons:
            panel = f"{task.label}, ε = {e:g}"
            for mode in MODES:
                runs = [r for r in results if r.ok and r.spec.labels == {"task": task.key, "eps": e, "mode": mode}]
                x = [r.metrics["gradients_per_client"].to_numpy(float) for r in runs]
                acc_rows += plots.curve_rows(panel, MODES[mode], [(xi, r.metrics["test_accuracy"].to_numpy(float))
                                                                  for xi, r in zip(x, runs)])
                if mode == "adaptive":
                    clip_rows += plots.curve_rows(panel, "adaptive C (mean over clients)",
                                                  [(xi, r.metrics["clip"].to_numpy(float)) for xi, r in zip(x, runs)])
                else:
                    clip_rows.append(plots.baseline_row(panel, "fixed C", float(runs[0].summary["clip"]) if runs else math.nan))
            acc_rows.append(plots.baseline_row(panel, "baseline: majority class", majority[task.key]))
    made["clip_trajectory"] = plots.save(out, plots.LineFigure(
        "clip_trajectory", "Clip norm over the run: adaptive (mean and 95% interval over seeds) and fixed",
        "gradient computations per client", "clip norm C", logy=True, note=note), plots.table(clip_rows))
    made["accuracy"] = plots.save(out, plots.LineFigure(
        "accuracy", "Test accuracy at equal ε: fixed against adaptive clipping", "gradient computations per client",
        "test accuracy", note=note, bounds=(0.0, 1.0)), plots.table(acc_rows))
    return made
