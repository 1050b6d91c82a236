"""asyncdp.account / calibrate_sigma / calc against the CLI binary: the same JSON, bit for bit.

The CLI prints JSON with round-trip double formatting, so json.loads recovers the exact doubles; the
dicts are compared with ==, which for floats is bitwise equality (apart from NaN, which JSON never holds).
The accountants' own correctness is tested against independent oracles in tests/core/accounting.
"""

import math

import pytest

import asyncdp
from conftest import cli_json, run_cli


def assert_same(python_obj, cli_obj):
    assert python_obj == cli_obj
    # == treats 0.0 == -0.0 and 1 == 1.0: check the types and signs too.
    def walk(a, b, path):
        assert type(a) is type(b), path
        if isinstance(a, dict):
            assert list(a) == list(b), path
            for key in a:
                walk(a[key], b[key], f"{path}.{key}")
        elif isinstance(a, list):
            for i, (x, y) in enumerate(zip(a, b)):
                walk(x, y, f"{path}[{i}]")
        elif isinstance(a, float):
            assert math.copysign(1.0, a) == math.copysign(1.0, b) and a.hex() == b.hex(), path
    walk(python_obj, cli_obj, "")


@pytest.mark.parametrize("sampling", ["poisson", "fixed", "shuffle"])
def test_account_all_accountants_equal_cli(sampling):
    result = asyncdp.account(q=0.01, sigma=1.1, steps=2000, delta=1e-5, accountant="all", sampling=sampling)
    cli = cli_json("account", "--q", "0.01", "--sigma", "1.1", "--steps", "2000", "--delta", "1e-5",
                   "--accountant", "all", "--sampling", sampling)
    assert_same(result.to_dict(), cli)
    # The dataclass fields are the JSON's, assumptions included.
    assert result.pld.epsilon == cli["pld"]["epsilon"]
    assert result.rdp.order == cli["rdp"]["order"]
    assert result.gdp.bound == "approximation" and result.pld.bound == "upper_bound"
    assert result.neighbors == cli["neighbors"] and result.public == cli["public"]
    assert result.pld.epsilon_lower <= result.pld.epsilon


def test_account_default_is_pld_and_acceptance_line_prints():
    result = asyncdp.account(q=0.01, sigma=1.0, steps=10000, delta=1e-5)
    cli = cli_json("account", "--q", "0.01", "--sigma", "1.0", "--steps", "10000", "--delta", "1e-5",
                   "--accountant", "pld")
    assert_same(result.to_dict(), cli)
    assert result.rdp is None and result.gdp is None
    text = repr(result)
    assert "pld=AccountantResult(epsilon=" in text and "neighbors='add_remove'" in text


def test_schedule_list_and_csv_equal_cli(tmp_path):
    groups = [(0.01, 1.5, 300), (0.02, 2.0, 100), (0.005, 0.9, 7)]
    path = tmp_path / "schedule.csv"
    path.write_text("q,sigma,count\n" + "".join(f"{q},{s},{c}\n" for q, s, c in groups))
    cli = cli_json("account", "--schedule", path, "--delta", "1e-6", "--accountant", "all")
    from_list = asyncdp.account(schedule=groups, delta=1e-6, accountant="all")
    from_csv = asyncdp.account(schedule=path, delta=1e-6, accountant="all")
    assert_same(from_list.to_dict(), cli)
    assert_same(from_csv.to_dict(), cli)
    assert from_list.steps == 407 and from_list.schedule[1] == {"q": 0.02, "sigma": 2.0, "count": 100}


@pytest.mark.parametrize("accountant", ["pld", "rdp", "all"])
def test_calibrate_sigma_equals_cli(accountant):
    result = asyncdp.calibrate_sigma(epsilon=2.0, q=0.01, steps=1000, delta=1e-5, accountant=accountant)
    cli = cli_json("account", "--q", "0.01", "--epsilon", "2", "--steps", "1000", "--delta", "1e-5",
                   "--accountant", accountant)
    assert_same(result.to_dict(), cli)
    section = result.pld if accountant != "rdp" else result.rdp
    assert section.sigma is not None and section.epsilon <= 2.0


