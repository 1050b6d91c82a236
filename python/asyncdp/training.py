"""The simulator: ``asyncdp train`` as a function returning a Run."""

from __future__ import annotations

import dataclasses
import math
import os
import tomllib
from typing import Any, Callable, Mapping, Optional, Union

from . import _asyncdp
from .errors import ConfigError, TruncatedRun

# Columns of metrics.csv whose CLI name does not say what they aggregate: in Run.metrics and
# metrics_frame() they carry the name that does (metrics_csv keeps the CLI's text). clients.csv is one row
# per client already, so its columns are per client.
_METRICS_NAMES = {
    "gradients": "gradients_total",          # planned gradients applied so far, summed over all clients
    "epsilon": "epsilon_max_over_clients",   # running epsilon of the applied rounds, of the worst client
}


@dataclasses.dataclass(frozen=True, repr=False)
class Run:
    """One finished run, with the content of the CLI's output files.

    ``summary``: summary.json as a dict (accuracy, epsilon per accountant with its assumptions, the
    resolved configuration, timings). ``metrics`` / ``clients``: metrics.csv / clients.csv as
    {column: numpy array} (int64, float64 or str columns); in ``metrics`` the columns that aggregate over
    clients say how: ``gradients_total`` (the CSV's ``gradients``: summed over clients),
    ``gradients_per_client`` (that total over the number of clients) and ``epsilon_max_over_clients``
    (the CSV's ``epsilon``: the worst client's running epsilon). ``metrics_frame()`` /
    ``clients_frame()`` give them as pandas DataFrames. ``config``: the resolved configuration as a dict
    (``config_toml``: config.resolved.toml's text). ``final_model``: the global model v-hat after every
    applied update (float32). ``metrics_csv`` / ``clients_csv``: the CLI's files' text. ``phases_csv``:
    phases.csv's text for a proactive run (``targets.accuracy > 0``; "" otherwise), one row per client and
    phase, and ``phases_frame()`` its DataFrame. ``events_csv``:
    events.csv's text, the protocol's event trace, with ``output.trace = true`` ("" without it;
    ``events_frame()`` gives it as a DataFrame): a diagnostic, not covered by epsilon (arrival order
    reflects compute times).
    """

    summary: dict
    metrics: dict
    clients: dict
    config: dict
    final_model: Any
    metrics_csv: str
    clients_csv: str
    config_toml: str
    events_csv: str = ""
    phases_csv: str = ""

    def phases_frame(self):
        """phases.csv (a proactive run's phases, one row per client and phase) as a pandas DataFrame."""
        return _csv_frame(self.phases_csv, "no phases: the run is not proactive (targets.accuracy = 0)")

    def events_frame(self):
        """events.csv (the event trace) as a pandas DataFrame; the run must set ``output.trace = true``."""
        return _csv_frame(self.events_csv, "no event trace: the run did not set output.trace = true")

    def metrics_frame(self):
        """metrics.csv as a pandas DataFrame, with the column names of ``metrics`` (needs pandas)."""
        import pandas as pd

        return pd.DataFrame(self.metrics)

    def clients_frame(self):
        """clients.csv as a pandas DataFrame, one row per client (needs pandas)."""
        import pandas as pd

        return pd.DataFrame(self.clients)

    def __repr__(self):
        s = self.summary
        # Asynchronous rounds count global rounds; random check-ins, server steps.
        progress = (f"global_rounds={s['global_rounds']!r}" if "global_rounds" in s
                    else f"steps_run={s.get('steps_run')!r}")
        truncated = ", truncated=True" if s.get("truncated") else ""
        return (f"Run(model={s['model']['kind']!r}, test_accuracy={s['test_accuracy']!r}, "
                f"epsilon={s['epsilon']!r}, delta={s['delta']!r}, {progress}{truncated})")


def _csv_frame(text, why_empty):
    """An optional output file's text as a pandas DataFrame; ValueError(why_empty) when the run has none."""
    if not text:
        raise ValueError(why_empty)
    import io

    import pandas as pd

    return pd.read_csv(io.StringIO(text))


