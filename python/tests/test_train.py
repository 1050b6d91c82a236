"""asyncdp.train against `asyncdp train`: same config and seed on the virtual runtime give identical
metrics.csv, clients.csv and summary (apart from wall-clock timings); errors carry the CLI's text."""

import json
import os
import signal
import threading
import time

import numpy as np
import pytest

import asyncdp
from conftest import SOURCE_DIR, run_cli

TABLE3 = SOURCE_DIR / "experiments" / "table3_strongly_convex.toml"
# Wall-clock measurements differ between any two runs, and compute_threads with them (protocol.worker_threads
# = 0 starts the compute pool only when the first rounds measure long); everything else must match exactly.
TIMING_KEYS = {"wall_seconds", "run_seconds", "compute_seconds", "eval_seconds", "accounting_seconds",
               "protocol_overhead", "grads_per_second", "compute_threads", "cpu_share"}


def small_overrides(a9a, seed=5):
    train, test = a9a
    return {"data": {"train": str(train), "test": str(test), "rows_per_client": 500},
            "schedule": {"epochs": 1}, "eval": {"points": 3}, "seed": seed}


def cli_small_args(a9a, out, seed=5):
    train, test = a9a
    return ["train", "--quiet", "--config", TABLE3, "--set", f"data.train={train}", "--set", f"data.test={test}",
            "--set", "data.rows_per_client=500", "--set", "schedule.epochs=1", "--set", "eval.points=3",
            "--set", f"seed={seed}", *(["--out", out] if out is not None else [])]


def test_train_equals_cli_run(a9a, tmp_path):
    cli_out = tmp_path / "cli"
    run_cli(*cli_small_args(a9a, cli_out))
    run = asyncdp.train(TABLE3, **small_overrides(a9a), out=tmp_path / "py")

    assert run.metrics_csv == (cli_out / "metrics.csv").read_text()
    assert run.clients_csv == (cli_out / "clients.csv").read_text()
    for name in ("metrics.csv", "clients.csv", "config.resolved.toml"):
        assert (tmp_path / "py" / name).read_text() == (cli_out / name).read_text(), name
    cli_summary = json.loads((cli_out / "summary.json").read_text())
    strip = lambda s: {k: v for k, v in s.items() if k not in TIMING_KEYS}  # noqa: E731
    assert strip(run.summary) == strip(cli_summary)
    assert set(run.summary) == set(cli_summary)

    # metrics / clients as numpy columns, the same numbers as the CSV text.
    header = run.metrics_csv.splitlines()[0].split(",")
    # Columns aggregated over clients say how; the others keep the CSV's names.
    renamed = {"gradients": "gradients_total", "epsilon": "epsilon_max_over_clients"}
    expected = []
    for name in header:
        expected.append(renamed.get(name, name))
        if name == "gradients":
            expected.append("gradients_per_client")
    assert list(run.metrics) == expected
    assert list(run.metrics_frame().columns) == expected and len(run.metrics_frame()) == len(run.metrics_csv.splitlines()) - 1
    gradients = [int(line.split(",")[header.index("gradients")]) for line in run.metrics_csv.splitlines()[1:]]
    assert list(run.metrics["gradients_total"]) == gradients
    assert list(run.metrics["gradients_per_client"]) == [g / 5 for g in gradients]
    frame = run.clients_frame()
    assert list(frame["client"]) == [0, 1, 2, 3, 4] and frame["planned_gradients"].dtype == np.int64
    assert run.metrics["global_round"].dtype == np.int64 and run.metrics["test_accuracy"].dtype == np.float64
    last = run.metrics_csv.splitlines()[-1].split(",")
    assert run.metrics["test_accuracy"][-1] == float(last[header.index("test_accuracy")])
    # metrics.csv prints 9 significant digits; summary.json holds the full double.
    assert run.metrics["test_accuracy"][-1] == pytest.approx(run.summary["test_accuracy"], rel=1e-8)
    assert list(run.clients["client"]) == [0, 1, 2, 3, 4]
    assert run.clients["stop"].dtype.kind == "U"
    assert run.final_model.dtype == np.float32 and run.final_model.shape == (run.summary["model"]["parameters"],)
    assert "seed = 5" in run.config_toml
    assert run.config["seed"] == 5 and run.config["dp"]["sigma"] == 19.29962  # the resolved TOML as a dict
    assert run.config["model"]["kind"] == run.summary["model"]["kind"]


