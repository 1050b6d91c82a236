"""Adaptive clipping (dp.clip_mode = "adaptive", docs/theory.md §2): the clip trajectory, the keys, and the
privacy of the two releases of a round checked against an oracle that shares no code with the simulator —
the two-dimensional subsampled Gaussian mechanism integrated directly with scipy."""

import math

import numpy as np
import pytest
from scipy import integrate, optimize, stats

import asyncdp

from conftest import shared_file


def _config(**extra):
    cfg = {"seed": 3, "data": {"train": str(shared_file("datasets/libsvm/a9a.gz")),
                               "test": str(shared_file("datasets/libsvm/a9a.t.gz")), "rows_per_client": 1000},
           "model": {"kind": "logistic"}, "clients": {"count": 2}, "protocol": {"runtime": "virtual"},
           "schedule": {"sample_size": 100, "rounds": 30}, "eval": {"points": 10}}
    for key, value in extra.items():
        section, name = key.split("__")
        cfg.setdefault(section, {})[name] = value
    return cfg


def delta_of_mixture(eps, q, v, lim=9.0, points=2401):
    """delta(eps) of the Poisson-subsampled two-dimensional Gaussian mechanism with unit noise and
    sensitivity vector v: P = (1-q) N(0, I) + q N(v, I) against Q = N(0, I), both directions (remove: P vs
    Q, add: Q vs P), integrated directly over the plane (trapezoid rule on a fine grid)."""
    x = np.linspace(-lim, lim + v[0], points)
    y = np.linspace(-lim, lim + v[1], points)
    gx, gy = np.meshgrid(x, y, indexing="ij")
    q0 = stats.norm.pdf(gx) * stats.norm.pdf(gy)
    p = (1 - q) * q0 + q * stats.norm.pdf(gx - v[0]) * stats.norm.pdf(gy - v[1])
    remove = integrate.trapezoid(integrate.trapezoid(np.maximum(0.0, p - math.exp(eps) * q0), y, axis=1), x)
    add = integrate.trapezoid(integrate.trapezoid(np.maximum(0.0, q0 - math.exp(eps) * p), y, axis=1), x)
    return max(remove, add)


def gaussian_delta(eps, mu):
    return stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)


def test_one_subsampled_round_matches_the_direct_integral_of_both_releases():
    # One round (T = 1) at q = 0.1: gradient multiplier 1.0 and count noise 2.0. The simulator accounts the
    # round as one Gaussian of (1 + 1/4)^(-1/2); the oracle integrates the joint two-dimensional mechanism.
    sigma, count_sigma, delta = 1.0, 2.0, 1e-3
    run = asyncdp.train(_config(dp__sigma=sigma, dp__clip_mode="adaptive", dp__clip_count_sigma=count_sigma,
                                dp__delta=delta, schedule__rounds=1, eval__points=0))
    privacy = run.summary["privacy"]
    assert privacy["adaptive_clipping"]["accounted_noise_multiplier"] == pytest.approx(
        (sigma ** -2 + count_sigma ** -2) ** -0.5, rel=1e-12)
    eps_pld = run.summary["epsilon"]["pld"]
    v = (1 / sigma, 1 / count_sigma)
    assert delta_of_mixture(eps_pld, 0.1, v) <= delta * (1 + 1e-3)  # the reported epsilon is an upper bound
    assert delta_of_mixture(eps_pld * 0.97, 0.1, v) > delta        # and a tight one (within 3%)
    # Without the count (fixed clipping) the same round is strictly less private: the count costs something.
    fixed = asyncdp.train(_config(dp__sigma=sigma, dp__delta=delta, schedule__rounds=1, eval__points=0))
    assert fixed.summary["epsilon"]["pld"] < eps_pld