def _csv_columns(text):
    """A CSV string as {column: numpy array}: int64 if every value is an integer, float64 if every value
    is a number (inf and nan included), else str."""
    import numpy as np

    lines = [line for line in text.splitlines() if line]
    header = lines[0].split(",")
    rows = [line.split(",") for line in lines[1:]]
    columns = {}
    for j, name in enumerate(header):
        values = [row[j] for row in rows]
        for dtype, parse in ((np.int64, int), (np.float64, float)):
            try:
                columns[name] = np.array([parse(v) for v in values], dtype=dtype)
                break
            except ValueError:
                continue
        else:
            columns[name] = np.array(values, dtype=str)
    return columns


def _toml_value(value, key):
    """A Python value as the TOML literal ``--set key=value`` parses."""
    if hasattr(value, "item") and not isinstance(value, (list, tuple, dict, str)):
        value = value.item()  # numpy scalar
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)  # shortest text that reads back as the same double
    if isinstance(value, (str, os.PathLike)):
        text = os.fspath(value)
        escaped = "".join(f"\\u{ord(ch):04x}" if ord(ch) < 0x20 or ch == "\x7f" else
                          "\\" + ch if ch in '"\\' else ch for ch in text)
        return f'"{escaped}"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(item, key) for item in value) + "]"
    raise TypeError(f"{key}: cannot express a {type(value).__name__} as a configuration value")


def _assignments(mapping, prefix=""):
    """Nested {section: {key: value}} as ["section.key=value", ...] in the mapping's order."""
    out = []
    for key, value in mapping.items():
        if not isinstance(key, str):
            raise TypeError(f"{prefix}{key!r}: configuration keys are strings, got {type(key).__name__}")
        path = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.extend(_assignments(value, path + "."))
        else:
            out.append(f"{path}={_toml_value(value, path)}")
    return out


def _named_metrics(columns, num_clients):
    named = {}
    for name, values in columns.items():
        named[_METRICS_NAMES.get(name, name)] = values
        if name == "gradients" and num_clients:
            named["gradients_per_client"] = values / num_clients
    return named


def _progress_named(progress):
    if progress is None:
        return None

    def call(state):
        state = dict(state)
        if "gradients" in state:
            state["gradients_total"] = state.pop("gradients")
        return progress(state)

    return call


def _config_source(config, overrides: Mapping[str, Any]) -> tuple[Optional[str], list[list[str]]]:
    """train()'s and resolve_config()'s first argument and keyword overrides as the binding takes them: the
    TOML file's path (or None) and the layers of ``key=value`` assignments applied after it — a dict
    configuration's, then the overrides'. A key given twice within a layer (``dp={"sigma": 4}`` with
    ``dp__sigma=5``) is warned about; the overrides replace a dict configuration's key without one."""
    path = None
    layers = []
    if isinstance(config, Mapping):
        layers.append(_assignments(config))
    elif config is not None:
        if not isinstance(config, (str, os.PathLike)):
            raise TypeError(f"config: expected a path, a dict or None, got {type(config).__name__}")
        path = os.fspath(config)
    layers.append(_assignments({key.replace("__", "."): value for key, value in overrides.items()}))
    return path, layers


def _at_key(e: ConfigError) -> ConfigError:
    """A keyword override's error located at its key, as for a dict or TOML value ("dp.clip: ..."), not at
    the CLI's --set option; any other error as it is."""
    if e.where != "--set" or e.key == "--set":
        return e
    message = e.message.split(": ", 1)[1]
    return ConfigError(f"{e.key}: {message}", e.key, message)


