"""The experiment layer (asyncdp.experiments): statistics, publication, figures, and `quick` end to end at
the tiny scale through the front door (run_experiments.sh), checking the tables every figure is drawn
from and the figures' axes through matplotlib's objects."""

import dataclasses
import json
import math
import shlex

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from asyncdp.experiments import __main__ as front_door
from asyncdp.experiments import output, plots, stats
from asyncdp.experiments.env import UsageError

from experiments_script import SOURCE, run_script as _run_script


# -- statistics ---------------------------------------------------------------------------------------------

def test_mean_interval_is_the_student_t_interval():
    iv = stats.mean_interval([1.0, 2.0, 3.0])
    half = st.t.ppf(0.975, 2) * 1.0 / math.sqrt(3)
    assert iv.mean == 2.0 and iv.n == 3
    assert iv.low == pytest.approx(2.0 - half) and iv.high == pytest.approx(2.0 + half)
    assert iv.low == pytest.approx(-0.4841, abs=1e-4)  # 4.3027 / sqrt(3) below the mean


def test_an_accuracy_interval_is_clipped_to_the_range_of_an_accuracy():
    # Two seeds at 0.74 and 0.82: the t-interval reaches 1.29; a mean accuracy cannot, so it stops at 1.
    free = stats.mean_interval([0.74, 0.82])
    clipped = stats.mean_interval([0.74, 0.82], bounds=stats.ACCURACY)
    assert free.high > 1.0 and free.low < 0.74
    assert clipped.high == 1.0 and clipped.low == free.low and clipped.mean == free.mean
    assert stats.mean_interval([0.02, 0.2], bounds=stats.ACCURACY).low == 0.0
    assert stats.mean_interval([0.5, 0.51], bounds=stats.ACCURACY) == stats.mean_interval([0.5, 0.51])


def test_one_seed_has_no_interval_and_no_verdict():
    iv = stats.mean_interval([0.5])
    assert math.isnan(iv.low) and iv.text() == "0.5 (n = 1)"
    assert stats.verdict_below(iv, 1.0) == stats.INCONCLUSIVE


def test_verdicts_follow_the_interval():
    below = stats.mean_interval([-3.0, -2.9, -3.1, -3.05])
    around = stats.mean_interval([-1.0, 1.0, -0.5, 0.6])
    above = stats.mean_interval([2.0, 2.1, 1.9, 2.05])
    assert stats.verdict_below(below) == stats.HOLDS
    assert stats.verdict_below(around) == stats.INCONCLUSIVE
    assert stats.verdict_below(above) == stats.FAILS
    assert stats.verdict_above(above) == stats.HOLDS
    assert stats.verdict_above(below) == stats.FAILS
    assert stats.verdict_above(above, 3.0) == stats.FAILS


def test_a_diverged_seed_is_not_averaged_away():
    iv = stats.mean_interval([1.0, float("nan"), 1.2])
    assert math.isnan(iv.mean) and stats.verdict_below(iv, 5.0) == stats.INCONCLUSIVE


def test_paired_difference_pairs_by_seed_and_refuses_unequal_lengths():
    a, b = [1.0, 2.0, 3.0, 4.0], [0.9, 1.9, 2.9, 3.9]
    d = stats.paired_difference(a, b)
    assert d.mean == pytest.approx(0.1) and d.sd == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError):
        stats.paired_difference([1.0], [1.0, 2.0])


def test_loglog_slope_recovers_a_power_law_over_the_last_decade():
    x = np.linspace(10, 10000, 400)
    y = 3.0 * x ** -0.75
    y[x < 1000] = 1.0  # anything before the last decade is ignored
    slope, points, x1, x2 = stats.loglog_slope(x, y)
    assert slope == pytest.approx(-0.75, abs=1e-9)
    assert x1 >= 1000 and x2 == 10000 and points == int((x >= 1000).sum())


def test_family_false_alarm_and_holm():
    assert stats.family_false_alarm(11, 0.95) == pytest.approx(1 - 0.95 ** 11)  # ≈ 43%, the audit table's risk
    assert stats.holm([0.01, 0.04, 0.03], alpha=0.05) == [True, False, False]
    assert stats.holm([0.001, 0.02, 0.04], alpha=0.05) == [True, True, True]


# -- publication --------------------------------------------------------------------------------------------

