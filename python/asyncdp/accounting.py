"""Privacy accounting: ``asyncdp account`` and ``asyncdp calc`` as functions returning dataclasses.

Each result has the fields of the CLI's JSON object (``to_dict()`` returns that object exactly) and the
same numbers to the last bit: both run apps/account_request.h / apps/calc_request.h in C++. The result
dataclasses are in accounting_results.py and re-exported here.
"""

from __future__ import annotations

import dataclasses
import operator
import os
from typing import Any, Optional, Sequence, Union

from . import _asyncdp
from .accounting_results import AccountantResult, AccountResult, CalcResult, _account_result
from ._results import from_json
from .errors import ConfigError, InfeasibleTarget

__all__ = ["AccountantResult", "AccountResult", "CalcResult", "PrivacyCurve", "account", "calc",
           "calibrate_sigma", "delta", "epsilon", "privacy_curve"]

PathLike = Union[str, "os.PathLike[str]"]

_MAX_ROUNDS = 2**53


def _real(name, value):
    if value is None:
        return None
    if isinstance(value, (bool, str, bytes)):
        raise TypeError(f"{name}: expected a number, got {type(value).__name__}")
    return float(value)  # int, float, numpy scalars; the C++ side checks the range once


def _rounds(name, value):
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError(f"{name}: expected a whole number of rounds, got bool")
    try:
        rounds = operator.index(value)  # int, numpy integers; a float such as 1e4 is refused, as by the CLI
    except TypeError:
        raise TypeError(f"{name}: expected a whole number of rounds, got {value!r}") from None
    if not 0 <= rounds <= _MAX_ROUNDS:
        message = f"expected a whole number of rounds in [0, 2^53 = {_MAX_ROUNDS}], got {rounds}"
        raise ConfigError(f"{name}: {message}", name, message)
    return rounds


def _group(name, value, sizes, shape):
    """``value`` as a tuple of one of ``sizes`` entries; anything else (a scalar, a string, a longer tuple
    whose extra entries would be dropped) is a ConfigError at ``name`` naming the ``shape`` expected."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) not in sizes:
        message = f"expected {shape}, got {value!r}"
        raise ConfigError(f"{name}: {message}", name, message)
    return tuple(value)


def _schedule_groups(schedule):
    groups = []
    for i, group in enumerate(schedule):
        group = _group(f"schedule[{i}]", group, (2, 3), "(q, sigma) or (q, sigma, count)")
        count = _rounds(f"schedule[{i}] count", group[2]) if len(group) == 3 else 1
        groups.append((_real(f"schedule[{i}] q", group[0]), _real(f"schedule[{i}] sigma", group[1]), count))
    return groups


def _whole(name, value):
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError(f"{name}: expected a whole number, got bool")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name}: expected a whole number, got {value!r}") from None


def _refuse_allocation_keywords(**given):
    """Refuses random allocation's keywords under another sampler, naming the first one given."""
    named = [name for name, value in given.items() if value is not None]
    if named:
        message = "m, k, windows and p0 apply to sampling random_allocation only"
        raise ConfigError(f"{named[0]}: {message}", named[0], message)


def _account(q, sigma, epsilon, steps, delta, schedule, accountant, sampling, m=None, k=None, windows=None,
             p0=None, at_epsilon=None):
    if delta is None and at_epsilon is None:
        raise TypeError("delta: required (the target delta in (0, 1))")
    allocation = sampling == "random_allocation"
    if accountant is None:
        accountant = "random_allocation" if allocation else "pld"
    if not allocation:
        _refuse_allocation_keywords(m=m, k=k, windows=windows, p0=p0)
    if allocation:
        if steps is not None:
            message = "give the window length as m (steps per window), not steps"
            raise ConfigError(f"steps: {message}", "steps", message)
        steps = m
    groups = path = None
    if isinstance(schedule, (str, os.PathLike)):
        path = os.fspath(schedule)
    elif schedule is not None:
        groups = _schedule_groups(schedule)
    try:
        obj = _asyncdp.account_json(
            _real("q", q), _real("sigma", sigma), _real("epsilon", epsilon),
            _rounds("m" if allocation else "steps", steps), groups, path,
            0.0 if delta is None else _real("delta", delta), accountant, sampling,
            _whole("k", k), _whole("windows", windows), _real("p0", p0), _real("epsilon", at_epsilon))
    except ConfigError as e:
        # delta()'s epsilon reaches the binding as the CLI's --at-epsilon: name the keyword the caller gave.
        if e.where != "at-epsilon":
            raise
        raise ConfigError(f"epsilon: {e.message}", "epsilon", e.message) from None
    return _account_result(obj)


