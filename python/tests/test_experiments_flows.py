"""The experiment layer's sweep, audit and proactive flows end to end at the tiny scale through the front
door (run_experiments.sh). Split from test_experiments.py so that ctest runs the long flows side by side."""

import json
import math
import os
import shlex
import subprocess

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from asyncdp.experiments import plots

from experiments_script import SOURCE, run_script as _run_script


# -- sweep --------------------------------------------------------------------------------------------------

SWEEP = ["sweep", "--config", str(SOURCE / "experiments/sweep_example.toml")]


def test_sweep_aggregates_seeds_per_sample_size_and_epsilon_including_s_max(tmp_path):
    out = tmp_path / "sweep"
    words = [*SWEEP, "--sample-sizes", "5,26,max", "--epsilons", "0.2,0.5", "--seeds", "2", "--jobs", "2", "--out",
             str(out)]
    done = _run_script(words, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    grid = pd.read_csv(out / "sweep.csv")
    # (2 sample sizes + s_max) x 2 epsilons DP groups and 2 non-DP twins, each over 2 seeds
    assert len(grid) == 3 * 2 + 2 and (grid["n"] == 2).all()
    assert set(grid["kind"]) == {"DP", "s_max", "non-DP"}
    runs = pd.read_csv(out / "sweep_runs.csv")
    assert len(runs) == 2 * (3 * 2 + 2) and runs["ok"].all()
    dp = runs[runs["kind"] == "DP"]
    assert (dp["eps_pld"] <= dp["epsilon_target"] * (1 + 1e-6)).all()  # calibrated to the target, never above
    for name, seed in zip(runs["run"], runs["seed"]):
        assert f"seed = {seed}\n" in (out / "runs" / name / "config.resolved.toml").read_text()
    # runs/index.csv lists every run of both passes (s_max needs the first) with what started it, and its
    # line re-runs a run from the CLI to the same numbers.
    index = pd.read_csv(out / "runs/index.csv", keep_default_na=False)
    assert set(runs["run"]) <= set(index["run"]) and index["run"].is_unique and index["ok"].all()
    assert (index["config"] == "experiments/sweep_example.toml").all()
    assert dict(zip(index["run"], index["seed"])) | dict(zip(runs["run"], runs["seed"])) == dict(
        zip(index["run"], index["seed"]))
    line = index[index["run"] == dp["run"].iloc[0]].iloc[0]
    sets = [w for pair in shlex.split(line["overrides"]) for w in ("--set", pair)]
    again = subprocess.run([os.environ.get("ASYNCDP_BINARY", str(SOURCE / "build/release/asyncdp")), "train",
                            "--quiet", "--config", line["config"], *sets, "--set", f"seed={line['seed']}", "--out",
                            str(tmp_path / "again")], cwd=SOURCE, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    first, second = (json.loads((d / "summary.json").read_text()) for d in (out / "runs" / line["run"],
                                                                           tmp_path / "again"))
    assert (second["test_accuracy"], second["epsilon"], second["sigma"]) == (
        first["test_accuracy"], first["epsilon"], first["sigma"])
    checks = pd.read_csv(out / "checks.csv")
    assert checks["measured"].str.endswith(", n = 2").all()  # every paired difference names its n
    claims = " ".join(checks["claim"])
    for claim in ("larger s gives better accuracy", "larger eps gives better accuracy", "non-private is the ceiling"):
        assert claim in claims
    report = (out / "REPORT.md").read_text()
    assert "## Results (mean and 95% interval over 2 seeds)" in report and "majority-class rate" in report
    # The command the report names re-runs it: every word given, the scale the environment chose as a flag,
    # and the environment that cuts runs short (experiments_script sets ASYNCDP_RUN_TIMEOUT).
    assert f"ASYNCDP_RUN_TIMEOUT=240 ./run_experiments.sh {shlex.join([*words, '--tiny'])}` on " in report
    table = pd.read_csv(out / "plots/accuracy_vs_sample_size.csv")
    curves = table[table["kind"] == "curve"]
    assert set(curves.loc[curves["series"] == "ε = 0.5", "x"]) == {5.0, 26.0}
    assert (table["kind"] == "baseline").sum() == 1
    by_eps = pd.read_csv(out / "plots/accuracy_vs_epsilon.csv")
    assert set(by_eps.loc[by_eps["series"] == "s = 26", "x"]) == {0.2, 0.5}
    assert (by_eps["kind"] == "baseline").sum() == 1 + 2  # majority class + a non-DP twin per s


def test_sweep_over_mpi_ranks_runs_the_same_grid_as_a_local_sweep(tmp_path):
    grid = [*SWEEP, "--sample-sizes", "5,26", "--epsilons", "0.5", "--seeds", "2"]
    local = _run_script([*grid, "--jobs", "2", "--out", str(tmp_path / "local")], tmp_path)
    mpi = _run_script([*grid, "--mpi", "3", "--out", str(tmp_path / "mpi")], tmp_path)
    assert local.returncode == 0, local.stderr[-2000:]
    assert mpi.returncode == 0, mpi.stderr[-2000:]
    cols = ["kind", "sample_size", "epsilon_target", "seed", "sigma", "test_accuracy", "eps_pld"]
    a = pd.read_csv(tmp_path / "local/sweep_runs.csv")[cols].sort_values(["kind", "sample_size", "seed"])
    b = pd.read_csv(tmp_path / "mpi/sweep_runs.csv")[cols].sort_values(["kind", "sample_size", "seed"])
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True))
    assert "spread over 3 MPI ranks" in (tmp_path / "mpi/REPORT.md").read_text()
    assert not [p for p in (tmp_path / "mpi/runs").iterdir() if p.name.startswith(".")]  # no queue or results left