def test_output_never_touches_a_folder_it_did_not_write(tmp_path):
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("my notes")
    with pytest.raises(UsageError, match="did not write"):
        output.Output(foreign, "quick")
    assert (foreign / "notes.txt").read_text() == "my notes"


def test_output_publishes_whole_and_replaces_only_its_own(tmp_path):
    dest = tmp_path / "res"
    first = output.Output(dest, "quick")
    first.write_text("REPORT.md", "one")
    assert not dest.exists()  # nothing is visible before publish
    first.publish()
    assert (dest / "REPORT.md").read_text() == "one"
    second = output.Output(dest, "quick")
    second.write_text("REPORT.md", "two")
    second.discard()  # a failed second run leaves the first result in place
    assert (dest / "REPORT.md").read_text() == "one"
    third = output.Output(dest, "quick")
    third.write_text("REPORT.md", "three")
    third.publish()
    assert (dest / "REPORT.md").read_text() == "three"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res"]  # no staging folders left behind
    (dest / "extra.txt").write_text("added by the user")
    with pytest.raises(UsageError):
        output.Output(dest, "quick")


# -- figures ------------------------------------------------------------------------------------------------

def test_figures_are_drawn_from_their_table():
    rows = plots.curve_rows("A", "DP", [([1, 10, 100], [1.0, 0.5, 0.2]), ([1, 10, 100], [1.2, 0.4, 0.3])])
    rows += plots.curve_rows("A", "non-DP", [([1, 10, 100], [1.0, 0.1, 0.01])])
    rows.append(plots.baseline_row("A", "baseline: F(0) − F*", 2.0))
    data = plots.table(rows)
    assert list(data.columns) == plots.COLUMNS
    dp = data[data["series"] == "DP"]
    assert dp["n"].tolist() == [2, 2, 2] and dp["mean"].tolist() == pytest.approx([1.1, 0.45, 0.25])
    fig = plots.draw(plots.LineFigure("t", "title", "x label", "y label", logx=True, logy=True), data)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "x label" and ax.get_ylabel() == "y label"
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels == ["DP", "non-DP", "baseline: F(0) − F*"]
    assert ax.get_lines()[2].get_ydata()[0] == 2.0
    # the bands stay inside the frame (on log axes a band reaching 0 is drawn down to a decade below the mean)
    lo, hi = ax.get_ylim()
    drawn_low = np.where(dp["low"] > 0, dp["low"], dp["mean"] / 10)
    assert lo <= drawn_low.min() and hi >= dp["high"].max()


# -- quick, end to end --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("quick")
    out = tmp / "quick"
    done = _run_script(["quick", "--out", str(out)], tmp)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_quick_writes_its_tables_report_and_figures(quick):
    for name in ("REPORT.md", "runs.csv", "groups.csv", "checks.csv", "plots/suboptimality.png",
                 "plots/suboptimality.csv", "plots/convex_accuracy.png", "plots/lenet_accuracy.png",
                 "plots/lenet_train_loss.png", output.MARKER):
        assert (quick / name).exists(), name
    report = (quick / "REPORT.md").read_text()
    for section in ("## Summary", "## Reference optima", "## Convergence (convex)", "## Non-convex (LeNet-5)",
                    "## Checks", "**Run matrix.**", "CPU s", "majority-class rate", "F(0) − F*",
                    "Not covered by ε", "Tiny scale"):
        assert section in report, section
    # Real a9a data from the repository itself, not a substitute.
    assert f"**a9a** (LIBSVM a9a / a9a.t from {SOURCE}/datasets/libsvm)" in report
    # No verdict at tiny scale.
    checks = pd.read_csv(quick / "checks.csv")
    assert len(checks) > 0 and (checks["verdict"] == "no verdict (tiny scale)").all()
    assert checks["measured"].str.contains(r", n = \d+$|\(n = \d+\)$").all()  # every verdict names its n
    groups = pd.read_csv(quick / "groups.csv")
    assert set(groups["beats_baseline"]) == {"no verdict (tiny scale)"}
    assert "## Failed runs" not in report
    # The budget headline counts every verdict of its rows in checks.csv ("in 0 of 5" alone read as a result).
    budget = checks[checks["claim"].str.contains("final F − F\\* lower at", regex=True)]
    assert len(budget) == 5
    assert (f"lowers the final F − F* ({len(budget)} (problem, schedule) pairs, paired by seed): holds 0, does not "
            f"hold 0, inconclusive 0, no verdict {len(budget)}.") in report
    # runs/index.csv names what started each of runs.csv's runs.
    index = pd.read_csv(quick / "runs/index.csv", keep_default_na=False)
    assert sorted(index["run"]) == sorted(pd.read_csv(quick / "runs.csv")["name"])
    assert index["config"].str.fullmatch(r"experiments/quick_\w+\.toml").all()