# --- vectorised calls -------------------------------------------------------------------------------------

def _is_vector(value):
    """A list, tuple, range or numpy array of values (not a string, not a schedule)."""
    if isinstance(value, (str, bytes, os.PathLike)) or value is None:
        return False
    if hasattr(value, "ndim"):
        return value.ndim > 0
    return isinstance(value, (list, tuple, range))


def _broadcast(named):
    """{name: scalar or sequence} -> list of {name: scalar}: sequences zip (numpy broadcasting: equal lengths
    or length 1), scalars repeat."""
    import numpy as np

    vectors = {name: list(np.asarray(value).ravel()) if hasattr(value, "ndim") else list(value)
               for name, value in named.items() if _is_vector(value)}
    if not vectors:
        return None
    lengths = {len(v) for v in vectors.values()} - {1}
    if len(lengths) > 1:
        shown = ", ".join(f"{name}: {len(v)}" for name, v in vectors.items())
        message = f"lists must have equal lengths (or length 1), got {shown}"
        name = next(iter(vectors))
        raise ConfigError(f"{name}: {message}", name, message)
    n = lengths.pop() if lengths else 1
    if n == 0:
        name = next(iter(vectors))
        raise ConfigError(f"{name}: expected at least one value", name, "expected at least one value")
    rows = []
    for i in range(n):
        row = {}
        for name, value in named.items():
            if name in vectors:
                v = vectors[name]
                item = v[i] if len(v) > 1 else v[0]
                row[name] = item.item() if hasattr(item, "item") else item
            else:
                row[name] = value
        rows.append(row)
    return rows


_SECTION_FIELDS = ("epsilon", "epsilon_lower", "delta", "sigma", "order", "mu", "discretization", "bound",
                   "unavailable")


def _flat_row(result: AccountResult):
    """One AccountResult as a flat dict: the inputs, the assumptions and <accountant>_<field>."""
    row = {}
    for name in ("q", "sigma", "epsilon", "steps", "delta", "at_epsilon", "k", "windows", "p0", "sampling",
                 "neighbors"):
        value = getattr(result, name)
        if value is not None:
            row[name] = value
    for name, section in result.accountants().items():
        for field in _SECTION_FIELDS:
            value = getattr(section, field)
            if value is not None:
                row[f"{name}_{field}"] = value
    return row


def _table(results, as_frame):
    if not as_frame:
        return results
    import pandas as pd

    return pd.DataFrame([_flat_row(r) for r in results])


