"""User-level DP (dp.unit = "client", docs/theory.md §4): a client's whole round update is clipped to
dp.client_clip and noised at that scale; its user-level epsilon composes every round without sampling
amplification, and the record-level epsilon of the same run is reported beside it. Oracles: the closed form
of composed Gaussian mechanisms (Dong, Roth & Su 2022, Corollary 2.13), which shares no code with the
accountants."""

import math

import numpy as np
import pytest
from scipy import optimize, stats

import asyncdp

from conftest import shared_file


def _config(**extra):
    cfg = {"seed": 5, "data": {"train": str(shared_file("datasets/libsvm/a9a.gz")),
                               "test": str(shared_file("datasets/libsvm/a9a.t.gz")), "rows_per_client": 1000},
           "model": {"kind": "logistic"}, "clients": {"count": 2}, "protocol": {"runtime": "virtual"},
           "schedule": {"sample_size": 50, "rounds": 40}, "eval": {"points": 2},
           "dp": {"unit": "client", "client_clip": 1.0, "clip": 0.1}}
    for key, value in extra.items():
        section, name = key.split("__")
        if value is None:
            cfg.setdefault(section, {}).pop(name, None)
        else:
            cfg.setdefault(section, {})[name] = value
    return cfg


def gaussian_epsilon(mu, delta):
    """epsilon of a mu-GDP mechanism at delta: delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)."""
    return optimize.brentq(lambda e: stats.norm.cdf(-e / mu + mu / 2) - math.exp(e) * stats.norm.cdf(-e / mu - mu / 2)
                           - delta, 1e-9, 200, xtol=1e-12)


def test_user_level_epsilon_composes_every_round_as_one_gaussian():
    sigma, rounds, delta = 4.0, 40, 1e-5
    run = asyncdp.train(_config(dp__sigma=sigma, dp__delta=delta))
    privacy = run.summary["privacy"]
    assert privacy["unit"] == "client" and "user-level" in privacy["scope"]
    # Every round of the client is released (no amplification by the record sampler): mu = sqrt(T) / sigma.
    oracle = gaussian_epsilon(math.sqrt(rounds) / sigma, delta)
    eps = run.summary["epsilon"]["pld"]
    assert oracle * (1 - 1e-3) <= eps <= oracle * 1.01
    assert run.summary["epsilon"]["rdp"] >= eps  # RDP is looser, never tighter
    # The record-level guarantee of the same run sits beside it, and is far smaller: a record moves the
    # update by at most C = 0.1 under noise sigma C_u, and the record sampler amplifies (q = 50/1000).
    record = privacy["epsilon_record_level"]
    assert record["pld"] < eps / 10


def test_record_level_epsilon_beside_it_is_that_of_noise_sigma_cu_over_c():
    # Full batches (Poisson q = 1): the record-level view is exactly Gaussian too, mu = sqrt(T) C / (sigma C_u).
    sigma, rounds, delta, clip, client_clip = 2.0, 40, 1e-5, 0.1, 0.5
    run = asyncdp.train(_config(dp__sigma=sigma, dp__delta=delta, dp__clip=clip, dp__client_clip=client_clip,
                                schedule__sample_size=1000))
    oracle = gaussian_epsilon(math.sqrt(rounds) * clip / (sigma * client_clip), delta)
    eps = run.summary["privacy"]["epsilon_record_level"]["pld"]
    assert oracle * (1 - 1e-3) <= eps <= oracle * 1.01


def test_the_round_update_is_clipped_as_a_whole():
    # Without noise, a client clipped to a tiny C_u barely moves the model: every round moves it by at most
    # eta * C_u; the record-level run with the same C moves it much further.
    tiny = asyncdp.train(_config(dp__enabled=False, dp__client_clip=1e-4))
    record = asyncdp.train(_config(dp__enabled=False, dp__unit="record", dp__client_clip=None))
    assert np.linalg.norm(tiny.final_model) < 0.5
    assert np.linalg.norm(record.final_model) > 4 * np.linalg.norm(tiny.final_model)


def test_calibration_spends_the_user_level_budget():
    run = asyncdp.train(_config(dp__sigma=0.0, dp__epsilon=4.0))
    assert 4.0 * 0.99 <= run.summary["epsilon"]["pld"] <= 4.0 * (1 + 1e-6)


def test_user_level_keys_are_validated():
    with pytest.raises(asyncdp.ConfigError, match="dp.client_clip"):
        asyncdp.train(_config(dp__sigma=1.0, dp__client_clip=0.0))
    with pytest.raises(asyncdp.ConfigError, match="dp.client_clip"):
        asyncdp.train(_config(dp__sigma=1.0, dp__unit="record"))  # read only with unit = client
    with pytest.raises(asyncdp.ConfigError, match="dp.clip_mode"):
        asyncdp.train(_config(dp__sigma=1.0, dp__clip_mode="adaptive", dp__clip_count_sigma=2.0))
    with pytest.raises(asyncdp.ConfigError, match="dp.unit"):
        asyncdp.train(_config(dp__sigma=1.0, dp__unit="household"))


def test_the_example_configuration_runs_and_reports_both_guarantees():
    from conftest import SOURCE_DIR

    run = asyncdp.train(SOURCE_DIR / "experiments" / "user_level_a9a.toml", schedule__rounds=20, eval__points=1)
    privacy = run.summary["privacy"]
    assert privacy["unit"] == "client"
    assert run.summary["epsilon"]["pld"] == pytest.approx(4.0, rel=1e-2)
    assert 0 < privacy["epsilon_record_level"]["pld"] < run.summary["epsilon"]["pld"]
