"""The results of ``asyncdp account`` and ``asyncdp calc`` as dataclasses (the functions that make them are in
accounting.py, which re-exports these names).

Each result has the fields of the CLI's JSON object (``to_dict()`` returns that object exactly).
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from ._results import compact_repr, from_json

@dataclasses.dataclass(frozen=True, repr=False)
class AccountantResult:
    """One accountant's section of the CLI's JSON (``rdp``, ``pld`` or ``gdp``).

    ``epsilon`` is None when no finite epsilon holds; ``bound`` says what it is ("upper_bound", or
    "approximation" for GDP), ``method`` which analysis and assumptions it rests on. With ``unavailable``
    set the accountant cannot account this mechanism (and says why). A calibration fills ``sigma``.
    """

    epsilon: Optional[float] = None
    bound: Optional[str] = None
    method: Optional[str] = None
    order: Optional[float] = None            # rdp: the Renyi order attaining the minimum
    epsilon_lower: Optional[float] = None    # pld: lower bound on the true epsilon of the mechanism
    discretization: Optional[float] = None   # pld: loss grid spacing (nats)
    mu: Optional[float] = None               # gdp: composed mu (CLT approximation)
    sigma: Optional[float] = None            # calibrate_sigma: smallest sigma meeting the target
    delta: Optional[float] = None            # delta(): the smallest delta at the given epsilon
    unavailable: Optional[str] = None
    extra: dict = dataclasses.field(default_factory=dict)
    json: dict = dataclasses.field(default_factory=dict, repr=False, compare=False)

    __repr__ = compact_repr

    def to_dict(self):
        return self.json


@dataclasses.dataclass(frozen=True, repr=False)
class AccountResult:
    """The CLI's ``asyncdp account`` JSON object.

    Inputs (``q``, ``sigma`` or, when calibrating, the target ``epsilon``; or ``schedule``), ``steps``,
    ``delta``; the assumptions every epsilon rests on (``sampling``, ``neighbors``, ``public``); one
    AccountantResult per requested accountant. Example: ``result.pld.epsilon``, ``result.rdp.order``.
    """

    q: Optional[float] = None
    sigma: Optional[float] = None
    epsilon: Optional[float] = None
    schedule: Optional[list] = None
    steps: Optional[int] = None
    delta: Optional[float] = None
    at_epsilon: Optional[float] = None       # delta(): the epsilon at which each accountant gives delta
    sampling: Optional[str] = None
    neighbors: Optional[str] = None
    public: Optional[str] = None
    rdp: Optional[AccountantResult] = None
    pld: Optional[AccountantResult] = None
    gdp: Optional[AccountantResult] = None
    # sampling="random_allocation": the window (steps = m) and the allocation bounds; ``random_allocation``
    # holds the reported epsilon (or the calibrated sigma), its ``extra`` the binding bound and every bound;
    # ``poisson`` / ``shuffle`` the CLI's comparison sections as dicts.
    k: Optional[int] = None
    windows: Optional[int] = None
    p0: Optional[float] = None
    random_allocation: Optional[AccountantResult] = None
    poisson: Optional[dict] = None
    shuffle: Optional[dict] = None
    extra: dict = dataclasses.field(default_factory=dict)
    json: dict = dataclasses.field(default_factory=dict, repr=False, compare=False)

    __repr__ = compact_repr

    def to_dict(self):
        """The JSON object exactly as ``asyncdp account`` prints it."""
        return self.json

    def accountants(self):
        """{name: AccountantResult} for the accountants present, in report order."""
        names = ("rdp", "pld", "gdp", "random_allocation")
        return {name: getattr(self, name) for name in names if getattr(self, name) is not None}


@dataclasses.dataclass(frozen=True, repr=False)
class CalcResult:
    """The CLI's ``asyncdp calc`` JSON object: Appendix D.4 (no ``phases``) or E.1 (``phases`` given).

    D.4 fills epsilon ... neighbors; E.1 fills N, delta, epsilon_target, mode, can_participate, phases.
    """

    epsilon: Optional[float] = None
    sigma: Optional[float] = None
    gamma: Optional[float] = None
    T_min: Optional[float] = None
    s_max: Optional[int] = None
    T_min_asym: Optional[float] = None
    s_max_asym: Optional[int] = None
    conditions: Optional[dict] = None
    theorem_3_1: Optional[bool] = None
    theorem_b4: Optional[bool] = None
    delta: Optional[float] = None
    N: Optional[float] = None
    K: Optional[float] = None
    epochs: Optional[float] = None
    theta: Optional[float] = None
    mode: Optional[str] = None
    s_max_real: Optional[float] = None
    s_max_asym_real: Optional[float] = None
    eps_fdp: Optional[dict] = None
    factor: Optional[dict] = None
    sampling: Optional[str] = None
    neighbors: Optional[str] = None
    epsilon_target: Optional[float] = None
    can_participate: Optional[bool] = None
    phases: Optional[list] = None
    extra: dict = dataclasses.field(default_factory=dict)
    json: dict = dataclasses.field(default_factory=dict, repr=False, compare=False)

    __repr__ = compact_repr

    def to_dict(self):
        """The JSON object exactly as ``asyncdp calc`` prints it."""
        return self.json


def _account_result(obj):
    section = lambda value: from_json(AccountantResult, value)  # noqa: E731
    return from_json(AccountResult, obj,
                     {"rdp": section, "pld": section, "gdp": section, "random_allocation": section})
