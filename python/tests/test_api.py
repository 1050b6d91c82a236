"""The Python package's own API beyond the CLI's: vectorised accounting, delta(epsilon), InfeasibleTarget,
type hints and every docstring example run as a doctest.

Numbers are checked against the CLI binary (`asyncdp account`, bit for bit) and against an oracle that
shares no code with the accountants (the exact Gaussian privacy curve for q = 1).
"""

import doctest
import importlib
import inspect
import math
import pathlib
import typing

import numpy as np
import pandas as pd
import pytest

import asyncdp
from conftest import cli_json


def exact_gaussian_delta(mu, eps):
    """Balle-Wang 2018, Theorem 8: the exact delta(eps) of a Gaussian mechanism with mu = sensitivity/std."""
    phi = lambda x: 0.5 * math.erfc(-x / math.sqrt(2.0))  # noqa: E731
    return phi(-eps / mu + mu / 2) - math.exp(eps) * phi(-eps / mu - mu / 2)


def test_docstring_examples_run_as_doctests():
    failed = attempted = 0
    for name in ("asyncdp", "asyncdp.accounting", "asyncdp.training", "asyncdp.data", "asyncdp.errors"):
        module = importlib.import_module(name)
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
        failed += result.failed
        attempted += result.attempted
    assert failed == 0
    assert attempted >= 10  # the examples exist (a module without examples would pass vacuously)


def test_vectorised_account_is_the_scalar_calls_row_by_row():
    sigmas = [0.8, 1.0, 2.0]
    deltas = np.array([1e-5, 1e-6, 1e-7])
    table = asyncdp.account(q=0.01, sigma=sigmas, steps=1000, delta=deltas, accountant="all")
    assert isinstance(table, pd.DataFrame) and len(table) == 3
    for i, (sigma, delta) in enumerate(zip(sigmas, deltas)):
        one = asyncdp.account(q=0.01, sigma=sigma, steps=1000, delta=float(delta), accountant="all")
        cli = cli_json("account", "--q", "0.01", "--sigma", repr(sigma), "--steps", "1000", "--delta",
                       repr(float(delta)))
        assert one.to_dict() == cli
        row = table.iloc[i]
        assert row["sigma"] == sigma and row["delta"] == delta and row["steps"] == 1000
        assert row["pld_epsilon"] == one.pld.epsilon and row["rdp_epsilon"] == one.rdp.epsilon
        assert row["pld_epsilon_lower"] == one.pld.epsilon_lower and row["gdp_mu"] == one.gdp.mu
        assert row["pld_bound"] == "upper_bound" and row["gdp_bound"] == "approximation"
    listed = asyncdp.account(q=[0.01, 0.02], sigma=1.0, steps=100, delta=1e-5, as_frame=False)
    assert [r.q for r in listed] == [0.01, 0.02] and all(isinstance(r, asyncdp.AccountResult) for r in listed)
    with pytest.raises(asyncdp.ConfigError, match="equal lengths"):
        asyncdp.account(q=[0.01, 0.02], sigma=[1.0, 2.0, 3.0], steps=100, delta=1e-5)
    with pytest.raises(asyncdp.ConfigError, match="at least one value"):
        asyncdp.account(q=[], sigma=1.0, steps=100, delta=1e-5)
    with pytest.raises(TypeError):
        asyncdp.account(q=0.01, sigma=1.0, steps=[10.5], delta=1e-5)


