"""The tables, figures, checks and REPORT.md of ``run_experiments.sh quick`` (quick.py runs the matrix).

Groups are the runs of one (problem, schedule, privacy setting) over seeds; every compared quantity is a
mean with a 95% interval, every verdict the interval of a paired difference, never a single run.
"""

from __future__ import annotations

import math

import pandas as pd

from . import plots, report
from .quick_setup import (COMBOS, CONVEX_SETTINGS, EPSILONS, LENET_SETTINGS, PROBLEMS, SCHEDULES, Check, eps_key,
                          schedule_slope)
from .runner import failed_section
from .stats import (ACCURACY, FAILS, HOLDS, INCONCLUSIVE, Interval, family_false_alarm, mean_interval, paired_by_seed,
                    verdict_above, verdict_below)


class QuickReport:
    def __init__(self, scale, frame, results, majority, lenet_chance, f0, sigma, convex_seeds, lenet_seeds):
        self.scale = scale
        self.frame = frame
        self.results = {r.spec.name: r for r in results}
        self.majority = majority
        self.lenet_chance = lenet_chance
        self.f0 = f0
        self.sigma = sigma
        self.convex_seeds = convex_seeds
        self.lenet_seeds = lenet_seeds
        self.note = ("TINY SCALE: a smoke test of the pipeline, not a result" if scale.name == "tiny" else "")

    # -- selections ---------------------------------------------------------------------------------------
    def runs(self, family, problem, setting, schedule=None) -> pd.DataFrame:
        f = self.frame
        sel = (f["family"] == family) & (f["problem"] == problem) & (f["setting"] == setting) & f["ok"]
        if schedule is not None:
            sel &= f["schedule"] == schedule
        return f[sel].sort_values("seed")

    def iv(self, family, problem, setting, column, schedule=None) -> Interval:
        return mean_interval(self.runs(family, problem, setting, schedule)[column])

    def paired(self, a: pd.DataFrame, b: pd.DataFrame, column: str) -> Interval:
        return paired_by_seed(a, b, column)

    # -- the table of run groups ----------------------------------------------------------------------------
    def group_table(self) -> pd.DataFrame:
        rows = []
        for pk, sk in COMBOS:
            for st in CONVEX_SETTINGS:
                g = self.runs("convex", pk, st.key, sk)
                if g.empty:
                    continue
                final = mean_interval(g["final_subopt"])
                acc = mean_interval(g["accuracy"], bounds=ACCURACY)
                slope = mean_interval(g["slope"])
                rows.append({
                    "family": "convex", "problem": pk, "schedule": sk, "setting": st.key, "label": st.label,
                    "n": len(g), "sigma": g["sigma"].mean(), "eps_pld": g["eps_pld"].max(),
                    "accuracy": acc.mean, "accuracy_low": acc.low, "accuracy_high": acc.high,
                    "majority_rate": self.majority if PROBLEMS[pk].supervised else math.nan,
                    "final_subopt": final.mean, "final_subopt_low": final.low, "final_subopt_high": final.high,
                    "f0_minus_fstar": self.f0[pk],
                    "slope": slope.mean, "slope_low": slope.low, "slope_high": slope.high,
                    "schedule_slope": schedule_slope(sk, g["window_from"].mean(), g["window_to"].mean()),
                    "asymptotic_slope": SCHEDULES[sk][2],
                    "window_from": g["window_from"].mean(), "window_to": g["window_to"].mean(),
                    "distance_slope": g["distance_slope"].mean(), "clipped_fraction": g["clipped_fraction"].mean(),
                    "beats_baseline": self._beats(final, self.f0[pk]),
                    **self._gap("convex", pk, st, "final_subopt", sk),
                })
        for st in LENET_SETTINGS:
            g = self.runs("lenet", "lenet", st.key)
            if g.empty:
                continue
            acc = mean_interval(g["accuracy"], bounds=ACCURACY)
            loss = mean_interval(g["final_train_loss"])
            rows.append({"family": "lenet", "problem": "lenet", "schedule": "sqrt", "setting": st.key,
                         "label": st.label, "n": len(g), "sigma": g["sigma"].mean(), "eps_pld": g["eps_pld"].max(),
                         "accuracy": acc.mean, "accuracy_low": acc.low, "accuracy_high": acc.high,
                         "majority_rate": self.lenet_chance, "train_loss": loss.mean, "train_loss_low": loss.low,
                         "train_loss_high": loss.high,
                         "beats_baseline": self._beats_above(acc, self.lenet_chance),
                         **self._gap("lenet", "lenet", st, "accuracy")})
        return pd.DataFrame(rows)

    def _gap(self, family, problem, setting, column, schedule=None) -> dict:
        """The cost of privacy: DP minus its non-private twin (same seeds), paired."""
        if not setting.private:
            return {}
        twin = self.runs(family, problem, "nondp", schedule)
        dp = self.runs(family, problem, setting.key, schedule)
        if twin.empty or dp.empty:
            return {}
        d = self.paired(dp, twin, column)
        return {"gap_to_twin": d.mean, "gap_to_twin_low": d.low, "gap_to_twin_high": d.high}

    def _beats(self, final: Interval, baseline: float) -> str:
        return verdict_below(final, baseline) if self.scale.verdicts else "no verdict (tiny scale)"

    def _beats_above(self, acc: Interval, baseline: float) -> str:
        return verdict_above(acc, baseline) if self.scale.verdicts else "no verdict (tiny scale)"

    # -- figures ----------------------------------------------------------------------------------------------
    def _curves(self, family, problem, setting, column, schedule=None):
        curves = []
        for name in self.runs(family, problem, setting, schedule)["name"]:
            met = self.results[name].metrics
            if column in met:
                curves.append((met["gradients_per_client"].to_numpy(float), met[column].to_numpy(float)))
        return curves

    def figures(self, out, libsvm, images) -> dict:
        x = "gradient computations per client"
        made = {}
        rows = []
        for pk, sk in COMBOS:
            panel = f"{PROBLEMS[pk].label}; {SCHEDULES[sk][1]}"
            for st in CONVEX_SETTINGS:
                rows += plots.curve_rows(panel, st.label, self._curves("convex", pk, st.key, "diag_suboptimality", sk))
            rows.append(plots.baseline_row(panel, "baseline: F(0) − F* (untrained model)", self.f0[pk]))
        made["suboptimality"] = plots.save(out, plots.LineFigure(
            "suboptimality", f"Suboptimality F(ŵ_t) − F(w*) on {libsvm.name} (a non-private diagnostic), mean and 95% interval over seeds",
            x, "F(ŵ_t) − F(w*)", logx=True, logy=True, note=self.note), plots.table(rows))
        rows = []
        for pk, sk in COMBOS:
            if pk != "strongly_convex":
                continue
            panel = f"{PROBLEMS[pk].label}; {SCHEDULES[sk][1]}"
            for st in CONVEX_SETTINGS:
                rows += plots.curve_rows(panel, st.label, self._curves("convex", pk, st.key, "diag_distance_sq", sk))
        if any(r["kind"] == "curve" for r in rows):
            made["distance"] = plots.save(out, plots.LineFigure(
                "distance", "Distance to the optimum ‖ŵ_t − w*‖², strongly convex (a non-private diagnostic)", x,
                "‖ŵ_t − w*‖²", logx=True, logy=True, note=self.note), plots.table(rows))
        rows = []
        for pk, sk in COMBOS:
            if not PROBLEMS[pk].supervised:
                continue
            panel = f"{PROBLEMS[pk].label}; {SCHEDULES[sk][1]}"
            for st in CONVEX_SETTINGS:
                rows += plots.curve_rows(panel, st.label, self._curves("convex", pk, st.key, "test_accuracy", sk))
            rows.append(plots.baseline_row(panel, "baseline: majority class", self.majority))
        made["convex_accuracy"] = plots.save(out, plots.LineFigure(
            "convex_accuracy", f"Test accuracy on {libsvm.name}, mean and 95% interval over seeds", x,
            "test accuracy", note=self.note, bounds=(0.0, 1.0)), plots.table(rows))
        for column, name, ylabel, baseline in (
                ("test_accuracy", "lenet_accuracy", "test accuracy", ("baseline: majority class", self.lenet_chance)),
                ("diag_train_loss", "lenet_train_loss", "training loss (non-private diagnostic)",
                 ("baseline: uniform prediction, ln 10", math.log(10))),
                ("diag_gradient_norm", "lenet_gradient_norm", "‖∇F(ŵ_t)‖ (non-private diagnostic)", None)):
            rows = []
            panel = f"LeNet-5 on {images.name}; η0/(1+β√t), β = 0.01"
            for st in LENET_SETTINGS:
                rows += plots.curve_rows(panel, st.label, self._curves("lenet", "lenet", st.key, column))
            if baseline:
                rows.append(plots.baseline_row(panel, *baseline))
            if any(r["kind"] == "curve" for r in rows):
                made[name] = plots.save(out, plots.LineFigure(
                    name, f"Non-convex DP-SGD: LeNet-5 {ylabel.split(' (')[0]}, mean and 95% interval over seeds", x,
                    ylabel, logy=(column == "diag_gradient_norm"), note=self.note,
                    bounds=(0.0, 1.0) if column == "test_accuracy" else None), plots.table(rows))
        return made

    # -- verdicts --------------------------------------------------------------------------------------------
    def _decide(self, decide) -> str:
        return decide() if self.scale.verdicts else "no verdict (tiny scale)"

    def checks(self) -> list[Check]:
        checks = []
        groups = {(r["problem"], r["schedule"], r["setting"]): r for r in self.group_table().to_dict("records")}
        # (a) the schedule's rate, for the pairings the theory covers, on plain SGD.
        for pk, p in PROBLEMS.items():
            g = groups.get((pk, p.paper_schedule, "sgd"))
            if not g:
                continue
            slope = self.iv("convex", pk, "sgd", "slope", p.paper_schedule)
            bound = g["schedule_slope"] + 0.15
            checks.append(Check(f"{pk}, SGD: F − F* falls at least at the schedule's rate (within 0.15)",
                                f"slope {slope.text_n()}", f"< {bound:.3f} (η(t) over the window: "
                                f"{g['schedule_slope']:.3f})", self._decide(lambda: verdict_below(slope, bound))))
        # (b) strongly vs plain convex at an equal schedule, per privacy setting (paired by seed).
        for sk in SCHEDULES:
            for st in CONVEX_SETTINGS:
                a = self.runs("convex", "strongly_convex", st.key, sk)
                b = self.runs("convex", "plain_convex", st.key, sk)
                if a.empty or b.empty:
                    continue
                diff = self.paired(a, b, "slope")
                claim = f"{SCHEDULES[sk][1]}, {st.label}: strongly convex F − F* falls faster than plain convex"
                below = [k for k in ("strongly_convex", "plain_convex")
                         if st.private and groups[(k, sk, st.key)]["beats_baseline"] != HOLDS]
                if below and self.scale.verdicts:
                    v = ("no verdict: " + " and ".join(k.replace("_", " ") for k in below) +
                         (" do" if len(below) > 1 else " does") + " not beat F(0) − F*")
                else:
                    v = self._decide(lambda: verdict_below(diff, 0.0))
                checks.append(Check(claim, f"slope difference (strongly − plain) {diff.text_n()}", "< 0", v))
        # (c) more budget, lower suboptimality.
        for pk, sk in COMBOS:
            a = self.runs("convex", pk, eps_key(EPSILONS[-1]), sk)
            b = self.runs("convex", pk, eps_key(EPSILONS[0]), sk)
            if a.empty or b.empty:
                continue
            diff = self.paired(a, b, "final_subopt")
            checks.append(Check(f"{pk}, {SCHEDULES[sk][1]}: final F − F* lower at ε = {EPSILONS[-1]:g} than at "
                                f"ε = {EPSILONS[0]:g}", f"difference {diff.text_n()}", "< 0",
                                self._decide(lambda: verdict_below(diff, 0.0))))
        # (d) non-convex: DP LeNet's training loss above the non-private twin's, per setting.
        nd = self.runs("lenet", "lenet", "nondp")
        for st in LENET_SETTINGS:
            if not st.private:
                continue
            dp = self.runs("lenet", "lenet", st.key)
            if dp.empty or nd.empty:
                continue
            diff = self.paired(nd, dp, "final_train_loss")
            g = groups.get(("lenet", "sqrt", st.key))
            if g and g["beats_baseline"] != HOLDS and self.scale.verdicts:
                v = "no verdict: DP LeNet does not beat chance"
            else:
                v = self._decide(lambda: verdict_below(diff, 0.0))
            checks.append(Check(f"LeNet, {st.label}: the non-private twin reaches a lower training loss",
                                f"difference (non-DP − DP) {diff.text_n()}", "< 0", v))
        return checks

    # -- REPORT ----------------------------------------------------------------------------------------------
    def report(self, args, libsvm, images, refs, groups, figures, checks, run_seconds, cpu, failures) -> str:
        g = groups
        convex = g[g["family"] == "convex"]
        private = convex[convex["setting"] != "sgd"]
        private = private[private["setting"] != "nondp"]
        decided = [c for c in checks if c.verdict in (HOLDS, FAILS, INCONCLUSIVE)]
        lines = [
            "# Quick comparison: how fast DP-SGD converges on strongly convex, plain convex and non-convex objectives",
            "",
            report.provenance(args.command, self.scale.name, args.jobs),
            "",
        ]
        if self.scale.name == "tiny":
            lines += ["> **Tiny scale.** These runs are seconds long and exist to test the pipeline: their curves are "
                      "far from converged and no verdict is drawn from them. Run `./run_experiments.sh` (default "
                      "scale) for results.", ""]
        n_runs = len(self.frame)
        lines += [
            f"**Run matrix.** {n_runs} training runs: convex problems {len(COMBOS)} (problem, schedule) pairs × "
            f"{len(CONVEX_SETTINGS)} privacy settings × {len(self.convex_seeds)} seeds, LeNet-5 "
            f"{len(LENET_SETTINGS)} settings × {len(self.lenet_seeds)} seeds; plus {len(EPSILONS) * 2} σ "
            f"calibrations (`asyncdp train --print-config`, nothing trained) and {len(refs)} reference optima. "
            f"Wall time **{run_seconds:.0f} s**, **{cpu:.0f} CPU s** in the "
            f"runs' processes.",
            "",
            "## Summary",
            "",
        ]
        lines += self.headlines(groups, checks)
        lines += [
            "",
            "## Setting",
            "",
            f"Data: convex problems on **{libsvm.name}** ({libsvm.origin}); LeNet-5 on **{images.name}** "
            f"({images.origin}). 5 clients, 1-asynchronous rounds (Υ: k ≥ i − 1), Poisson sampling, virtual runtime "
            "(deterministic from the seed). Configurations: `experiments/quick_*.toml` with the overrides in "
            "`runs.csv`.",
            "",
            "Privacy settings: **ε ∈ {" + ", ".join(f"{e:g}" for e in EPSILONS) + "}** — σ calibrated by the PLD "
            "accountant for each client's whole run (δ = 1/N_c) — beside the paper's Table 3 / Table 4 σ, the "
            "**non-private twin** (same clip C and batch s, no noise) and, for the convex problems, **plain SGD** "
            "(s = 1, unclipped: the algorithm the rate bounds describe). ε is per client (record-level DP of its "
            "local data set); the ε column is each run's final PLD upper bound from its summary.json.",
            "",
            "Calibrated σ: " + ", ".join(f"ε = {e:g}: σ = {self.sigma[('convex', eps_key(e))]:.4g} (convex), "
                                         f"{self.sigma[('lenet', eps_key(e))]:.4g} (LeNet)"
                                         for e in EPSILONS if ('convex', eps_key(e)) in self.sigma
                                         and ('lenet', eps_key(e)) in self.sigma) + ".",
            "",
            "**Not covered by ε**: the suboptimality F − F*, ‖ŵ − w*‖², the training loss, the gradient norm and "
            "the clipped fraction are non-private diagnostics (output.diagnostics = true), computed from every "
            "client's data; they measure the algorithm and are not releasable under the reported ε.",
            "",
            "Baselines: for each convex problem **F(0) − F*** (the untrained zero model); for each classifier the "
            f"**majority-class rate** of its test set ({self.majority:.4f} on {libsvm.name}; "
            f"{self.lenet_chance:.4f} on the LeNet evaluation rows). A DP run group *beats its baseline* when the "
            "95% interval of its final F − F* lies below F(0) − F* (LeNet: its accuracy interval above the majority "
            "rate).",
            "",
            "## Reference optima",
            "",
            "w* of each convex objective F(w) = (1/N) Σ_r f(w; x_r) over every client's rows, with f the per-example "
            "loss the model clips and evaluates (regulariser included), solved to a gradient norm below 1e-10 "
            "(`asyncdp reference-optimum`, one per seed: the objective key includes it).",
            "",
            report.table(["problem", "model", "method", "F(w*) as evaluated", "‖∇F(w*)‖", "F(0) − F*", "N"],
                         [[pk, r["model"], r["method"], f"{r['evaluated_objective']:.10g}",
                           f"{r['gradient_norm']:.1e}", f"{self.f0[pk]:.4g}", r["records"]]
                          for (pk, seed), r in sorted(refs.items()) if seed == self.convex_seeds[0]]),
            "",
            "## Convergence (convex)",
            "",
            report.image("suboptimality, log-log", figures["suboptimality"]),
            "",
            "Slopes are least-squares fits of log10(F − F*) on log10(t) over the last decade of each run (t = "
            "gradient computations per client), averaged over seeds with a 95% interval; \"schedule\" is the "
            "log-log slope of η(t) over the same window, the rate a bound E[F − F*] = O(η(t)) predicts there. A DP "
            "run levels off at its noise floor, which flattens its slope.",
            "",
            report.table(["problem", "schedule", "setting", "n", "σ", "ε PLD", "final F − F* [95%]", "F(0) − F*",
                          "beats baseline", "minus non-DP twin [95%]", "slope [95%]", "schedule", "clipped"],
                         [[r["problem"], SCHEDULES[r["schedule"]][1], r["label"], r["n"], _sig(r["sigma"]),
                           _eps(r["eps_pld"]), _ivt(r, "final_subopt"), f"{r['f0_minus_fstar']:.3g}",
                           report.verdict(r["beats_baseline"]) if r["setting"] not in ("sgd", "nondp") else "",
                           _ivt_named(r, "gap_to_twin"),
                           _ivt(r, "slope"), f"{r['schedule_slope']:.3f}", report.fmt(r["clipped_fraction"], 3)]
                          for r in convex.to_dict("records")]),
            "",
        ]
        if "distance" in figures:
            lines += [report.image("distance to w*, strongly convex", figures["distance"]), ""]
        lines += [
            "## Test accuracy (convex)",
            "",
            report.image("test accuracy, convex", figures["convex_accuracy"]),
            "",
            report.table(["problem", "schedule", "setting", "n", "ε PLD", "test accuracy [95%]", "majority class"],
                         [[r["problem"], SCHEDULES[r["schedule"]][1], r["label"], r["n"], _eps(r["eps_pld"]),
                           _ivt(r, "accuracy", 4), f"{r['majority_rate']:.4f}"]
                          for r in convex.to_dict("records") if PROBLEMS[r["problem"]].supervised]),
            "",
            "## Non-convex (LeNet-5)",
            "",
            "Non-convex SGD bounds control the gradient norm (min_t E‖∇F(ŵ_t)‖²), not the loss; the training loss "
            "is the objective itself (a non-private diagnostic over `eval.train_rows` rows).",
            "",
        ]
        for name, alt in (("lenet_accuracy", "LeNet test accuracy"), ("lenet_train_loss", "LeNet training loss"),
                          ("lenet_gradient_norm", "LeNet gradient norm")):
            if name in figures:
                lines += [report.image(alt, figures[name]), ""]
        lenet = g[g["family"] == "lenet"]
        lines += [
            report.table(["setting", "n", "σ", "ε PLD", "test accuracy [95%]", "minus non-DP twin [95%]",
                          "majority class", "beats baseline", "training loss, last quarter [95%]"],
                         [[r["label"], r["n"], _sig(r["sigma"]), _eps(r["eps_pld"]), _ivt(r, "accuracy", 4),
                           _ivt_named(r, "gap_to_twin"), f"{r['majority_rate']:.4f}",
                           report.verdict(r["beats_baseline"]) if r["setting"] != "nondp" else "",
                           _ivt(r, "train_loss")] for r in lenet.to_dict("records")]),
            "",
            "## Checks",
            "",
            "Each verdict is read from the 95% interval of the measured quantity (a paired difference where the runs "
            "share seeds): **holds** when the interval lies on the claimed side, **does not hold** when it lies on "
            "the other, **inconclusive** when it contains the threshold. No verdict is drawn on a group that does "
            "not beat its baseline, nor at tiny scale.",
            "",
            report.table(["claim", "measured", "expected", "verdict"],
                         [[c.claim, c.measured, c.threshold, report.verdict(c.verdict)] for c in checks]),
            "",
            f"{len(decided)} verdicts at 95% each: if every claim were a coin toss at the boundary, the chance that at "
            f"least one is decided wrongly is {family_false_alarm(len(decided)):.0%} (1 − 0.95^{len(decided)}); read "
            "single verdicts with that in mind.",
            "",
            "Data: `runs.csv` (every run), `groups.csv` (every run group with its intervals), `checks.csv`, "
            "`plots/*.csv` (the table each figure is drawn from).",
            "",
        ]
        if failures:
            lines += ["## Failures before the runs", ""] + [f"* {f}" for f in failures] + [""]
        lines.append(failed_section(list(self.results.values())))
        return "\n".join(lines)

    def headlines(self, groups, checks) -> list[str]:
        """Summary sentences, each computed from the tables below it."""
        out = []
        convex = groups[(groups["family"] == "convex") & ~groups["setting"].isin(["sgd", "nondp"])]
        if not self.scale.verdicts:
            out.append("* No verdicts at tiny scale (see above).")
        else:
            beats = convex[convex["beats_baseline"] == HOLDS]
            out.append(f"* **{len(beats)} of {len(convex)}** DP convex run groups end below F(0) − F* (their "
                       "untrained-model baseline); by setting: " + ", ".join(
                           f"{lab}: {int((grp['beats_baseline'] == HOLDS).sum())}/{len(grp)}"
                           for lab, grp in convex.groupby("label", sort=False)) + ".")
            lenet = groups[(groups["family"] == "lenet") & (groups["setting"] != "nondp")]
            lb = lenet[lenet["beats_baseline"] == HOLDS]
            out.append(f"* LeNet-5: **{len(lb)} of {len(lenet)}** DP settings beat the majority-class rate "
                       f"({self.lenet_chance:.3f}): " + ", ".join(
                           f"{r['label']} {r['accuracy']:.3f} [{r['accuracy_low']:.3f}, {r['accuracy_high']:.3f}]"
                           for r in lenet.to_dict("records")) + ".")
        mid = eps_key(EPSILONS[len(EPSILONS) // 2])
        for sk in SCHEDULES:
            a = groups[(groups["problem"] == "strongly_convex") & (groups["schedule"] == sk) & (groups["setting"] == mid)]
            b = groups[(groups["problem"] == "plain_convex") & (groups["schedule"] == sk) & (groups["setting"] == mid)]
            c = [c for c in checks if c.claim.startswith(f"{SCHEDULES[sk][1]}, DP, ε = {EPSILONS[len(EPSILONS) // 2]:g}:")]
            if a.empty or b.empty or not c:
                continue
            a, b = a.iloc[0], b.iloc[0]
            out.append(f"* **Convexity at an equal schedule** ({SCHEDULES[sk][1]}, DP at ε = "
                       f"{EPSILONS[len(EPSILONS) // 2]:g}): F − F* falls with slope {_ivt(a, 'slope')} on the strongly "
                       f"convex objective and {_ivt(b, 'slope')} on the plain convex one; \"strongly convex is "
                       f"faster\": {report.verdict(c[0].verdict)} ({c[0].measured}).")
        lenet_mid = groups[(groups["family"] == "lenet") & (groups["setting"] == mid)]
        lenet_twin = groups[(groups["family"] == "lenet") & (groups["setting"] == "nondp")]
        if not lenet_mid.empty and not lenet_twin.empty:
            m, t = lenet_mid.iloc[0], lenet_twin.iloc[0]
            out.append(f"* **Non-convex** (LeNet-5, ε = {EPSILONS[len(EPSILONS) // 2]:g}): test accuracy "
                       f"{_ivt(m, 'accuracy')} against its non-private twin's {_ivt(t, 'accuracy')} and a majority "
                       f"class of {self.lenet_chance:.3f}; training loss {_ivt(m, 'train_loss')} vs "
                       f"{_ivt(t, 'train_loss')} (last quarter, a non-private diagnostic).")
        for st in CONVEX_SETTINGS:
            if not st.private:
                continue
            rows = convex[convex["setting"] == st.key]
            if rows.empty or "gap_to_twin" not in rows:
                continue
            ratio = rows["final_subopt"] / rows["f0_minus_fstar"]
            out.append(f"* **Cost of privacy, {st.label}**: final F − F* minus the non-private twin's ranges from "
                       f"{rows['gap_to_twin'].min():.3g} to {rows['gap_to_twin'].max():.3g} over the "
                       f"{len(rows)} (problem, schedule) pairs (final F − F* is {ratio.min():.2g}–{ratio.max():.2g} × "
                       "F(0) − F*).")
        twins = groups[(groups["family"] == "convex") & (groups["setting"] == "nondp")]
        sgd = groups[(groups["family"] == "convex") & (groups["setting"] == "sgd")]
        if not twins.empty and not sgd.empty:
            j = twins.merge(sgd, on=["problem", "schedule"], suffixes=("", "_sgd"))
            j = j[j["problem"].map(lambda k: PROBLEMS[k].model.startswith("logistic"))]
            r = j["final_subopt"] / j["final_subopt_sgd"]
            if not r.empty:
                out.append(f"* On the logistic objectives, clipping alone (the non-private twin: C and s as in DP, "
                           f"no noise) ends at {r.min():.2g}–{r.max():.2g} × the final F − F* of unclipped SGD (s = 1) "
                           "after as many gradients: some gradients are clipped and some not, so the clipped "
                           "update vanishes away from w*; where DP and its twin coincide, that clipping bias, not "
                           "the noise, is the floor. (The geometric median's gradients are unit vectors, all "
                           "clipped alike: there clipping only rescales the step.)")
        cls = [c for c in checks if "strongly convex F − F* falls faster" in c.claim]
        counts = {v: sum(1 for c in cls if c.verdict == v) for v in (HOLDS, FAILS, INCONCLUSIVE)}
        other = len(cls) - sum(counts.values())
        out.append(f"* Strongly vs plain convex at an equal schedule ({len(cls)} comparisons, slopes paired by "
                   f"seed): holds {counts[HOLDS]}, does not hold {counts[FAILS]}, inconclusive "
                   f"{counts[INCONCLUSIVE]}, no verdict {other}.")
        # Every verdict is counted, as for the convexity line: "holds in 0 of 5" alone read as a result at the
        # tiny scale (no verdicts) and hid whether the other pairs failed or were inconclusive.
        eps = [c for c in checks if "final F − F* lower at" in c.claim]
        counts = {v: sum(1 for c in eps if c.verdict == v) for v in (HOLDS, FAILS, INCONCLUSIVE)}
        out.append(f"* A larger budget (ε = {EPSILONS[-1]:g} vs {EPSILONS[0]:g}) lowers the final F − F* "
                   f"({len(eps)} (problem, schedule) pairs, paired by seed): holds {counts[HOLDS]}, does not hold "
                   f"{counts[FAILS]}, inconclusive {counts[INCONCLUSIVE]}, "
                   f"no verdict {len(eps) - sum(counts.values())}.")
        return out


def _ivt(row: dict, column: str, digits: int = 3) -> str:
    return Interval(row[column], row[f"{column}_low"], row[f"{column}_high"], row["n"], math.nan).text(digits)


def _ivt_named(row: dict, column: str, digits: int = 3) -> str:
    """An interval column that only some rows have (the gap to the non-private twin)."""
    value = row.get(column)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return _ivt(row, column, digits)


def _sig(x: float) -> str:
    return "—" if not (x > 0) else f"{x:.4g}"


def _eps(x: float) -> str:
    return "∞ (no noise)" if not math.isfinite(x) else f"{x:.3g}"


