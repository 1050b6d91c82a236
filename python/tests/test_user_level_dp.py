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


def _checkin_config(**extra):
    cfg = {"seed": 3, "data": {"train": str(shared_file("datasets/libsvm/a9a.gz")),
                               "test": str(shared_file("datasets/libsvm/a9a.t.gz")), "eval_rows": 2000},
           "model": {"kind": "logistic"}, "clients": {"count": 500},
           "protocol": {"participation": "check_in"},
           "checkin": {"variant": "fixed_window", "steps": 500, "windows": 2, "p0": 0.5, "batch_steps": 5},
           "schedule": {"step_rule": "constant", "eta0": 0.5}, "eval": {"points": 1},
           "dp": {"unit": "client", "client_clip": 1.0, "clip": 0.1, "sigma": 2.0, "delta": 1e-5},
           "output": {"diagnostics": True}}
    for key, value in extra.items():
        section, name = key.split("__")
        if value is None:
            cfg.setdefault(section, {}).pop(name, None)
        else:
            cfg.setdefault(section, {})[name] = value
    return cfg


def test_user_level_check_ins_are_accounted_as_random_allocation_with_one_record_per_client():
    # Each of the n = 500 clients holds ~65 rows; a checked-in client sends its whole data set's update,
    # clipped to C_u and noised at C_u. At the user level a client is the "record" of the random check-ins
    # of Balle et al.: the bound is the random-allocation accountant's for the one-client rule, i.e. the
    # Gaussian randomizer at sensitivity 2 C_u (multiplier sigma / 2) over m = 500 steps, E = 2, p0 = 0.5.
    sigma, delta = 2.0, 1e-5
    run = asyncdp.train(_checkin_config())
    s = run.summary
    assert s["privacy"]["unit"] == "client" and "whole data set" in s["privacy"]["scope"]
    assert s["checkin"]["records_held"] == 32561
    # Every checked-in client that is used contributes all its rows (a realised count: a diagnostic).
    realised = s["diagnostics"]["checkin"]
    assert realised["records_used"] > 40 * realised["client_updates_used"]
    reference = asyncdp.account(sigma=sigma / 2, delta=delta, sampling="random_allocation", m=500, k=1,
                                windows=2, p0=0.5).random_allocation.epsilon
    assert s["epsilon"] == {"random_allocation": pytest.approx(reference, rel=1e-9)}  # the async runs' shape
    # Record level beside it: a record moves the update by at most C = 0.1 under noise sigma C_u, i.e.
    # multiplier sigma C_u / C = 20 in the same reduction, far below the user-level bound.
    record = s["privacy"]["epsilon_record_level"]["random_allocation"]
    record_reference = asyncdp.account(sigma=sigma * 1.0 / 0.1 / 2, delta=delta, sampling="random_allocation",
                                       m=500, k=1, windows=2, p0=0.5).random_allocation.epsilon
    assert record == pytest.approx(min(record_reference, reference), rel=1e-9)
    assert record < s["epsilon"]["random_allocation"] / 5


def test_a_checked_in_client_update_is_clipped_as_a_whole():
    # One client holding every row, one step, no noise: theta_1 = theta_0 - eta clip_{C_u}(sum of clip_C g).
    # theta_0 comes from two unclipped runs at eta 1 and 2 (theta_1 is affine in eta).
    def final(eta, client_clip):
        return asyncdp.train(_checkin_config(
            clients__count=1, dp__enabled=False, dp__sigma=None, dp__delta=None, dp__client_clip=client_clip,
            checkin__steps=1, checkin__windows=1, checkin__p0=1.0, checkin__batch_steps=1,
            schedule__eta0=eta, eval__points=0)).final_model
    one, two = final(1.0, 1e9), final(2.0, 1e9)
    theta0 = 2 * one - two
    unclipped = theta0 - one
    assert np.linalg.norm(unclipped) > 10  # 32,561 rows at C = 0.1: the sum is far outside the ball
    clipped = theta0 - final(1.0, 0.5)
    np.testing.assert_allclose(np.linalg.norm(clipped), 0.5, rtol=1e-4)
    np.testing.assert_allclose(clipped, unclipped * 0.5 / np.linalg.norm(unclipped), atol=2e-4)  # float32 at |theta| ~ 100


def test_user_level_check_ins_refuse_what_has_no_theorem():
    # The average rule has no bound at any level; the user level needs C_u.
    run = asyncdp.train(_checkin_config(checkin__variant="averaged"))
    assert run.summary["privacy"]["bound"] == "no_bound" and run.summary["epsilon"] == {"random_allocation": None}
    with pytest.raises(asyncdp.ConfigError, match="dp.client_clip"):
        asyncdp.train(_checkin_config(dp__client_clip=0.0))
