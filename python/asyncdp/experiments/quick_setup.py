"""The run matrix of ``run_experiments.sh quick``: problems, step schedules, privacy settings and scales
(quick.py runs it, quick_report.py reads it)."""

from __future__ import annotations

import dataclasses
import math

EPSILONS = (0.5, 2.0, 8.0)
ALL_ROWS = 2147483647  # eval.train_rows: F(ŵ) over every training row


@dataclasses.dataclass(frozen=True)
class Problem:
    key: str
    config: str
    label: str
    model: str
    supervised: bool
    paper_schedule: str


PROBLEMS = {
    "strongly_convex": Problem("strongly_convex", "quick_strongly_convex.toml", "strongly convex (L2 logistic, λ = 1/N_c)",
                               "logistic_l2", True, "linear"),
    "plain_convex": Problem("plain_convex", "quick_plain_convex.toml", "plain convex (logistic)", "logistic", True,
                            "sqrt"),
    "geometric_median": Problem("geometric_median", "quick_geometric_median.toml", "geometric median ‖θ − x‖",
                                "geometric_median", False, "sqrt"),
}
SCHEDULES = {
    "linear": ({"schedule.step_rule": "inverse_linear", "schedule.beta": 0.001}, "η0/(1+βt), β = 0.001", -1.0),
    "sqrt": ({"schedule.step_rule": "inverse_sqrt", "schedule.beta": 0.01}, "η0/(1+β√t), β = 0.01", -0.5),
}
# (problem, schedule): strongly and plain convex under both schedules, so that convexity is compared at an
# equal schedule; the geometric median under the plain-convex one.
COMBOS = [("strongly_convex", "linear"), ("plain_convex", "linear"), ("strongly_convex", "sqrt"),
          ("plain_convex", "sqrt"), ("geometric_median", "sqrt")]


@dataclasses.dataclass(frozen=True)
class Setting:
    key: str
    label: str
    overrides: dict
    epsilon: float | None = None      # calibrate σ to this ε (PLD)
    private: bool = True


def eps_key(e: float) -> str:
    return f"eps{e:g}"


CONVEX_SETTINGS = [
    Setting("sgd", "SGD (non-DP, s = 1, unclipped)", {"dp.enabled": False, "dp.clip": 1e6, "schedule.sample_size": 1},
            private=False),
    Setting("nondp", "non-DP twin (same C and s, no noise)", {"dp.enabled": False}, private=False),
    Setting("table3", "DP, Table 3 σ = 19.3", {}),
    *[Setting(eps_key(e), f"DP, ε = {e:g}", {}, epsilon=e) for e in EPSILONS],
]
LENET_SETTINGS = [
    Setting("nondp", "non-DP twin (same C and s, no noise)", {"dp.enabled": False}, private=False),
    Setting("table4", "DP, Table 4 σ = 12.1", {}),
    *[Setting(eps_key(e), f"DP, ε = {e:g}", {}, epsilon=e) for e in EPSILONS],
]


@dataclasses.dataclass(frozen=True)
class Scale:
    name: str
    convex_seeds: int
    lenet_seeds: int
    convex: dict
    lenet: dict
    verdicts: bool


SCALES = {
    "tiny": Scale("tiny", 2, 2, {"schedule.iterations": 3000, "eval.points": 10},
                  {"data.rows_per_client": 300, "schedule.iterations": 600, "schedule.sample_size": 60,
                   "data.eval_rows": 200, "eval.points": 3, "eval.train_rows": 100}, False),
    "default": Scale("default", 5, 3, {"eval.points": 60}, {}, True),
}


def schedule_slope(schedule: str, x1: float, x2: float) -> float:
    """Log-log slope of η(t) between t = x1 and x2 (gradient computations per client): the rate the schedule
    predicts over exactly the fitted window (steeper or flatter than the asymptotic −1 / −1/2 while βt or
    β√t is still near 1)."""
    if not (x1 > 0 and x2 > x1):
        return math.nan
    beta = SCHEDULES[schedule][0]["schedule.beta"]
    eta = (lambda t: 1 / (1 + beta * t)) if schedule == "linear" else (lambda t: 1 / (1 + beta * math.sqrt(t)))
    return math.log(eta(x2) / eta(x1)) / math.log(x2 / x1)


@dataclasses.dataclass
class Check:
    claim: str
    measured: str
    threshold: str
    verdict: str
