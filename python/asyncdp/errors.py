"""Exceptions raised by asyncdp, with the CLI's own error text.

For bad input ``str(e)`` is exactly what ``asyncdp`` prints after ``error:`` (and exits 2 for):
``FILE:LINE:COL: ...`` for a malformed text file, ``FILE:byte OFFSET: ...`` for a binary one,
``key.path: ...`` for a bad configuration value or argument. A run that ended before every client
finished raises TruncatedRun, where ``asyncdp train`` exits 4.
"""


class InputError(ValueError):
    """Bad input. ``where`` is the location (file position or key path), ``message`` what was expected."""

    def __init__(self, text, where="", message=""):
        super().__init__(text)
        self.where = where
        self.message = message


class ParseError(InputError):
    """A malformed text file (TOML config, LIBSVM, CSV): ``file``, 1-based ``line`` and ``column``."""

    def __init__(self, text, where, message, file, line, column):
        super().__init__(text, where, message)
        self.file = file
        self.line = line
        self.column = column


class BinaryFormatError(InputError):
    """A malformed binary file (gzip, IDX, CIFAR-10): ``file`` and ``byte_offset``."""

    def __init__(self, text, where, message, file, byte_offset):
        super().__init__(text, where, message)
        self.file = file
        self.byte_offset = byte_offset


class ConfigError(InputError):
    """A bad configuration value or argument; ``key`` is its dotted path (e.g. ``dp.sigma``)."""

    def __init__(self, text, where, message):
        super().__init__(text, where, message)
        # An override's range error is located at "--set" with the key leading the message
        # ("dp.clip: the value must be ..."): the key path is that leading name.
        head = message.split(": ", 1)[0] if ": " in message else ""
        self.key = head if where == "--set" and head and " " not in head else where


class InfeasibleTarget(ValueError):
    """No noise multiplier meets a calibration target (``calibrate_sigma``): even sigma = 1e4 gives an
    epsilon above ``epsilon`` at ``delta`` by ``accountant``. ``result`` is the AccountResult as computed."""

    def __init__(self, text, epsilon, delta, accountant, result):
        super().__init__(text)
        self.epsilon = epsilon
        self.delta = delta
        self.accountant = accountant
        self.result = result


class TruncatedRun(RuntimeError):
    """The run ended before every client finished (``summary["truncated"]``; ``asyncdp train`` exits 4):
    ``run`` is the Run as it ended, and ``run.summary["unfinished"]`` says which clients, why (stalled,
    cut_off_after_exclusion) and how far each got. Configure ``protocol.allow_truncation = true`` to have
    such a run returned instead."""

    def __init__(self, run):
        unfinished = run.summary.get("unfinished", [])
        reasons = ", ".join(sorted({u["reason"] for u in unfinished})) or "no reason given"
        super().__init__(f"the run is truncated: {len(unfinished)} client(s) did not finish ({reasons}; "
                         "summary['unfinished']); protocol.allow_truncation = true accepts truncated runs")
        self.run = run