def test_epsilon_and_delta_are_inverse_points_of_one_curve():
    eps = asyncdp.epsilon(q=0.01, sigma=1.0, steps=1000, delta=1e-5)
    assert eps == asyncdp.account(q=0.01, sigma=1.0, steps=1000, delta=1e-5).pld.epsilon
    assert 0.9e-5 < asyncdp.delta(q=0.01, sigma=1.0, steps=1000, epsilon=eps) <= 1e-5 * (1 + 1e-6)
    cli = cli_json("account", "--q", "0.01", "--sigma", "1", "--steps", "1000", "--at-epsilon", "1.5")
    assert asyncdp.delta(q=0.01, sigma=1.0, steps=1000, epsilon=1.5) == cli["pld"]["delta"]
    assert asyncdp.delta(q=0.01, sigma=1.0, steps=1000, epsilon=1.5, accountant="rdp") == cli["rdp"]["delta"]
    # Against the exact curve of 16 full-batch releases at sigma 4 (mu = 1): upper bounds, close.
    for e in (0.0, 0.5, 2.0):
        exact = exact_gaussian_delta(1.0, e)
        for accountant in ("rdp", "pld"):
            assert asyncdp.delta(q=1.0, sigma=4.0, steps=16, epsilon=e, accountant=accountant) >= exact * (1 - 1e-9)
        assert asyncdp.delta(q=1.0, sigma=4.0, steps=16, epsilon=e) <= exact * 1.01
    curve = asyncdp.delta(q=0.01, sigma=1.0, steps=1000, epsilon=np.linspace(0.2, 4.0, 8))
    assert isinstance(curve, np.ndarray) and np.all(np.diff(curve) < 0)
    eps_curve = asyncdp.epsilon(q=0.01, sigma=1.0, steps=1000, delta=[1e-3, 1e-5, 1e-7])
    assert np.all(np.diff(eps_curve) > 0)
    assert asyncdp.epsilon(q=0.5, sigma=0.05, steps=10000, delta=1e-5, accountant="rdp") > 100
    with pytest.raises(asyncdp.ConfigError, match="random_allocation"):
        asyncdp.delta(sigma=1.0, epsilon=1.0, sampling="random_allocation")
    with pytest.raises(asyncdp.ConfigError, match="accountant"):
        asyncdp.delta(q=0.01, sigma=1.0, steps=10, epsilon=1.0, accountant="all")


def test_calibrate_sigma_raises_infeasible_target():
    with pytest.raises(asyncdp.InfeasibleTarget) as error:
        asyncdp.calibrate_sigma(epsilon=1e-9, q=0.01, steps=1000, delta=1e-5)
    assert isinstance(error.value, ValueError)
    assert error.value.epsilon == 1e-9 and error.value.delta == 1e-5 and error.value.accountant == "pld"
    assert error.value.result.pld.sigma is None  # the computed result stays available
    with pytest.raises(asyncdp.InfeasibleTarget, match="accountant rdp"):
        asyncdp.calibrate_sigma(epsilon=1e-9, q=0.01, steps=1000, delta=1e-5, accountant="rdp")
    ok = asyncdp.calibrate_sigma(epsilon=[1.0, 2.0], q=0.01, steps=1000, delta=1e-5)
    assert list(ok["epsilon"]) == [1.0, 2.0] and ok["pld_sigma"].iloc[0] > ok["pld_sigma"].iloc[1]
    assert np.all(ok["pld_epsilon"] <= ok["epsilon"])


def test_public_functions_carry_type_hints_and_the_package_is_typed():
    package = pathlib.Path(asyncdp.__file__).parent
    assert (package / "py.typed").exists()
    for name in ("account", "calibrate_sigma", "calc", "epsilon", "delta", "train", "load_libsvm", "set_log_level"):
        function = getattr(asyncdp, name)
        hints = typing.get_type_hints(function)
        parameters = [p for p in inspect.signature(function).parameters.values()
                      if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
        assert "return" in hints, name
        assert all(p.name in hints for p in parameters), (name, [p.name for p in parameters if p.name not in hints])


def test_run_config_is_a_dict_and_frames_name_what_they_aggregate(a9a):
    train, test = a9a
    run = asyncdp.train("experiments/table3_strongly_convex.toml", seed=4,
                        data={"train": str(train), "test": str(test), "rows_per_client": 300},
                        schedule={"epochs": 1.0}, eval={"points": 3})
    assert isinstance(run.config, dict) and run.config["seed"] == 4
    assert run.config["data"]["rows_per_client"] == 300 and "rows_per_client = 300" in run.config_toml
    metrics = run.metrics_frame()
    assert {"gradients_total", "gradients_per_client", "epsilon_max_over_clients"} <= set(metrics.columns)
    assert "gradients" not in metrics.columns and "epsilon" not in metrics.columns
    clients = run.clients_frame()
    assert len(clients) == run.config["clients"]["count"]
    # The last metrics row's total is the clients' planned gradients summed (every round applied).
    assert metrics["gradients_total"].iloc[-1] == clients["planned_gradients"].sum()