def test_dict_config_equals_file_config(a9a, tmp_path, capfd):
    from_file = asyncdp.train(TABLE3, **small_overrides(a9a, seed=2))
    as_dict = {"seed": 1, "data": {"features": 123}, "model": {"kind": "logistic_l2", "l2_lambda": 0.0},
               "clients": {"count": 5}, "protocol": {"runtime": "virtual", "delay_rule": "bounded", "tau": 1},
               "dp": {"clip": 0.1, "sigma": 19.29962, "delta": 0.0, "sampling": "poisson"},
               "schedule": {"sample_sizes": "constant", "sample_size": 26, "epochs": 5.0,
                            "step_rule": "inverse_linear", "eta0": 0.1, "beta": 0.001},
               "eval": {"points": 20}}
    from_dict = asyncdp.train(as_dict, **small_overrides(a9a, seed=2))
    assert from_dict.metrics_csv == from_file.metrics_csv
    assert from_dict.config == from_file.config
    # "__" spells a dotted key in keyword overrides: eval.points = 3 given only as eval__points.
    without_eval = {key: value for key, value in small_overrides(a9a, seed=2).items() if key != "eval"}
    again = asyncdp.train(TABLE3, **without_eval, eval__points=3)
    assert again.metrics_csv == from_file.metrics_csv
    # A key given twice among the overrides: the later value is used, with a warning naming both; the
    # overrides replace a dict configuration's key (as --set does a file's) without one.
    assert asyncdp.resolve_config(TABLE3, **small_overrides(a9a, seed=2), eval__points=4)["eval"]["points"] == 4
    assert "eval.points: given twice (eval.points=3, then eval.points=4)" in capfd.readouterr().err
    assert asyncdp.resolve_config(as_dict, **small_overrides(a9a, seed=2), dp__sigma=4.0)["dp"]["sigma"] == 4.0
    assert "given twice" not in capfd.readouterr().err
    # The configuration may be named, as a researcher writes it: config= is the same first argument (it
    # was positional-only, so config=PATH fell among the overrides as an unknown key "config").
    assert asyncdp.train(config=TABLE3, **small_overrides(a9a, seed=2)).metrics_csv == from_file.metrics_csv
    assert asyncdp.resolve_config(config=as_dict, **small_overrides(a9a, seed=2)) == from_dict.config
    assert asyncdp.unread_keys(config=TABLE3) == asyncdp.unread_keys(TABLE3)
    with pytest.raises(TypeError, match="multiple values for argument 'config'"):
        asyncdp.train(TABLE3, config=TABLE3)


def test_the_event_trace_is_returned_as_the_cli_writes_it(a9a, tmp_path):
    # output.trace without out= was computed and dropped: train() returned no trace (nor phases).
    cli_out = tmp_path / "cli"
    run_cli(*cli_small_args(a9a, cli_out), "--set", "output.trace=true")
    run = asyncdp.train(TABLE3, **small_overrides(a9a), output__trace=True)
    assert run.events_csv and run.events_csv == (cli_out / "events.csv").read_text()
    frame = run.events_frame()
    lines = run.events_csv.splitlines()
    assert len(frame) == len(lines) - 1 and list(frame.columns) == lines[0].split(",")
    plain = asyncdp.train(TABLE3, **small_overrides(a9a))
    assert plain.events_csv == "" and plain.phases_csv == ""
    with pytest.raises(ValueError, match="output.trace"):
        plain.events_frame()
    with pytest.raises(ValueError, match="not proactive"):
        plain.phases_frame()


def test_a_proactive_runs_phases_are_returned_as_the_cli_writes_them(a9a, tmp_path):
    train, test = a9a
    flow = os.path.join(SOURCE_DIR, "experiments", "proactive_flow.toml")
    small = {"data": {"train": str(train), "test": str(test), "rows_per_client": 600, "eval_rows": 1000}}
    run = asyncdp.train(flow, **small, out=tmp_path / "py")
    assert run.phases_csv and run.phases_csv == (tmp_path / "py" / "phases.csv").read_text()
    frame = run.phases_frame()
    assert len(frame) == len(run.phases_csv.splitlines()) - 1 and set(frame["client"]) <= set(range(5))


def test_resolve_config_is_what_the_run_resolves_without_training(a9a, tmp_path):
    calibrate = {"dp": {"sigma": 0.0, "epsilon": 2.0}}
    resolved = asyncdp.resolve_config(TABLE3, **small_overrides(a9a), **calibrate)
    run = asyncdp.train(TABLE3, **small_overrides(a9a), **calibrate)
    assert resolved == run.config
    assert resolved["dp"]["sigma"] > 0 and resolved["model"]["l2_lambda"] > 0  # calibrated; 1/N
    # The CLI's --print-config prints the same text (config.resolved.toml: a header line, then the TOML).
    printed = run_cli(*cli_small_args(a9a, None), "--set", "dp.sigma=0", "--set", "dp.epsilon=2", "--print-config")
    header, body = printed.stdout.split("\n", 1)
    assert header.startswith("# asyncdp ") and body == run.config_toml
    with pytest.raises(asyncdp.ConfigError, match=r"^dp\.clip: "):
        asyncdp.resolve_config(TABLE3, **small_overrides(a9a), dp__clip=-1.0)