def test_calc_d4_and_e1_equal_cli(tmp_path):
    d4 = asyncdp.calc(N=10000, delta=1e-4, K=50000, sigma=19.29962)
    assert_same(d4.to_dict(), cli_json("calc", "--N", "10000", "--K", "50000", "--delta", "1e-4",
                                       "--sigma", "19.29962"))
    assert d4.s_max >= 1 and "(7)" in d4.conditions
    exact = asyncdp.calc(N=10000, delta=1e-4, K=50000, epsilon=1.0, theta=1.5, mode="exact")
    assert_same(exact.to_dict(), cli_json("calc", "--N", "10000", "--K", "50000", "--delta", "1e-4",
                                          "--epsilon", "1", "--theta", "1.5", "--mode", "exact"))
    phases = [(20000, None), (20000, 8.0), (10000, 12.0)]
    path = tmp_path / "phases.csv"
    path.write_text("K,sigma\n20000,\n20000,8\n10000,12\n")
    cli = cli_json("calc", "--N", "10000", "--delta", "1e-4", "--epsilon", "2", "--phases", path)
    assert_same(asyncdp.calc(N=10000, delta=1e-4, epsilon=2.0, phases=phases).to_dict(), cli)
    assert_same(asyncdp.calc(N=10000, delta=1e-4, epsilon=2.0, phases=path).to_dict(), cli)


def test_bad_arguments_raise_with_the_cli_text(tmp_path):
    cli = run_cli("account", "--q", "1.5", "--sigma", "1", "--steps", "10", "--delta", "1e-5", check=False)
    assert cli.returncode == 2 and "error: --q: must be in (0, 1]" in cli.stderr
    with pytest.raises(asyncdp.ConfigError) as error:
        asyncdp.account(q=1.5, sigma=1.0, steps=10, delta=1e-5)
    assert str(error.value) == "q: must be in (0, 1]" and error.value.key == "q"
    with pytest.raises(asyncdp.ConfigError, match="delta: must be in"):
        asyncdp.account(q=0.1, sigma=1.0, steps=10, delta=2.0)
    with pytest.raises(asyncdp.ConfigError, match="steps: expected a whole number"):
        asyncdp.account(q=0.1, sigma=1.0, steps=2**60, delta=1e-5)
    with pytest.raises(TypeError, match="steps"):
        asyncdp.account(q=0.1, sigma=1.0, steps=1e4, delta=1e-5)  # the CLI refuses 1e4 too
    with pytest.raises(asyncdp.ConfigError, match=r"schedule\[1\]: sigma must be"):
        asyncdp.account(schedule=[(0.1, 1.0, 3), (0.1, -1.0, 3)], delta=1e-5)
    with pytest.raises(asyncdp.ConfigError, match="sampling: expected poisson, fixed, shuffle or random_allocation"):
        asyncdp.account(q=0.1, sigma=1.0, steps=10, delta=1e-5, sampling="uniform")
    bad = tmp_path / "bad.csv"
    bad.write_text("q,sigma\n0.1,abc\n")
    with pytest.raises(asyncdp.ParseError) as error:
        asyncdp.account(schedule=bad, delta=1e-5)
    cli = run_cli("account", "--schedule", bad, "--delta", "1e-5", check=False)
    assert cli.stderr.strip() == f"error: {error.value}"
    assert (error.value.file, error.value.line) == (str(bad), 2)
    with pytest.raises(asyncdp.ConfigError, match="K: required"):
        asyncdp.calc(N=100, delta=0.01, sigma=3.0)
    # delta()'s epsilon is named as the caller gave it, not as the CLI's --at-epsilon it becomes.
    with pytest.raises(asyncdp.ConfigError, match="^epsilon: must be a finite number >= 0$") as error:
        asyncdp.delta(q=0.01, sigma=1.0, steps=100, epsilon=-1.0)
    assert error.value.key == "epsilon"
    # The calculators' own checks name the keyword, as the CLI names its option (not the library's calc.sigma).
    for kwargs, message in ((dict(sigma=3.0, epsilon=1.0), "give exactly one of sigma and epsilon"),
                            (dict(sigma=1.0), r"relation \(6\) needs sigma\^2 > 2")):
        with pytest.raises(asyncdp.ConfigError, match=message) as error:
            asyncdp.calc(N=1000, K=1000, delta=1e-3, **kwargs)
        assert error.value.key == "sigma"
    # A group of the wrong shape is refused where it is, not cut to size: a third entry of a phase (here its
    # sigma 8.0 would have been dropped, then the phase refused for lacking one) or a bare number.
    for phases, where in (([(20000, None), (20000, 8.0, 7)], "phases[1]"), ([20000], "phases[0]"),
                          ([(20000, None), "20000,8"], "phases[1]")):
        with pytest.raises(asyncdp.ConfigError, match=r"expected \(K,\) or \(K, sigma\)") as error:
            asyncdp.calc(N=10000, delta=1e-4, epsilon=2.0, phases=phases)
        assert error.value.key == where
    for schedule, where in (([(0.1, 1.0, 3, 4)], "schedule[0]"), ([(0.1, 1.0), 0.1], "schedule[1]")):
        with pytest.raises(asyncdp.ConfigError, match=r"expected \(q, sigma\) or \(q, sigma, count\)") as error:
            asyncdp.account(schedule=schedule, delta=1e-5)
        assert error.value.key == where


