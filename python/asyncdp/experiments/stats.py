"""Statistics of the experiment reports: intervals over seeds, paired differences, verdicts.

Every compared quantity in a REPORT is a set of runs that differ only in their seed. A verdict is read
from the 95% interval of the (paired, where the runs share seeds) difference, never from single runs:

* ``holds`` when the whole interval lies on the claimed side of the threshold,
* ``does not hold`` when the whole interval lies on the other side,
* ``inconclusive`` when the interval contains the threshold (or fewer than two seeds were run).

Intervals are Student-t intervals of the mean (scipy.stats.t), which assume roughly normal seed-to-seed
variation; with 3-5 seeds they are wide, and that is the honest answer. An accuracy's interval is clipped
to [0, 1] (``ACCURACY``), the range its mean lies in.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Iterable, Sequence

import numpy as np
from scipy import stats as _st

LEVEL = 0.95
# The range of an accuracy: a Student-t interval of a few seeds can reach past it (0.78 [0.32, 1.24] from two
# seeds), and a mean accuracy cannot lie there, so accuracy intervals are clipped to it (the intersection of
# an interval with the parameter's range covers it as often).
ACCURACY = (0.0, 1.0)

HOLDS = "holds"
FAILS = "does not hold"
INCONCLUSIVE = "inconclusive"


@dataclasses.dataclass(frozen=True)
class Interval:
    """Mean of n values with a two-sided ``level`` Student-t interval [low, high] (NaN for n < 2)."""

    mean: float
    low: float
    high: float
    n: int
    sd: float

    def text(self, digits: int = 3) -> str:
        """"m [lo, hi]" with ``digits`` significant digits ("m (n = 1)" without an interval)."""
        if self.n == 0 or not math.isfinite(self.mean):
            return "n/a"
        if self.n < 2 or not math.isfinite(self.low):
            return f"{_g(self.mean, digits)} (n = {self.n})"
        return f"{_g(self.mean, digits)} [{_g(self.low, digits)}, {_g(self.high, digits)}]"

    def text_n(self, digits: int = 3) -> str:
        """text() with the number of values (seeds, or seed pairs) it rests on, as every verdict's measured
        column states it: "m [lo, hi], n = 5"; "m (n = 1)" and "n/a (n = 0)" without an interval."""
        body = self.text(digits)
        if body == "n/a":
            return f"n/a (n = {self.n})"
        return body if self.n < 2 or not math.isfinite(self.low) else f"{body}, n = {self.n}"


def _g(x: float, digits: int) -> str:
    return f"{x:.{digits}g}"


def mean_interval(values: Iterable[float], level: float = LEVEL,
                  bounds: tuple[float, float] | None = None) -> Interval:
    """Mean and Student-t interval of the finite values (non-finite ones, e.g. a diverged run, are not
    averaged away silently: they make the mean NaN). ``bounds``: the quantity's range (``ACCURACY``), to
    which the interval is clipped."""
    x = np.asarray(list(values), dtype=float)
    n = x.size
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0, math.nan)
    mean = float(np.mean(x))
    if n < 2 or not np.all(np.isfinite(x)):
        return Interval(mean, math.nan, math.nan, n, math.nan)
    sd = float(np.std(x, ddof=1))
    half = float(_st.t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
    low, high = mean - half, mean + half
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return Interval(mean, low, high, n, sd)


def paired_difference(a: Sequence[float], b: Sequence[float], level: float = LEVEL) -> Interval:
    """Interval of the mean of a_i − b_i, the runs paired by position (the same seed)."""
    if len(a) != len(b):
        raise ValueError(f"paired difference of {len(a)} and {len(b)} runs: the seeds must match")
    return mean_interval(np.asarray(a, dtype=float) - np.asarray(b, dtype=float), level)


def paired_by_seed(a, b, column: str, level: float = LEVEL) -> Interval:
    """Interval of the mean of a − b over the seeds both run groups (DataFrames with a ``seed`` column) ran."""
    seeds = sorted(set(a["seed"]) & set(b["seed"]))
    return paired_difference(a.set_index("seed").loc[seeds, column].to_numpy(float),
                             b.set_index("seed").loc[seeds, column].to_numpy(float), level)


def verdict_below(interval: Interval, threshold: float = 0.0) -> str:
    """Verdict on the claim "the mean is below ``threshold``" from its interval."""
    if interval.n < 2 or not math.isfinite(interval.low):
        return INCONCLUSIVE
    if interval.high < threshold:
        return HOLDS
    if interval.low > threshold:
        return FAILS
    return INCONCLUSIVE


def verdict_above(interval: Interval, threshold: float = 0.0) -> str:
    """Verdict on the claim "the mean is above ``threshold``" from its interval."""
    flipped = Interval(-interval.mean, -interval.high, -interval.low, interval.n, interval.sd)
    return verdict_below(flipped, -threshold)


def family_false_alarm(verdicts: int, level: float = LEVEL) -> float:
    """Probability that at least one of ``verdicts`` independent true-null comparisons, each at the
    given level, comes out decided by chance: 1 − level^k (what a table of k verdicts risks)."""
    return 1.0 - level ** verdicts if verdicts > 0 else 0.0


def holm(pvalues: Sequence[float], alpha: float = 1 - LEVEL) -> list[bool]:
    """Holm's step-down procedure: which hypotheses are rejected at family-wise error rate ``alpha``."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    rejected = [False] * len(pvalues)
    m = len(pvalues)
    for rank, i in enumerate(order):
        if pvalues[i] <= alpha / (m - rank):
            rejected[i] = True
        else:
            break
    return rejected


def loglog_slope(x: Sequence[float], y: Sequence[float], decades: float = 1.0) -> tuple[float, int, float, float]:
    """Least-squares slope of log10 y on log10 x over the last ``decades`` of x (points with x, y > 0):
    (slope, points, x_from, x_to); NaN slope with fewer than 3 points."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    x, y = x[ok], y[ok]
    if x.size == 0:
        return math.nan, 0, math.nan, math.nan
    window = x >= x.max() / 10 ** decades
    xs, ys = np.log10(x[window]), np.log10(y[window])
    if xs.size < 3 or np.ptp(xs) == 0:
        return math.nan, int(xs.size), math.nan, math.nan
    slope = float(np.polyfit(xs, ys, 1)[0])
    return slope, int(xs.size), float(x[window].min()), float(x[window].max())


def last_quarter_median(y: Sequence[float]) -> float:
    """Median of the last quarter of a curve: where it levels off (its floor)."""
    y = np.asarray(y, dtype=float)
    if y.size == 0:
        return math.nan
    return float(np.median(y[-max(1, y.size // 4):]))