def account(q: Union[float, Sequence[float], None] = None, sigma: Union[float, Sequence[float], None] = None,
            steps: Union[int, Sequence[int], None] = None, delta: Union[float, Sequence[float], None] = None, *,
            schedule: Union[PathLike, Sequence[tuple], None] = None, accountant: Optional[str] = None,
            sampling: str = "poisson", m: Optional[int] = None, k: Optional[int] = None,
            windows: Optional[int] = None, p0: Optional[float] = None, as_frame: bool = True) -> Any:
    """Epsilon of DP-SGD rounds at ``delta``, as ``asyncdp account`` computes it.

    Either ``q`` (sampling rate), ``sigma`` (noise multiplier) and ``steps`` (rounds), or ``schedule``:
    heterogeneous rounds as a list of ``(q, sigma, count)`` (count defaults to 1) or the path of a CSV
    file in the CLI's ``--schedule`` format. ``accountant``: "pld" (the default; tightest upper bound, with
    a lower bound), "rdp", "gdp" (CLT approximation, not a guarantee) or "all". ``sampling``: "poisson"
    (add/remove neighbours), "fixed" or "shuffle" (replace-one).

    >>> r = account(q=0.01, sigma=1.0, steps=10000, delta=1e-5)
    >>> round(r.pld.epsilon, 2), r.pld.bound, r.neighbors
    (6.19, 'upper_bound', 'add_remove')

    Lists (or numpy arrays) of ``q``, ``sigma``, ``steps`` or ``delta`` account every combination, zipped
    as numpy broadcasts them (equal lengths, or length 1), into a pandas DataFrame with one row per
    combination and a column ``<accountant>_<field>`` per result field (``as_frame=False``: a list of
    AccountResult):

    >>> table = account(q=0.01, sigma=[0.8, 1.0, 2.0], steps=1000, delta=1e-5)
    >>> list(table.columns[:4]), table["pld_epsilon"].is_monotonic_decreasing
    (['q', 'sigma', 'steps', 'delta'], True)

    ``sampling="random_allocation"`` (random check-ins / balls in bins, add/remove): ``m`` rounds per window,
    ``k`` rounds per record per window (default 1), ``windows`` (E, default 1), ``p0`` (check-in
    probability, default 1) and ``sigma``, as ``asyncdp account --sampling random_allocation --steps m``;
    read ``result.random_allocation.epsilon`` (every bound is in its ``extra["bounds"]``).
    """
    rows = _broadcast({"q": q, "sigma": sigma, "steps": steps, "delta": delta})
    if rows is None:
        return _account(q, sigma, None, steps, delta, schedule, accountant, sampling, m, k, windows, p0)
    return _table([_account(r["q"], r["sigma"], None, r["steps"], r["delta"], schedule, accountant, sampling, m,
                            k, windows, p0) for r in rows], as_frame)


def _section_value(result: AccountResult, accountant: str, field: str):
    section = getattr(result, accountant)
    if section is None or section.unavailable is not None:
        why = section.unavailable if section is not None else "not computed"
        raise ConfigError(f"accountant {accountant}: {why}", f"accountant {accountant}", why)
    value = getattr(section, field)
    return float("inf") if value is None else float(value)


def epsilon(q: Union[float, Sequence[float], None] = None, sigma: Union[float, Sequence[float], None] = None,
            steps: Union[int, Sequence[int], None] = None, *, delta: Union[float, Sequence[float]],
            schedule: Union[PathLike, Sequence[tuple], None] = None, accountant: Optional[str] = None,
            sampling: str = "poisson", m: Optional[int] = None, k: Optional[int] = None,
            windows: Optional[int] = None, p0: Optional[float] = None) -> Any:
    """The smallest epsilon at ``delta`` by one accountant (default: the PLD upper bound), as a float
    (``inf`` when no finite epsilon holds); lists give a numpy array (broadcast as in ``account``).

    >>> round(epsilon(q=0.01, sigma=1.0, steps=1000, delta=1e-5), 3)
    1.829

    ``sampling="random_allocation"``: the window as in ``account`` (``m``, ``k``, ``windows``, ``p0``).
    """
    return _curve_point("epsilon", {"q": q, "sigma": sigma, "steps": steps, "delta": delta}, schedule, accountant,
                        sampling, (m, k, windows, p0))