def _without_seconds(obj):
    """The allocation section's ``seconds`` (and its lower bound's) are the wall times of that call: the only
    fields not reproducible."""
    obj = dict(obj)
    obj["random_allocation"] = {k: v for k, v in obj["random_allocation"].items() if k != "seconds"}
    lower = obj["random_allocation"].get("lower_bound")
    if isinstance(lower, dict):
        obj["random_allocation"]["lower_bound"] = {k: v for k, v in lower.items() if k != "seconds"}
    return obj


def test_random_allocation_equals_cli():
    result = asyncdp.account(sigma=1.0, delta=1e-6, sampling="random_allocation", m=200, k=2, windows=3)
    cli = cli_json("account", "--sampling", "random_allocation", "--steps", "200", "--k", "2", "--windows", "3",
                   "--sigma", "1", "--delta", "1e-6")
    assert_same(_without_seconds(result.to_dict()), _without_seconds(cli))
    section = result.random_allocation
    assert section.epsilon == cli["random_allocation"]["epsilon"] and section.bound == "upper_bound"
    assert "Feldman" in section.method and result.k == 2 and result.windows == 3 and result.steps == 200
    assert {b["bound"] for b in section.extra["bounds"]} == {"renyi_remove", "amgm_add", "decomposition", "pld",
                                                              "recursive"}
    assert result.poisson["q"] == 0.01
    with_p0 = asyncdp.account(sigma=2.0, delta=1e-6, sampling="random_allocation", m=50, p0=0.5)
    cli = cli_json("account", "--sampling", "random_allocation", "--steps", "50", "--p0", "0.5", "--sigma", "2",
                   "--delta", "1e-6")
    assert_same(_without_seconds(with_p0.to_dict()), _without_seconds(cli))
    # k = 1: the certified lower bound on the true epsilon comes with it, just below the guarantee.
    lower = with_p0.random_allocation.extra["lower_bound"]
    assert lower["bound"] == "lower_bound"
    assert 0.99 * with_p0.random_allocation.epsilon <= lower["epsilon"] <= with_p0.random_allocation.epsilon


def test_random_allocation_calibrate_sigma_equals_cli():
    result = asyncdp.calibrate_sigma(epsilon=1.0, delta=1e-6, sampling="random_allocation", m=100, k=2,
                                     windows=2)
    cli = cli_json("account", "--sampling", "random_allocation", "--steps", "100", "--k", "2", "--windows", "2",
                   "--epsilon", "1", "--delta", "1e-6")
    assert_same(result.to_dict(), cli)
    assert result.random_allocation.sigma is not None and result.random_allocation.epsilon <= 1.0


def test_random_allocation_bad_arguments_raise_with_the_cli_text():
    cli = run_cli("account", "--sampling", "random_allocation", "--steps", "10", "--k", "11", "--sigma", "1",
                  "--delta", "1e-6", check=False)
    assert cli.returncode == 2 and "error: --k: must be in [1, --steps]" in cli.stderr
    with pytest.raises(asyncdp.ConfigError) as error:
        asyncdp.account(sigma=1.0, delta=1e-6, sampling="random_allocation", m=10, k=11)
    assert str(error.value) == "k: must be in [1, steps]" and error.value.key == "k"
    with pytest.raises(asyncdp.ConfigError, match="not q, schedule"):
        asyncdp.account(q=0.1, sigma=1.0, delta=1e-6, sampling="random_allocation", m=10)
    with pytest.raises(asyncdp.ConfigError, match="needs steps"):
        asyncdp.account(sigma=1.0, delta=1e-6, sampling="random_allocation")
    with pytest.raises(asyncdp.ConfigError, match="not steps"):
        asyncdp.account(sigma=1.0, steps=10, delta=1e-6, sampling="random_allocation")
    with pytest.raises(asyncdp.ConfigError, match="random_allocation only"):
        asyncdp.account(q=0.1, sigma=1.0, steps=10, delta=1e-6, k=2)
    # The error names the keyword given (it named k for each of them).
    for keyword, value in (("m", 10), ("k", 2), ("windows", 3), ("p0", 0.5)):
        with pytest.raises(asyncdp.ConfigError, match="random_allocation only") as refused:
            asyncdp.account(q=0.1, sigma=1.0, steps=10, delta=1e-6, **{keyword: value})
        assert refused.value.key == keyword