def test_bad_usage_exits_2(tmp_path):
    for args in (["bogus"], ["sweep", "--epsilons", "1", "--sample-sizes", "1"], ["quick", "--full"],
                 ["sweep", "--config", "/nonexistent.toml", "--sample-sizes", "1", "--epsilons", "1"],
                 ["quick", "--mpi", "2"], [*SWEEP, "--epsilons", "1", "--sample-sizes", "1", "--mpi", "0"],
                 [*SWEEP, "--epsilons", "1", "--sample-sizes", "1", "--mpi", "2", "--jobs", "2"],
                 [*SWEEP, "--epsilons", "x", "--sample-sizes", "1"], [*SWEEP, "--epsilons", "1", "--sample-sizes", "0"]):
        done = _run_script([*args, "--out", str(tmp_path / "x")], tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        assert "error:" in done.stderr, (args, done.stderr)


# -- audit --------------------------------------------------------------------------------------------------

def test_audit_runs_every_row_at_a_family_wise_confidence_and_draws_log_log_roc_curves(tmp_path):
    out = tmp_path / "audit"
    done = _run_script(["audit", "--out", str(out)], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]  # tiny: FAULT rows may come out consistent, not a failure
    audits = pd.read_csv(out / "audit.csv")
    train = pd.read_csv(out / "train_audit.csv")
    assert len(audits) == 14 and len(train) == 6
    rows = len(audits) + len(train)
    assert audits["confidence"].round(6).eq(round(1 - 0.05 / rows, 6)).all()  # Bonferroni over every row
    assert set(audits["verdict"]) <= {"consistent", "VIOLATION"}
    report = (out / "REPORT.md").read_text()
    assert f"Bonferroni over the {rows} rows" in report and "Tiny scale" in report
    for text in ("## Audits", "## One-run audits attached to training runs", "| poisson_full_T10 |",
                 "| fixed_q0.5_T1_opposite |", "| FAULT_noise_0.7sigma |", "| train_mislabelled_fixed_full_T10 |",
                 "| FAULT_train_noise_0.05sigma |", "plots/roc.png"):
        assert text in report, text
    assert "## Failures" not in report and "## Failed runs" not in report
    # The f-DP one-run estimates sit beside eps_lower: lower bounds, so never above an honest row's PLD epsilon,
    # and the Gaussian-family one at least the assumption-free one on the same guesses it wins with.
    assert "f-DP ε (assumption-free)" in report and "f-DP ε (if Gaussian)" in report
    honest = train[train["expected"] == "consistent"]
    assert (honest["eps_fdp"] >= 0).all() and (honest["eps_fdp"] <= honest["eps_pld"]).all()
    roc = pd.read_csv(out / "plots/roc.csv")
    multi = audits[audits["mode"] == "multi"]
    assert set(roc["panel"]) == set(multi["run"])
    for panel, part in roc.groupby("panel"):
        series = set(part["series"])
        assert "empirical ROC" in series and "chance (TPR = FPR)" in series
        assert "reported (ε_PLD, δ): the most TPR allowed" in series, panel
        bound = part[part["series"] == "reported (ε_PLD, δ): the most TPR allowed"]
        eps = float(multi.loc[multi["run"] == panel, "eps_pld"].iloc[0])
        delta = float(multi.loc[multi["run"] == panel, "delta"].iloc[0])
        assert (bound["mean"] <= np.exp(eps) * bound["x"] + delta + 1e-12).all()
        # The whole curve allows no more than its (ε_PLD, δ) point does, and never less than chance.
        curve = part[part["series"] == "reported privacy curve: the most TPR allowed"]
        assert len(curve) > 50, panel
        assert (curve["mean"] <= np.exp(eps) * curve["x"] + delta + 1e-9).all()
        assert (curve["mean"] >= curve["x"] - 1e-9).all()
    spec = plots.LineFigure("roc", "t", "false positive rate", "true positive rate", logx=True, logy=True)
    fig = plots.draw(spec, roc)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == len(multi)
    assert all(ax.get_xscale() == "log" and ax.get_yscale() == "log" for ax in visible)


def test_gdp_mu_inverts_the_gaussian_privacy_curve():
    from asyncdp.experiments.audit import gdp_mu

    mu = 1.0
    eps = 2.0
    delta = st.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * st.norm.cdf(-eps / mu - mu / 2)
    assert gdp_mu(eps, delta) == pytest.approx(mu, rel=1e-6)


# -- proactive ----------------------------------------------------------------------------------------------

def test_proactive_flow_pauses_rejoins_and_says_whether_each_target_was_met(tmp_path):
    out = tmp_path / "proactive"
    done = _run_script(["proactive", "--out", str(out)], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    flow = pd.read_csv(out / "flow.csv")
    a9a = flow[flow["data"] == "a9a"]
    admitted = a9a[a9a["admitted"]]
    assert len(admitted) == 4 and "not admitted" in " ".join(a9a["events"])  # client 4's budget is too small
    # The demo shows its feature: clients pause and re-join.
    assert admitted["pauses"].sum() >= 1 and admitted["rejoins"].sum() >= 1
    assert set(admitted["outcome"]) <= {"target_reached", "target_missed"}
    for r in admitted.to_dict("records"):
        reached = r["last_check_accuracy"] >= r["target_accuracy"]
        assert r["outcome"] == ("target_reached" if reached else "target_missed"), r
        assert r["within_budget"] and 0 < r["epsilon_pld"] <= r["target_epsilon"]
        assert r["holdout_accuracy_final_model"] > 0
    table = pd.read_csv(out / "plots/flow_a9a.csv")
    events = table[table["kind"] == "event"]
    assert {"pause", "re-join"} <= set(events["series"])
    assert (table["kind"] == "baseline").sum() == 4  # one target line per admitted client
    alloc = pd.read_csv(out / "allocation.csv")
    assert len(alloc) == 4 * 3 and alloc["epsilon_pld"].gt(0).all()  # 4 strategies x 3 seeds (tiny)
    assert alloc["rows_per_client"].nunique() == 1  # every strategy's clients hold the same rows
    assert (alloc["epsilon_pld"] <= 1.0 * (1 + 1e-6)).all()  # equal epsilon_total = 1, never above
    comparison = pd.read_csv(out / "allocation_comparison.csv")
    assert set(comparison["strategy"]) == {"uniform", "decreasing_noise", "increasing_noise", "adaptive"}
    assert comparison.loc[comparison["strategy"] != "uniform", "minus_uniform"].notna().all()
    report = (out / "REPORT.md").read_text()
    for section in ("## (a) Figure 15 flow", "## (b) Budget allocation", "minus uniform", "majority class"):
        assert section in report