def delta(q: Union[float, Sequence[float], None] = None, sigma: Union[float, Sequence[float], None] = None,
          steps: Union[int, Sequence[int], None] = None, *, epsilon: Union[float, Sequence[float]],
          schedule: Union[PathLike, Sequence[tuple], None] = None, accountant: Optional[str] = None,
          sampling: str = "poisson", m: Optional[int] = None, k: Optional[int] = None,
          windows: Optional[int] = None, p0: Optional[float] = None) -> Any:
    """The smallest delta at ``epsilon`` by one accountant (default: the PLD upper bound): a point of the
    privacy curve delta(epsilon), as ``asyncdp account --at-epsilon``; lists give a numpy array.

    >>> d = delta(q=0.01, sigma=1.0, steps=1000, epsilon=1.829)
    >>> 0.9e-5 < d < 1.1e-5
    True
    >>> list(delta(q=0.01, sigma=1.0, steps=1000, epsilon=[0.5, 1.0, 2.0]) > 1e-5)
    [True, True, False]

    ``sampling="random_allocation"``: the window as in ``account`` (``m``, ``k``, ``windows``, ``p0``); per
    direction the best of its bounds, the worse direction, as ``account --at-epsilon``:

    >>> e = epsilon(sigma=1.0, delta=1e-6, sampling="random_allocation", m=100, windows=10)
    >>> d = delta(sigma=1.0, epsilon=e, sampling="random_allocation", m=100, windows=10)
    >>> abs(d / 1e-6 - 1) < 1e-6
    True
    """
    if epsilon is None:
        raise TypeError("epsilon: required (the epsilon >= 0 at which to give delta)")
    return _curve_point("delta", {"q": q, "sigma": sigma, "steps": steps, "epsilon": epsilon}, schedule, accountant,
                        sampling, (m, k, windows, p0))


def _curve_point(field, named, schedule, accountant, sampling, window):
    """One accountant's epsilon at delta (field "epsilon") or delta at epsilon (field "delta"): a float, or
    a numpy array when any of ``named`` is a list (broadcast as in ``account``). ``window``: (m, k, windows,
    p0) of sampling random_allocation."""
    accountant = _single_accountant(accountant, sampling)

    def one(r):
        at_epsilon = r["epsilon"] if field == "delta" else None
        result = _account(r["q"], r["sigma"], None, r["steps"], r.get("delta"), schedule, accountant, sampling,
                          *window, at_epsilon=at_epsilon)
        return _section_value(result, accountant, field)

    rows = _broadcast(named)
    if rows is None:
        return one(named)
    import numpy as np

    return np.array([one(r) for r in rows])


@dataclasses.dataclass(frozen=True)
class PrivacyCurve:
    """One accountant's whole privacy curve of a mechanism (``asyncdp account --curve``).

    ``epsilon_of_delta``: DataFrame (delta, epsilon); ``delta_of_epsilon``: DataFrame (epsilon, delta);
    ``tradeoff``: DataFrame (alpha, beta), beta(alpha) the smallest type-II error a test of "the record is in"
    can have at type-I error alpha — a lower bound from the privacy profile when ``bound`` is
    "upper_bound" (f-DP, Dong, Roth & Su 2022; docs/theory.md, "Privacy curves").
    """

    accountant: str
    bound: str
    epsilon_of_delta: Any
    delta_of_epsilon: Any
    tradeoff: Any
    tradeoff_profile_points: int