def test_quick_runs_every_cell_of_its_matrix_with_its_seed(quick):
    runs = pd.read_csv(quick / "runs.csv")
    assert runs["ok"].all(), runs.loc[~runs["ok"], ["name", "error"]]
    # 5 (problem, schedule) pairs x 6 settings x 2 seeds + LeNet 5 settings x 2 seeds
    assert len(runs) == 5 * 6 * 2 + 5 * 2
    assert set(runs["seed"]) == {1, 2}
    for name, seed in zip(runs["name"], runs["seed"]):
        toml = (quick / "runs" / name / "config.resolved.toml").read_text()
        assert f"seed = {seed}\n" in toml
    dp = runs[runs["setting"].str.startswith("eps")]
    for setting, group in dp.groupby("setting"):
        target = float(setting[3:])
        assert group["eps_pld"].max() <= target * (1 + 1e-6)  # calibrated: never above the target
        assert group["eps_pld"].min() >= target * 0.99         # and spends it


def test_quick_figure_tables_are_per_client_and_carry_baselines(quick):
    runs = pd.read_csv(quick / "runs.csv")
    k_convex = runs.loc[runs["family"] == "convex", "k_per_client"]
    table = pd.read_csv(quick / "plots/suboptimality.csv")
    curves = table[table["kind"] == "curve"]
    # x is gradient computations per client: it ends at K per client (the old scripts plotted totals, 5x).
    assert curves["x"].max() == pytest.approx(k_convex.max(), rel=0.02)
    assert curves["x"].max() == pytest.approx(3000, rel=0.02)
    panels = list(dict.fromkeys(table["panel"]))
    assert len(panels) == 5
    for panel in panels:
        part = table[table["panel"] == panel]
        assert (part["kind"] == "baseline").sum() == 1, panel
        assert part.loc[part["kind"] == "curve", "series"].nunique() == 6, panel
        assert (part.loc[part["kind"] == "curve", "n"] == 2).all(), panel
    acc = pd.read_csv(quick / "plots/convex_accuracy.csv")
    base = acc[acc["kind"] == "baseline"]
    assert len(base) == 4 and base["mean"].round(4).eq(0.7638).all()  # a9a.t's majority class
    lenet = pd.read_csv(quick / "plots/lenet_accuracy.csv")
    assert lenet.loc[lenet["kind"] == "curve", "x"].max() == pytest.approx(600, rel=0.02)
    assert (lenet["kind"] == "baseline").sum() == 1


def test_quick_figures_show_what_their_tables_say(quick):
    spec = plots.LineFigure("suboptimality", "t", "gradient computations per client", "F(ŵ_t) − F(w*)", logx=True,
                            logy=True)
    fig = plots.draw(spec, pd.read_csv(quick / "plots/suboptimality.csv"))
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 5
    for ax in visible:
        assert ax.get_xlabel() == "gradient computations per client"
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
        assert sum(1 for line in ax.get_lines() if line.get_label().startswith("baseline")) == 1
        assert ax.get_xlim()[1] >= 3000 * 0.98
    assert "TINY SCALE" in (quick / "REPORT.md").read_text().upper()


def test_quick_refuses_an_output_folder_it_did_not_write(tmp_path):
    out = tmp_path / "someone_elses"
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    done = _run_script(["quick", "--out", str(out)], tmp_path)
    assert done.returncode == 2 and "did not write" in done.stderr
    assert (out / "thesis.tex").read_text() == "precious"


# -- the front door's options: read or refused ----------------------------------------------------------------

