"""asyncdp from Python: privacy accounting and the asynchronous DP-SGD simulator.

Every function runs the same C++ code as the ``asyncdp`` command-line tool, so values are bit-identical
to the CLI's JSON and CSV output. See docs/python.md.

    >>> import asyncdp
    >>> r = asyncdp.account(q=0.01, sigma=1.0, steps=10000, delta=1e-5)
    >>> round(r.pld.epsilon, 2), r.pld.bound
    (6.19, 'upper_bound')
    >>> round(asyncdp.epsilon(q=0.01, sigma=1.0, steps=10000, delta=1e-5), 2)
    6.19
    >>> asyncdp.delta(q=0.01, sigma=1.0, steps=10000, epsilon=6.19) <= 1e-5 * (1 + 1e-6)
    True
"""

from . import _asyncdp
from .accounting import (
    AccountResult,
    AccountantResult,
    CalcResult,
    PrivacyCurve,
    account,
    calc,
    calibrate_sigma,
    delta,
    epsilon,
    privacy_curve,
)
from .data import load_libsvm
from .errors import BinaryFormatError, ConfigError, InfeasibleTarget, InputError, ParseError, TruncatedRun
from .training import Run, resolve_config, train, unread_keys

__version__ = _asyncdp.__version__


def set_log_level(level: str) -> None:
    """Log level of the simulator's messages on stderr: "info" shows the CLI's lines; default "warn"."""
    _asyncdp.set_log_level(level)


__all__ = [
    "AccountResult",
    "AccountantResult",
    "BinaryFormatError",
    "CalcResult",
    "ConfigError",
    "InfeasibleTarget",
    "InputError",
    "ParseError",
    "PrivacyCurve",
    "Run",
    "TruncatedRun",
    "account",
    "calc",
    "calibrate_sigma",
    "delta",
    "epsilon",
    "load_libsvm",
    "privacy_curve",
    "resolve_config",
    "set_log_level",
    "train",
    "unread_keys",
]
