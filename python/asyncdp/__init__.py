"""asyncdp from Python: privacy accounting and the asynchronous DP-SGD simulator.

Every function runs the same C++ code as the ``asyncdp`` command-line tool, so values are bit-identical
to the CLI's JSON and CSV output. See docs/python.md.

    >>> import asyncdp
    >>> asyncdp.account(q=0.01, sigma=1.0, steps=10000, delta=1e-5).epsilon
"""

from . import _asyncdp
from .accounting import (
    AccountResult,
    AccountantResult,
    CalcResult,
    account,
    calc,
    calibrate_sigma,
)
from .data import load_libsvm
from .errors import BinaryFormatError, ConfigError, InputError, ParseError
from .training import Run, train

__version__ = _asyncdp.__version__


def set_log_level(level):
    """Log level of the simulator's messages on stderr: "info" shows the CLI's lines; default "warn"."""
    _asyncdp.set_log_level(level)


__all__ = [
    "AccountResult",
    "AccountantResult",
    "BinaryFormatError",
    "CalcResult",
    "ConfigError",
    "InputError",
    "ParseError",
    "Run",
    "account",
    "calc",
    "calibrate_sigma",
    "load_libsvm",
    "set_log_level",
    "train",
]