def _mode_reads(mode):
    """The options (of front_door.MODE_OPTIONS) that `args.<option>` reads in the mode's module and in every
    module of the package it imports, transitively; found from the source, not from the table under test."""
    import ast
    import pathlib

    folder = pathlib.Path(front_door.__file__).parent
    assert (folder / f"{mode}.py").is_file(), mode
    seen, todo, reads = set(), [mode], set()
    while todo:
        name = todo.pop()
        if name in seen or name == "__main__" or not (folder / f"{name}.py").is_file():
            continue
        seen.add(name)
        tree = ast.parse((folder / f"{name}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                todo += [node.module] if node.module else [a.name for a in node.names]
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "args"
                    and node.attr in front_door.MODE_OPTIONS):
                reads.add(node.attr)
    return reads


@pytest.mark.parametrize("mode", sorted(front_door.MODES))
def test_the_options_table_is_what_each_mode_reads(mode):
    # A mode that reads an option the table calls unread fails when it runs (parse() removes the option), and
    # one that the table says reads an option it never looks at would let that option be silently ignored.
    assert front_door.READS[mode] == _mode_reads(mode)


@pytest.mark.parametrize("mode", sorted(front_door.MODES))
def test_an_option_a_mode_does_not_read_is_refused_and_never_reaches_it(mode, capsys):
    values = {"seeds": "2", "libsvm": "x.libsvm", "images": "img", "config": "x.toml", "sample_sizes": "1",
              "epsilons": "1", "mpi": "2"}
    sweep_needs = ["--config", "x.toml", "--sample-sizes", "1", "--epsilons", "1"] if mode == "sweep" else []
    for dest in front_door.MODE_OPTIONS:
        flag = "--" + dest.replace("_", "-")
        if dest in front_door.READS[mode]:
            continue
        with pytest.raises(SystemExit) as ended:
            front_door.parse([mode, *sweep_needs, flag, values[dest]])
        assert ended.value.code == 2
        assert f"{flag} is not read by '{mode}'" in capsys.readouterr().err
    args = front_door.parse([mode, *sweep_needs])
    for dest in front_door.MODE_OPTIONS:
        assert hasattr(args, dest) == (dest in front_door.READS[mode]), dest


def test_an_option_given_twice_or_abbreviated_or_contradicting_is_refused(capsys):
    for argv, message in ((["quick", "--out", "a", "--out", "b"], "--out given twice ('a', then 'b')"),
                          (["quick", "--seeds", "2", "--seeds", "3"], "--seeds given twice"),
                          (["quick", "--seed", "2"], "unrecognized arguments: --seed 2"),
                          (["paper", "--full", "--tiny"], "--full and --tiny exclude each other"),
                          (["quick", "--full"], "--full is not read by 'quick'")):
        with pytest.raises(SystemExit) as ended:
            front_door.parse(argv)
        assert ended.value.code == 2, argv
        assert message in capsys.readouterr().err, argv
    args = front_door.parse(["quick", "--tiny", "--tiny", "--seeds", "2", "--jobs", "1"])  # a flag twice says it once
    assert (args.scale, args.seeds, args.jobs, args.jobs_given) == ("tiny", 2, 1, 1)


def test_a_bad_environment_setting_is_refused_before_any_run_even_where_unused(monkeypatch, capsys):
    # quick --tiny finds a9a, so ASYNCDP_FASHION_PAIR and the scale variable would not be used: still refused.
    for name, value, message in (("ASYNCDP_RUN_TIMEOUT", "abc", "expected seconds per run"),
                                 ("ASYNCDP_RUN_TIMEOUT", "-5", "a number >= 0"),
                                 ("ASYNCDP_RUN_TIMEOUT", "inf", "a number >= 0"),
                                 ("ASYNCDP_FASHION_PAIR", "7", "two different Fashion-MNIST classes"),
                                 ("ASYNCDP_FASHION_PAIR", "7,7", "two different Fashion-MNIST classes"),
                                 ("ASYNCDP_FASHION_PAIR", "3,10", "two different Fashion-MNIST classes"),
                                 ("ASYNCDP_EXPERIMENTS_SCALE", "huge", "expected one of tiny, default, full")):
        with monkeypatch.context() as m:
            m.setenv(name, value)
            with pytest.raises(SystemExit) as ended:
                front_door.parse(["quick", "--tiny"])
            assert ended.value.code == 2, (name, value)
            err = capsys.readouterr().err
            assert f"{name}={value}: " in err and message in err, err
    monkeypatch.setenv("ASYNCDP_RUN_TIMEOUT", "2.5")
    monkeypatch.setenv("ASYNCDP_FASHION_PAIR", "0,6")
    assert front_door.parse(["quick"]).scale == "default"
    from asyncdp.experiments import env
    assert (env.run_timeout(), env.fashion_pair()) == (2.5, (0, 6))


def test_the_reports_command_line_is_the_one_that_reproduces_it(monkeypatch):
    for key in front_door.RESULT_ENVIRONMENT + ("ASYNCDP_EXPERIMENTS_SCALE",):
        monkeypatch.delenv(key, raising=False)
    # Every word given stays, quoted for a shell; a default scale adds nothing.
    assert (front_door.command_line(["quick", "--seeds", "2", "--libsvm", "my data.svm"], "default")
            == "./run_experiments.sh quick --seeds 2 --libsvm 'my data.svm'")
    # The scale chosen by ASYNCDP_EXPERIMENTS_SCALE alone becomes the flag that chooses it.
    monkeypatch.setenv("ASYNCDP_EXPERIMENTS_SCALE", "full")
    assert front_door.command_line(["paper"], "full") == "./run_experiments.sh paper --full"
    assert front_door.command_line(["paper", "--tiny"], "tiny") == "./run_experiments.sh paper --tiny"
    # The environment that chooses the data or cuts runs short comes first, when set.
    monkeypatch.setenv("ASYNCDP_FASHION_PAIR", "3,5")
    monkeypatch.setenv("ASYNCDP_SHARED_DIR", "/data/x y")
    assert (front_door.command_line(["checkins"], "default")
            == "ASYNCDP_SHARED_DIR='/data/x y' ASYNCDP_FASHION_PAIR=3,5 ./run_experiments.sh checkins")
    # parse() records it for the reports.
    monkeypatch.delenv("ASYNCDP_EXPERIMENTS_SCALE")
    assert (front_door.parse(["audit", "--tiny"]).command
            == "ASYNCDP_SHARED_DIR='/data/x y' ASYNCDP_FASHION_PAIR=3,5 ./run_experiments.sh audit --tiny")


@pytest.mark.parametrize("words", [["quick", "--out", ""], ["quick", "--libsvm", ""], ["quick", "--images", ""],
                                   ["sweep", "--config", "", "--sample-sizes", "1", "--epsilons", "1"]])
def test_an_empty_path_is_an_error_not_the_default(words, capsys):
    # `--out "$DIR"` with DIR unset published into results/quick, and `--libsvm ''` ran on the default data.
    with pytest.raises(SystemExit) as stop:
        front_door.parse(words)
    assert stop.value.code == 2
    assert f"{words[1]}: empty value; a path is expected" in capsys.readouterr().err


def test_the_run_index_quotes_each_override_for_a_shell(tmp_path):
    from asyncdp.experiments import runner

    spec = runner.RunSpec("r1", SOURCE / "experiments/table3_strongly_convex.toml",
                          {"data.train": "/data/my a9a.gz", "dp.sigma": 4.0, "dp.enabled": True}, 7,
                          {"eps": math.inf, "kind": "DP"})
    runner.record(tmp_path, [runner.RunResult(spec, None, None, None, 0.0, 0.0, "stopped", None)])
    runner.record(tmp_path, [runner.RunResult(dataclasses.replace(spec, name="r2"), None, None, None, 0.0, 0.0)])
    index = pd.read_csv(tmp_path / "index.csv", keep_default_na=False)
    assert list(index["run"]) == ["r1", "r2"] and list(index["ok"]) == [False, True]
    assert index["config"][0] == "experiments/table3_strongly_convex.toml" and index["seed"][0] == 7
    assert shlex.split(index["overrides"][0]) == ['data.train="/data/my a9a.gz"', "dp.sigma=4.0", "dp.enabled=true"]
    assert json.loads(index["labels"][0]) == {"eps": "inf", "kind": "DP"} and index["error"][0] == "stopped"


def test_a_verdicts_interval_names_its_n():
    assert stats.mean_interval([1.0, 2.0, 3.0]).text_n() == "2 [-0.484, 4.48], n = 3"
    assert stats.mean_interval([2.0]).text_n() == "2 (n = 1)"
    assert stats.mean_interval([]).text_n() == "n/a (n = 0)"
