"""asyncdp.privacy_curve: the CLI's --curve numbers as DataFrames, with the Gaussian's exact trade-off as oracle."""
import math

import pytest

import asyncdp


def _phi(x):
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def test_curve_matches_the_headline_epsilon_and_bounds_the_exact_gaussian_tradeoff():
    c = asyncdp.privacy_curve(q=1.0, sigma=1.0, steps=1, deltas=[1e-5], alphas=[0.01, 0.1, 0.5])
    assert c.bound == "upper_bound"
    assert list(c.epsilon_of_delta.columns) == ["delta", "epsilon"]
    assert math.isclose(c.epsilon_of_delta["epsilon"][0], asyncdp.epsilon(q=1.0, sigma=1.0, steps=1, delta=1e-5),
                        rel_tol=1e-9)
    from scipy.stats import norm  # the exact Gaussian trade-off Phi(Phi^-1(1 - a) - 1/sigma)
    for alpha, beta in zip(c.tradeoff["alpha"], c.tradeoff["beta"]):
        exact = _phi(norm.ppf(1 - alpha) - 1.0)
        assert beta <= exact + 1e-9
        assert exact - beta < 5e-3


def test_curve_refuses_an_accountant_list_and_a_mismatched_window():
    with pytest.raises(asyncdp.ConfigError):
        asyncdp.privacy_curve(q=0.01, sigma=1.0, steps=10, accountant="all")
    with pytest.raises(asyncdp.ConfigError, match="m \\(steps per window\\)"):
        asyncdp.privacy_curve(q=0.01, sigma=1.0, steps=10, sampling="random_allocation")
    with pytest.raises(asyncdp.ConfigError, match="random_allocation only") as refused:
        asyncdp.privacy_curve(q=0.01, sigma=1.0, steps=10, m=10)
    assert refused.value.key == "m"
    with pytest.raises(asyncdp.ConfigError, match="random_allocation only") as refused:
        asyncdp.privacy_curve(q=0.01, sigma=1.0, steps=10, windows=2)
    assert refused.value.key == "windows"
    with pytest.raises(asyncdp.ConfigError, match="expected one of random_allocation"):
        asyncdp.privacy_curve(sigma=1.0, m=10, sampling="random_allocation", accountant="pld")


def test_random_allocation_curve_and_points_agree():
    # The curve of the reported bound: its epsilon(delta) is account()'s epsilon, delta() inverts epsilon().
    window = dict(sigma=1.0, sampling="random_allocation", m=100, windows=10)
    c = asyncdp.privacy_curve(deltas=[1e-6], epsilons=[1.0, 2.0], alphas=[0.0, 0.01], **window)
    assert c.accountant == "random_allocation" and c.bound == "upper_bound"
    reported = asyncdp.account(delta=1e-6, **window).random_allocation.epsilon
    assert abs(float(c.epsilon_of_delta["epsilon"][0]) - reported) < 1e-9
    assert abs(asyncdp.epsilon(delta=1e-6, **window) - reported) < 1e-12
    d = asyncdp.delta(epsilon=[1.0, 2.0], **window)
    assert list(d) == pytest.approx(list(c.delta_of_epsilon["delta"]), rel=1e-12)
    assert abs(asyncdp.delta(epsilon=reported, **window) / 1e-6 - 1) < 1e-6