def privacy_curve(q: Optional[float] = None, sigma: Optional[float] = None, steps: Optional[int] = None, *,
                  schedule: Union[PathLike, Sequence[tuple], None] = None, accountant: Optional[str] = None,
                  sampling: str = "poisson", deltas: Optional[Sequence[float]] = None,
                  epsilons: Optional[Sequence[float]] = None,
                  alphas: Optional[Sequence[float]] = None, m: Optional[int] = None, k: Optional[int] = None,
                  windows: Optional[int] = None, p0: Optional[float] = None) -> PrivacyCurve:
    """epsilon(delta), delta(epsilon) and the trade-off curve beta(alpha) of DP-SGD rounds, by one accountant.

    Defaults: deltas 1e-1 ... 1e-10; epsilons 21 points from 0 to epsilon(min delta); alphas 0, 1e-6 ... 1e-3,
    0.01 ... 1.

    >>> c = privacy_curve(q=0.01, sigma=1.0, steps=1000, deltas=[1e-5])
    >>> round(float(c.epsilon_of_delta["epsilon"][0]), 3)
    1.829
    >>> bool(c.tradeoff["beta"].is_monotonic_decreasing)
    True

    ``sampling="random_allocation"``: the window as in ``account`` (``m``, ``k``, ``windows``, ``p0``); the
    curve of the reported bound (its trade-off from 100 profile points, each delta taking every bound: about a
    second, not milliseconds).
    """
    import pandas as pd

    accountant = _single_accountant(accountant, sampling)
    allocation = sampling == "random_allocation"
    if allocation:
        if steps is not None:
            message = "give the window length as m (steps per window), not steps"
            raise ConfigError(f"steps: {message}", "steps", message)
        steps = m
    else:
        _refuse_allocation_keywords(m=m, k=k, windows=windows, p0=p0)
    groups = path = None
    if isinstance(schedule, (str, os.PathLike)):
        path = os.fspath(schedule)
    elif schedule is not None:
        groups = _schedule_groups(schedule)
    lists = {}
    for name, values in (("deltas", deltas), ("epsilons", epsilons), ("alphas", alphas)):
        lists[name] = None if values is None else [_real(f"{name}[{i}]", v) for i, v in enumerate(values)]
    headline = min(lists["deltas"]) if lists["deltas"] else 1e-5
    obj = _asyncdp.account_json(
        _real("q", q), _real("sigma", sigma), None, _rounds("m" if allocation else "steps", steps), groups, path,
        headline, accountant, sampling, _whole("k", k), _whole("windows", windows), _real("p0", p0), None, True,
        lists["deltas"], lists["epsilons"], lists["alphas"])
    section = obj["curve"][accountant]
    if "unavailable" in section:
        raise ConfigError(f"accountant: {section['unavailable']}", "accountant", section["unavailable"])
    return PrivacyCurve(accountant=accountant, bound=section["bound"],
                        epsilon_of_delta=pd.DataFrame(section["epsilon_of_delta"], columns=["delta", "epsilon"]),
                        delta_of_epsilon=pd.DataFrame(section["delta_of_epsilon"], columns=["epsilon", "delta"]),
                        tradeoff=pd.DataFrame(section["tradeoff"], columns=["alpha", "beta"]),
                        tradeoff_profile_points=section["tradeoff_profile_points"])


def _single_accountant(accountant, sampling):
    """The one accountant a curve or curve point is read from: default pld, or random_allocation for
    ``sampling="random_allocation"`` (the only one that accounts it)."""
    allocation = sampling == "random_allocation"
    if accountant is None:
        return "random_allocation" if allocation else "pld"
    allowed = ("random_allocation",) if allocation else ("rdp", "pld", "gdp")
    if accountant not in allowed:
        message = f"expected one of {', '.join(allowed)}, got {accountant!r}"
        raise ConfigError(f"accountant: {message}", "accountant", message)
    return accountant