def train(config: Union[str, "os.PathLike[str]", Mapping[str, Any], None] = None, *,
          progress: Optional[Callable[[dict], Any]] = None, out: Union[str, "os.PathLike[str]", None] = None,
          poll_seconds: float = 0.1, **overrides: Any) -> Run:
    """Runs the asynchronous DP-SGD simulator, as ``asyncdp train`` does, and returns a Run.

    ``config``: the path of a TOML configuration (docs/config.md), a dict of the same shape
    ({"seed": 1, "dp": {"sigma": 4.0}, ...}), or None for the defaults. ``overrides`` are applied after
    it, like the CLI's ``--set``: ``dp={"sigma": 4.0}``, or ``dp__sigma=4.0`` ("__" for "."), or
    ``seed=3`` (one key given both ways: the later is used, with a warning naming both values). ``out``:
    also write the CLI's output files into that directory.
    ``progress``: called every ``poll_seconds`` on the calling thread with
    {"global_round", "time", "gradients_total"} (gradients summed over clients); an exception it raises
    stops the run and propagates.

    The computation runs without the GIL; Ctrl-C (KeyboardInterrupt) stops the run cleanly within
    ``poll_seconds`` plus one round. A bad configuration raises asyncdp.ConfigError naming the key path
    (asyncdp.ParseError with FILE:LINE:COL for a malformed TOML file). A run that ended before every
    client finished raises asyncdp.TruncatedRun holding the Run (``out`` is written first), unless the
    configuration sets protocol.allow_truncation = true.
    """
    import numpy  # noqa: F401  (the result holds numpy arrays; fail early if it is missing)

    path, layers = _config_source(config, overrides)
    if isinstance(poll_seconds, bool) or not isinstance(poll_seconds, (int, float)):
        raise TypeError(f"poll_seconds: expected a number, got {type(poll_seconds).__name__}")
    if not (poll_seconds > 0 and math.isfinite(poll_seconds)):
        raise ConfigError(f"poll_seconds: must be a positive number, got {poll_seconds!r}", "poll_seconds",
                          f"must be a positive number, got {poll_seconds!r}")
    if progress is not None and not callable(progress):
        raise TypeError(f"progress: expected a callable, got {type(progress).__name__}")
    if out is not None and not isinstance(out, (str, os.PathLike)):
        raise TypeError(f"out: expected a path, got {type(out).__name__}")
    if out is not None and os.fspath(out) == "":
        raise ConfigError("out: empty value; a path is expected", "out", "empty value; a path is expected")
    try:
        parts = _asyncdp.train(path, layers, _progress_named(progress), float(poll_seconds),
                               None if out is None else os.fspath(out))
    except ConfigError as e:
        raise _at_key(e) from None
    config_toml = parts["config_toml"]
    summary = parts["summary"]
    num_clients = len(parts["clients_csv"].splitlines()) - 1
    run = Run(summary=summary, metrics=_named_metrics(_csv_columns(parts["metrics_csv"]), num_clients),
              clients=_csv_columns(parts["clients_csv"]), config=tomllib.loads(config_toml),
              final_model=parts["final_model"], metrics_csv=parts["metrics_csv"],
              clients_csv=parts["clients_csv"], config_toml=config_toml, events_csv=parts["events_csv"],
              phases_csv=parts["phases_csv"])
    # Where `asyncdp train` exits 4 (after writing ``out``; the rule is sim::TruncationRefused): a
    # truncated run is not a result unless the configuration accepts it.
    if parts["truncation_refused"]:
        raise TruncatedRun(run)
    return run


def resolve_config(config: Union[str, "os.PathLike[str]", Mapping[str, Any], None] = None,
                   **overrides: Any) -> dict:
    """The configuration ``train(config, **overrides)`` would resolve before training — the data-derived
    defaults (``model.l2_lambda = 1/N``, ``dp.delta``) and ``dp.sigma`` calibrated to ``dp.epsilon`` — as the
    run's ``config.resolved.toml`` records it (``asyncdp train --print-config``), without training: e.g.
    ``resolve_config("experiments/table3_strongly_convex.toml", dp__sigma=0, dp__epsilon=1)["dp"]["sigma"]``.
    Loads the data and runs the calibration; errors as for train()."""
    path, layers = _config_source(config, overrides)
    try:
        return tomllib.loads(_asyncdp.resolve_config(path, layers))
    except ConfigError as e:
        raise _at_key(e) from None


def unread_keys(config: Union[str, "os.PathLike[str]", Mapping[str, Any], None] = None,
                **overrides: Any) -> dict[str, str]:
    """Every configuration key a run of ``train(config, **overrides)`` would not read, with the reason: e.g.
    ``unread_keys(protocol__participation="check_in")["dp.sampling"]`` says check-ins sample by their own
    check-in. ``train`` refuses such a key when it is given (even at its default value), so this tells a
    script which of its keys apply to a run. Reads the configuration only (no data, no checks)."""
    path, layers = _config_source(config, overrides)
    try:
        return dict(_asyncdp.unread_keys(path, layers))
    except ConfigError as e:
        raise _at_key(e) from None


__all__ = ["Run", "resolve_config", "train", "unread_keys"]
