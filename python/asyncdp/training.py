"""The simulator: ``asyncdp train`` as a function returning a Run."""

import dataclasses
import math
import os
from typing import Any, Callable, Optional

from . import _asyncdp


@dataclasses.dataclass(frozen=True, repr=False)
class Run:
    """One finished run, with the content of the CLI's four output files.

    ``summary``: summary.json as a dict (accuracy, epsilon per accountant with its assumptions, the
    resolved configuration, timings). ``metrics`` / ``clients``: metrics.csv / clients.csv as
    {column: numpy array} (int64, float64 or str columns). ``config``: config.resolved.toml's text.
    ``final_model``: the global model v-hat after every applied update (float32).
    """

    summary: dict
    metrics: dict
    clients: dict
    config: str
    final_model: Any
    metrics_csv: str
    clients_csv: str

    def __repr__(self):
        s = self.summary
        return (f"Run(model={s['model']['kind']!r}, test_accuracy={s['test_accuracy']!r}, "
                f"epsilon={s['epsilon']!r}, delta={s['delta']!r}, global_rounds={s['global_rounds']!r})")


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
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            out.extend(_assignments(value, path + "."))
        else:
            out.append(f"{path}={_toml_value(value, path)}")
    return out


def train(config=None, /, *, progress: Optional[Callable[[dict], Any]] = None, out=None,
          poll_seconds: float = 0.1, **overrides) -> Run:
    """Runs the asynchronous DP-SGD simulator, as ``asyncdp train`` does, and returns a Run.

    ``config``: the path of a TOML configuration (docs/config.md), a dict of the same shape
    ({"seed": 1, "dp": {"sigma": 4.0}, ...}), or None for the defaults. ``overrides`` are applied after
    it, like the CLI's ``--set``: ``dp={"sigma": 4.0}``, or ``dp__sigma=4.0`` ("__" for "."), or
    ``seed=3``. ``out``: also write the CLI's output files into that directory.
    ``progress``: called every ``poll_seconds`` on the calling thread with
    {"global_round", "time", "gradients"}; an exception it raises stops the run and propagates.

    The computation runs without the GIL; Ctrl-C (KeyboardInterrupt) stops the run cleanly within
    ``poll_seconds`` plus one round. A bad configuration raises asyncdp.ConfigError naming the key path
    (asyncdp.ParseError with FILE:LINE:COL for a malformed TOML file).
    """
    import numpy  # noqa: F401  (the result holds numpy arrays; fail early if it is missing)

    path = None
    assignments = []
    if isinstance(config, dict):
        assignments.extend(_assignments(config))
    elif config is not None:
        path = os.fspath(config)
    assignments.extend(_assignments({key.replace("__", "."): value for key, value in overrides.items()}))
    parts = _asyncdp.train(path, assignments, progress, float(poll_seconds),
                           None if out is None else os.fspath(out))
    return Run(summary=parts["summary"], metrics=_csv_columns(parts["metrics_csv"]),
               clients=_csv_columns(parts["clients_csv"]), config=parts["config_toml"],
               final_model=parts["final_model"], metrics_csv=parts["metrics_csv"],
               clients_csv=parts["clients_csv"])


__all__ = ["Run", "train"]