def calibrate_sigma(epsilon: Union[float, Sequence[float]], q: Union[float, Sequence[float], None] = None,
                    steps: Union[int, Sequence[int], None] = None,
                    delta: Union[float, Sequence[float], None] = None, *, accountant: Optional[str] = None,
                    sampling: str = "poisson", m: Optional[int] = None, k: Optional[int] = None,
                    windows: Optional[int] = None, p0: Optional[float] = None, as_frame: bool = True) -> Any:
    """The smallest noise multiplier (1e-4 relative) with epsilon <= ``epsilon`` after ``steps`` rounds at
    rate ``q``, as ``asyncdp account --epsilon`` finds it. Read it as ``result.pld.sigma``;
    ``result.pld.epsilon`` is its epsilon.

    >>> r = calibrate_sigma(epsilon=1.0, q=0.01, steps=1000, delta=1e-5)
    >>> round(r.pld.sigma, 3), r.pld.epsilon <= 1.0
    (1.415, True)

    Raises ``asyncdp.InfeasibleTarget`` (a ValueError) when no sigma up to 1e4 meets the target (before
    version 0.2 the result held ``sigma=None``); an accountant that cannot account the input at all is
    reported in its ``unavailable`` field under ``accountant="all"``:

    >>> calibrate_sigma(epsilon=1e-9, q=0.01, steps=1000, delta=1e-5)
    Traceback (most recent call last):
        ...
    asyncdp.errors.InfeasibleTarget: no sigma up to 1e4 gives epsilon <= 1e-09 at delta 1e-05 (accountant pld)

    With ``sampling="random_allocation"`` give ``m``, ``k``, ``windows``, ``p0`` instead of ``q`` and
    ``steps``; read ``result.random_allocation.sigma``. Lists of ``epsilon``, ``q``, ``steps`` or ``delta``
    give a DataFrame (``as_frame=False``: a list), as ``account`` does.
    """
    rows = _broadcast({"epsilon": epsilon, "q": q, "steps": steps, "delta": delta})
    if rows is None:
        return _feasible(_account(q, None, epsilon, steps, delta, None, accountant, sampling, m, k, windows, p0))
    return _table([_feasible(_account(r["q"], None, r["epsilon"], r["steps"], r["delta"], None, accountant,
                                      sampling, m, k, windows, p0)) for r in rows], as_frame)


def _feasible(result: AccountResult) -> AccountResult:
    for name, section in result.accountants().items():
        if section.unavailable is None and section.sigma is None:
            raise InfeasibleTarget(
                f"no sigma up to 1e4 gives epsilon <= {result.epsilon!r} at delta {result.delta!r} "
                f"(accountant {name})", result.epsilon, result.delta, name, result)
    return result


def calc(N: float, delta: float, *, K: Optional[float] = None, sigma: Optional[float] = None,
         epsilon: Optional[float] = None, theta: Optional[float] = None, mode: str = "paper",
         phases: Union[PathLike, Sequence[tuple], None] = None) -> CalcResult:
    """The Proactive-DP paper's calculators, as ``asyncdp calc`` runs them.

    Appendix D.4 (Theorem 3.1): ``calc(N, delta, K=..., sigma=... or epsilon=..., theta=1)`` gives gamma,
    T_min, s_max, the asymptotic values and each condition of Theorems 3.1 / B.4.
    Appendix E.1 (Theorem B.4): ``calc(N, delta, epsilon=budget, phases=[(K_0, None), (K_1, sigma_1), ...])``
    (sigma None in the first phase = derive it), or ``phases=`` the path of the CLI's ``--phases`` CSV.
    ``mode``: "paper" reproduces Tables 9-11, "exact" takes the smallest gamma solving the condition.

    >>> r = calc(N=10000, delta=1e-4, K=50000, sigma=19.29962)
    >>> r.theorem_3_1 is not None, r.s_max > 0
    (True, True)
    """
    phase_list = path = None
    if isinstance(phases, (str, os.PathLike)):
        path = os.fspath(phases)
    elif phases is not None:
        phase_list = []
        for j, phase in enumerate(phases):
            phase = _group(f"phases[{j}]", phase, (1, 2), "(K,) or (K, sigma) (sigma None: derive it)")
            k, phase_sigma = (phase[0], phase[1]) if len(phase) == 2 else (phase[0], None)
            phase_list.append((_real(f"phases[{j}] K", k), _real(f"phases[{j}] sigma", phase_sigma)))
    obj = _asyncdp.calc_json(_real("N", N), _real("K", K), _real("delta", delta), _real("sigma", sigma),
                             _real("epsilon", epsilon), _real("theta", theta), mode, phase_list, path)
    return from_json(CalcResult, obj)


__all__ = ["AccountResult", "AccountantResult", "CalcResult", "PrivacyCurve", "account", "calc", "calibrate_sigma",
           "delta", "epsilon", "privacy_curve"]