def test_full_batch_rounds_compose_as_one_gaussian_of_the_combined_multiplier():
    # Poisson at q = 1 (s = N_c, add/remove neighbours): T rounds of the joint mechanism are exactly a
    # Gaussian with mu = sqrt(T (sigma^-2 + sigma_b^-2)) (Dong, Roth & Su, Corollary 2.13), whose delta(eps)
    # has a closed form.
    sigma, count_sigma, rounds, delta = 3.0, 4.0, 20, 1e-5
    run = asyncdp.train(_config(dp__sigma=sigma, dp__clip_mode="adaptive", dp__clip_count_sigma=count_sigma,
                                dp__delta=delta, schedule__sample_size=1000, schedule__rounds=rounds,
                                eval__points=0))
    assert run.summary["privacy"]["sampling"] == "poisson"
    mu = math.sqrt(rounds * (sigma ** -2 + count_sigma ** -2))
    oracle = optimize.brentq(lambda e: gaussian_delta(e, mu) - delta, 1e-6, 100, xtol=1e-10)
    eps = run.summary["epsilon"]["pld"]
    assert oracle * (1 - 1e-3) <= eps <= oracle * 1.01


def test_calibration_spends_the_budget_with_the_count_included():
    run = asyncdp.train(_config(dp__sigma=0.0, dp__epsilon=2.0, dp__clip_mode="adaptive", dp__clip_count_sigma=5.0))
    eps = run.summary["epsilon"]["pld"]
    assert 2.0 * 0.99 <= eps <= 2.0 * (1 + 1e-6)
    sigma = run.summary["sigma"]
    combined = (sigma ** -2 + 5.0 ** -2) ** -0.5
    assert run.summary["privacy"]["adaptive_clipping"]["accounted_noise_multiplier"] == pytest.approx(combined)
    with pytest.raises(asyncdp.ConfigError, match="dp.clip_count_sigma"):
        asyncdp.train(_config(dp__sigma=0.0, dp__epsilon=50.0, dp__clip_mode="adaptive", dp__clip_count_sigma=0.05))


def test_the_clip_follows_the_quantile_and_is_published():
    runs = {}
    for quantile in (0.1, 0.9):
        runs[quantile] = asyncdp.train(_config(dp__enabled=False, dp__clip=1.0, dp__clip_mode="adaptive",
                                               dp__clip_quantile=quantile, dp__clip_lr=0.3,
                                               output__diagnostics=True, schedule__rounds=60))
    low, high = (runs[q].metrics["clip"] for q in (0.1, 0.9))
    assert np.all(np.isfinite(low)) and np.all(low > 0) and np.all(high > 0)
    # Leaving 90% of the examples unclipped takes a larger clip norm than leaving 10%: the trajectories part
    # from the same start (dp.clip = 1) and stay apart.
    assert high[-1] > 5 * low[-1]
    assert np.all(high[1:] > low[1:])
    # ... and the realised fraction of clipped examples (a non-private diagnostic) follows the target.
    clipped = {q: float(np.mean(runs[q].clients["diag_clipped_fraction"])) for q in runs}
    assert clipped[0.9] < 0.5 < clipped[0.1]
    fixed = asyncdp.train(_config(dp__enabled=False, dp__clip=1.0, output__diagnostics=True))
    assert "clip" not in fixed.metrics  # only adaptive runs publish a trajectory


def test_adaptive_keys_are_validated():
    with pytest.raises(asyncdp.ConfigError, match="dp.clip_count_sigma"):
        asyncdp.train(_config(dp__sigma=1.0, dp__clip_mode="adaptive"))
    with pytest.raises(asyncdp.ConfigError, match="dp.clip_quantile"):
        asyncdp.train(_config(dp__sigma=1.0, dp__clip_quantile=0.3))  # read only with clip_mode = adaptive
    with pytest.raises(asyncdp.ConfigError, match="dp.secure_noise"):
        asyncdp.train(_config(dp__sigma=1.0, dp__clip_mode="adaptive", dp__clip_count_sigma=3.0,
                              dp__secure_noise=True, dp__accountant="rdp"))
    with pytest.raises(asyncdp.ConfigError, match="dp.clip_mode"):
        asyncdp.train(_config(dp__sigma=1.0, dp__clip_mode="sometimes"))