def test_bad_config_raises_with_the_key_path(a9a, tmp_path):
    with pytest.raises(asyncdp.ConfigError) as error:
        asyncdp.train(TABLE3, **small_overrides(a9a), dp={"clip": -1.0})
    cli = run_cli(*cli_small_args(a9a, tmp_path / "o"), "--set", "dp.clip=-1.0", check=False)
    # The CLI locates the value at its --set option; Python at the key, with the same text after it.
    assert cli.returncode == 2 and cli.stderr.strip() == f"error: --set: {error.value}"
    assert error.value.key == "dp.clip"
    # A keyword override is located at its key, not at the CLI's --set option (docs/python.md).
    with pytest.raises(asyncdp.ConfigError) as error:
        asyncdp.train(TABLE3, dp__clip=-1.0)
    assert str(error.value).startswith("dp.clip: ") and error.value.where == "dp.clip"
    assert error.value.key == "dp.clip" and "--set" not in str(error.value)
    with pytest.raises(asyncdp.ConfigError, match=r"^dp\.sigmaa: unknown key"):
        asyncdp.train(TABLE3, dp={"sigmaa": 1.0})
    with pytest.raises(asyncdp.ConfigError, match=r"dp\.sigma: expected a number") as error:
        asyncdp.train(TABLE3, dp__sigma="four")
    cli = run_cli("train", "--config", TABLE3, "--set", 'dp.sigma="four"', check=False)
    assert cli.returncode == 2 and cli.stderr.strip() == f"error: --set: {error.value}"
    bad = tmp_path / "bad.toml"
    bad.write_text("seed = 1\n[dp]\nsigma = = 3\n")
    with pytest.raises(asyncdp.ParseError) as error:
        asyncdp.train(bad)
    assert (error.value.file, error.value.line) == (str(bad), 3)
    cli = run_cli("train", "--config", bad, check=False)
    assert cli.returncode == 2 and cli.stderr.strip() == f"error: {error.value}"
    with pytest.raises(asyncdp.InputError, match="cannot open"):
        asyncdp.train(TABLE3, data={"train": str(tmp_path / "missing.svm")})
    # out= is judged before the run: a file there stops train() before its first round (before, the whole run
    # ran and then failed), and an empty path is a ConfigError, not a filesystem error after the run.
    rounds = []
    (tmp_path / "a_file").write_text("not a directory\n")
    with pytest.raises(asyncdp.InputError, match="output path exists and is not a directory"):
        asyncdp.train(TABLE3, out=tmp_path / "a_file", progress=rounds.append, poll_seconds=0.001)
    assert rounds == []
    with pytest.raises(asyncdp.ConfigError, match="^out: empty value; a path is expected$") as error:
        asyncdp.train(TABLE3, out="")
    assert error.value.key == "out"


def test_unread_keys_names_what_a_run_does_not_read_and_train_refuses_them_even_at_their_default(a9a):
    checkins = SOURCE_DIR / "experiments" / "checkins_a9a.toml"
    unread = asyncdp.unread_keys(checkins)
    assert "check_in" in unread["dp.sampling"] and "dp.clip" not in unread and "checkin.steps" not in unread
    assert "model.threads" in unread and "model.threads" in asyncdp.unread_keys(TABLE3)
    assert "model.threads" not in asyncdp.unread_keys(TABLE3, model__kind="lenet")
    default_sampling = asyncdp.resolve_config(TABLE3, **small_overrides(a9a))["dp"]["sampling"]
    train, test = a9a
    with pytest.raises(asyncdp.ConfigError, match=r"^dp\.sampling: is set to .* \(its default\) but this run does not"):
        asyncdp.train(checkins, data={"train": str(train), "test": str(test)}, dp__sampling=default_sampling)
    # The experiment runner's one-thread cap gives a run only the keys it reads.
    from asyncdp.experiments.runner import _train_overrides, one_thread

    capped = {"dp.clip": 1.0, **one_thread(True)}
    assert _train_overrides(TABLE3, capped) == {"dp.clip": 1.0, "protocol.worker_threads": 1}
    assert _train_overrides(TABLE3, {**capped, "model.kind": "lenet"})["model.threads"] == 1
    assert _train_overrides(checkins, capped) == {"dp.clip": 1.0}  # virtual check-ins: the server's thread
    assert one_thread(False) == {}


def test_a_truncated_run_raises_unless_the_configuration_accepts_it(a9a, tmp_path):
    """As ``asyncdp train`` exits 4: client 2's messages take 1,000 s, so it is excluded and, once the others
    are done and it has stayed silent for exclude_after more, cut off (tests/apps/train_command_test.cc).
    protocol.allow_truncation was read by the CLI only; Python returned the truncated run as a result."""
    cut_off = {"protocol": {"runtime": "threads", "exclude_after": 0.05},
               "clients": {"delay_ids": [2], "delay_extra": 1000.0}}
    overrides = small_overrides(a9a)
    overrides["schedule"] = {"rounds": 300}
    with pytest.raises(asyncdp.TruncatedRun, match="1 client.*cut_off_after_exclusion.*allow_truncation") as caught:
        asyncdp.train(TABLE3, **overrides, **cut_off, out=tmp_path / "cut")
    run = caught.value.run
    assert run.summary["truncated"] and not run.summary["stalled"]
    assert run.summary["unfinished_clients"] == [2]
    assert "truncated=True" in repr(run)
    # The outputs are written first, as the CLI writes them before its exit code.
    assert json.loads((tmp_path / "cut" / "summary.json").read_text())["truncated"]

    cut_off["protocol"]["allow_truncation"] = True
    accepted = asyncdp.train(TABLE3, **overrides, **cut_off)
    assert accepted.summary["truncated"] and accepted.summary["unfinished_clients"] == [2]


CHECKINS = SOURCE_DIR / "experiments" / "checkins_a9a.toml"


def test_checkin_runs_report_progress_and_stop_when_asked(a9a):
    """Random check-ins take the same progress callback and Ctrl-C path as asynchronous rounds: the steps
    taken stand for the global round, and raising stops the run instead of waiting for its end."""
    train, test = a9a
    data = {"data": {"train": str(train), "test": str(test)}, "dp": {"sigma": 2.0, "epsilon": 0.0}}
    seen = []
    run = asyncdp.train(CHECKINS, **data, progress=seen.append, poll_seconds=0.001)
    assert "steps_run=32561" in repr(run)  # a check-in run has no global rounds
    rounds = [info["global_round"] for info in seen]
    assert rounds == sorted(rounds) and rounds[-1] > 0

    class Stop(Exception):
        pass

    def stop(info):
        if info["global_round"] > 0:
            raise Stop(info["global_round"])

    start = time.monotonic()
    with pytest.raises(Stop):
        # 200 windows of 32,561 steps: far longer than the 5 s allowed unless the raise stops it.
        asyncdp.train(CHECKINS, **data, checkin={"windows": 200}, progress=stop, poll_seconds=0.01)
    assert time.monotonic() - start < 5.0


def long_run_overrides(a9a, runtime):
    train, test = a9a
    return {"data": {"train": str(train), "test": str(test)}, "schedule": {"epochs": 1000.0},
            "protocol": {"runtime": runtime}}


@pytest.mark.parametrize("runtime", ["virtual", "threads"])
def test_ctrl_c_stops_the_run_cleanly(a9a, runtime):
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        asyncdp.train(TABLE3, **long_run_overrides(a9a, runtime), poll_seconds=0.05)
    elapsed = time.monotonic() - start
    timer.join()
    assert elapsed < 5.0  # the full run takes far longer (1000 epochs of a9a)
    # The module is usable afterwards: no thread of the stopped run is left holding anything.
    assert asyncdp.account(q=0.01, sigma=1.0, steps=10, delta=1e-5).pld.epsilon > 0


def test_progress_callback_sees_rounds_and_can_stop_the_run(a9a):
    seen = []
    asyncdp.train(TABLE3, **small_overrides(a9a), progress=seen.append, poll_seconds=0.001)
    assert seen and all(set(info) == {"global_round", "time", "gradients_total"} for info in seen)
    assert [info["global_round"] for info in seen] == sorted(info["global_round"] for info in seen)

    class Stop(Exception):
        pass

    def stop(info):
        raise Stop(info["global_round"])

    start = time.monotonic()
    with pytest.raises(Stop):
        asyncdp.train(TABLE3, **long_run_overrides(a9a, "virtual"), progress=stop, poll_seconds=0.01)
    assert time.monotonic() - start < 5.0
