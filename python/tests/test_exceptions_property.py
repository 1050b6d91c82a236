"""Property-based tests (hypothesis): every input path raises the documented exception.

docs/python.md promises: a malformed or undecodable file raises asyncdp.ParseError (file, line, column) or,
for a binary format, asyncdp.BinaryFormatError (file, byte offset); a bad value asyncdp.ConfigError naming
its key; a wrong type TypeError; a missing file asyncdp.InputError. Never UnicodeDecodeError, RuntimeError,
a crash or a hang. The strategies below draw file contents (random bytes, text in several encodings,
near-valid lines), paths (missing, directories, odd names), argument types and values.
"""

import atexit
import os
import pathlib
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis import strategies as st

import asyncdp

# No .hypothesis/ directory in the checkout (the tests run from the repository root): no example database,
# and hypothesis's own caches (the Unicode tables of st.text) in a temporary directory.
HYPOTHESIS_HOME = tempfile.mkdtemp(prefix="asyncdp-hypothesis-")
set_hypothesis_home_dir(HYPOTHESIS_HOME)
atexit.register(shutil.rmtree, HYPOTHESIS_HOME, ignore_errors=True)
SETTINGS = settings(max_examples=int(os.environ.get("ASYNCDP_HYPOTHESIS_EXAMPLES", "60")), deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
ENCODINGS = ("utf-8", "utf-16", "utf-16-le", "utf-32", "latin-1", "cp1252")

# Text that is close to valid for each reader, so the parsers are exercised beyond their first byte.
LIBSVM_LINE = st.builds(
    lambda label, pairs: f"{label} " + " ".join(f"{i}:{v}" for i, v in pairs),
    st.sampled_from(["+1", "-1", "0", "1", "2", "x", ""]),
    st.lists(st.tuples(st.integers(-2, 300), st.floats(allow_nan=True, allow_infinity=True)), max_size=4))
SCHEDULE_LINE = st.builds(lambda q, s, c: f"{q},{s},{c}", st.floats(allow_nan=True), st.floats(allow_nan=True),
                          st.integers(-3, 10))
TOML_LINE = st.sampled_from(["seed = 1", "[dp]", "sigma = 4.0", "sigma = = 3", "[schedule]", "epochs = 0.5",
                             "clip = \"x\"", "[[a]]", "key = [1, 2", "é = 1", "\t", "# comment"])


def text_file(lines):
    return st.builds(lambda ls, enc, nl: nl.join(ls).encode(enc, errors="replace"), st.lists(lines, max_size=6),
                     st.sampled_from(ENCODINGS), st.sampled_from(["\n", "\r\n"]))


CONTENTS = st.one_of(st.binary(max_size=300), text_file(LIBSVM_LINE), text_file(SCHEDULE_LINE),
                     text_file(TOML_LINE))


def write(content: bytes, suffix: str) -> pathlib.Path:
    handle, name = tempfile.mkstemp(suffix=suffix)
    with os.fdopen(handle, "wb") as f:
        f.write(content)
    return pathlib.Path(name)


def check_position(error):
    if isinstance(error, asyncdp.ParseError):
        assert error.line >= 1 and error.column >= 1 and error.file
        assert str(error).startswith(f"{error.file}:{error.line}:{error.column}: ")
    elif isinstance(error, asyncdp.BinaryFormatError):
        assert error.byte_offset >= 0 and error.file
    assert str(error)


@SETTINGS
@given(content=CONTENTS, suffix=st.sampled_from([".svm", ".gz", ".txt", ""]))
def test_load_libsvm_raises_the_documented_exceptions(content, suffix):
    path = write(content, suffix)
    try:
        asyncdp.load_libsvm(path)
    except (asyncdp.ParseError, asyncdp.BinaryFormatError, asyncdp.ConfigError) as error:
        check_position(error)
    finally:
        path.unlink()


@SETTINGS
@given(content=CONTENTS, suffix=st.sampled_from([".csv", ".csv.gz", ""]))
def test_schedule_files_raise_the_documented_exceptions(content, suffix):
    path = write(content, suffix)
    try:
        asyncdp.account(schedule=path, delta=1e-5)
    except (asyncdp.ParseError, asyncdp.BinaryFormatError, asyncdp.ConfigError) as error:
        check_position(error)
    finally:
        path.unlink()


@SETTINGS
@given(content=CONTENTS)
def test_config_files_raise_the_documented_exceptions(content):
    path = write(content, ".toml")
    try:
        # A data file that does not exist: a configuration that parses and validates ends in InputError
        # before any training starts.
        asyncdp.train(path, data__train="/nonexistent/asyncdp-train.svm")
    except (asyncdp.ParseError, asyncdp.ConfigError, asyncdp.InputError) as error:
        check_position(error)
    finally:
        path.unlink()


@SETTINGS
@given(content=CONTENTS, suffix=st.sampled_from([".svm", ".gz", ".bin", "-idx3-ubyte", ""]))
def test_training_data_files_raise_the_documented_exceptions(content, suffix):
    path = write(content, suffix)
    try:
        asyncdp.train("experiments/table3_strongly_convex.toml", data={"train": str(path), "test": str(path)},
                      schedule={"epochs": 0.01}, eval={"points": 1})
    except (asyncdp.ParseError, asyncdp.BinaryFormatError, asyncdp.ConfigError, asyncdp.InputError) as error:
        check_position(error)
    finally:
        path.unlink()


NOT_A_NUMBER = st.one_of(st.text(max_size=5), st.binary(max_size=5), st.booleans(), st.lists(st.integers(), max_size=0),
                         st.dictionaries(st.text(max_size=2), st.integers(), max_size=1), st.just(object()))


@SETTINGS
@given(name=st.sampled_from(["q", "sigma", "delta"]), value=NOT_A_NUMBER)
def test_wrong_types_raise_type_error(name, value):
    arguments = {"q": 0.01, "sigma": 1.0, "steps": 100, "delta": 1e-5}
    arguments[name] = value
    with pytest.raises((TypeError, asyncdp.ConfigError)) as error:
        asyncdp.account(**arguments)
    # An empty list is a (vectorised) value, refused as a value; everything else is a type error.
    assert error.type is TypeError or value == []


@SETTINGS
@given(steps=st.one_of(st.floats(), st.text(max_size=3), st.booleans()))
def test_steps_must_be_a_whole_number(steps):
    with pytest.raises(TypeError):
        asyncdp.account(q=0.01, sigma=1.0, steps=steps, delta=1e-5)


EDGES = st.sampled_from([0.0, 5e-324, 1e-300, 1e-13, 1e-12, 1e-9, 9.99e-7, 1e-6, 1e-4, 1e-3, 0.5, 1.0,
                         1.0000000000000002, 1e12, 1e300, 1.0000001e300, 1.7e308])
NUMBERS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), EDGES)


@SETTINGS
@given(q=NUMBERS, sigma=NUMBERS, delta=NUMBERS, steps=st.integers(-5, 2000))
def test_values_are_accepted_or_refused_with_config_error(q, sigma, delta, steps):
    # The accountants' domain (core/accounting/schedule.h): q in [1e-12, 1], sigma in [1e-6, 1e300].
    valid = 1e-12 <= q <= 1 and 1e-6 <= sigma <= 1e300 and 0 < delta < 1 and 0 <= steps
    try:
        result = asyncdp.account(q=q, sigma=sigma, steps=steps, delta=delta)
    except asyncdp.ConfigError as error:
        assert not valid, (q, sigma, delta, steps, str(error))
        assert error.where and str(error).startswith(error.where)
        return
    assert valid
    assert result.pld.epsilon is None or result.pld.epsilon >= 0


OVERRIDE_VALUES = st.one_of(st.integers(), st.floats(allow_nan=True), st.text(max_size=8), st.booleans(),
                            st.lists(st.integers(), max_size=3), st.none(), st.binary(max_size=3))


@SETTINGS
@given(key=st.sampled_from(["dp__sigma", "dp__clip", "schedule__epochs", "clients__count", "seed", "dp__sampling",
                            "model__kind", "protocol__runtime", "dp__nonexistent", "nosection__key"]),
       value=OVERRIDE_VALUES)
def test_overrides_raise_config_or_type_errors(key, value):
    try:
        asyncdp.train("experiments/table3_strongly_convex.toml", data__train="/nonexistent/asyncdp-train.svm",
                      **{key: value})
    except asyncdp.ConfigError as error:
        if error.key == "data.train":  # a valid value: the run gets as far as the data file, named by its key
            assert str(error) == "data.train: /nonexistent/asyncdp-train.svm: cannot open: No such file or directory"
        else:  # located at the dotted key, as the docs show: "dp.sigma: ..."
            dotted = key.replace("__", ".")
            assert str(error).startswith(dotted) or error.key == dotted, str(error)
    except TypeError:
        assert value is None or isinstance(value, bytes)


@SETTINGS
@given(name=st.one_of(st.text(min_size=1, max_size=20).filter(lambda s: "\x00" not in s and "/" not in s),
                      st.just("")))
def test_missing_and_odd_paths_raise_input_error(name):
    with tempfile.TemporaryDirectory() as directory:
        missing = pathlib.Path(directory) / (name or "missing")
        for call in (lambda p: asyncdp.load_libsvm(p), lambda p: asyncdp.account(schedule=p, delta=1e-5),
                     lambda p: asyncdp.train(p), lambda p: asyncdp.calc(N=100, delta=1e-4, epsilon=1.0, phases=p)):
            for path in (missing, directory):
                with pytest.raises(asyncdp.InputError):
                    call(path)


@SETTINGS
@given(value=st.one_of(st.integers(), st.floats(), st.lists(st.integers(), max_size=2), st.just(object())))
def test_paths_of_the_wrong_type_raise_type_error(value):
    for call in (asyncdp.load_libsvm, asyncdp.train):
        with pytest.raises(TypeError):
            call(value)


@SETTINGS
@given(epsilon=NUMBERS, q=NUMBERS, delta=NUMBERS, steps=st.integers(-2, 5000),
       sampling=st.sampled_from(["poisson", "fixed", "shuffle"]))
def test_calibration_and_the_curve_never_crash(epsilon, q, delta, steps, sampling):
    try:
        result = asyncdp.calibrate_sigma(epsilon=epsilon, q=q, steps=steps, delta=delta, sampling=sampling)
        assert result.pld.sigma is not None and result.pld.epsilon <= epsilon
    except (asyncdp.ConfigError, asyncdp.InfeasibleTarget):
        pass
    try:
        value = asyncdp.delta(q=q, sigma=1.0, steps=steps, epsilon=epsilon, sampling=sampling)
        assert 0.0 <= value <= 1.0
    except asyncdp.ConfigError:
        pass


@SETTINGS
@given(N=NUMBERS, K=NUMBERS, delta=NUMBERS, sigma=NUMBERS, theta=st.one_of(st.none(), NUMBERS),
       mode=st.sampled_from(["paper", "exact"]))
def test_the_papers_calculators_never_crash(N, K, delta, sigma, theta, mode):
    try:
        asyncdp.calc(N=N, delta=delta, K=K, sigma=sigma, theta=theta, mode=mode)
    except asyncdp.ConfigError as error:
        assert str(error)
    try:
        asyncdp.calc(N=N, delta=delta, epsilon=sigma, phases=[(K, None), (K, sigma)], mode=mode)
    except asyncdp.ConfigError as error:
        assert str(error)


@SETTINGS
@given(sigma=NUMBERS, delta=NUMBERS, m=st.integers(-1, 3000), k=st.integers(-1, 5), windows=st.integers(-1, 20),
       p0=NUMBERS)
def test_random_allocation_never_crashes(sigma, delta, m, k, windows, p0):
    try:
        result = asyncdp.account(sigma=sigma, delta=delta, sampling="random_allocation", m=m, k=k, windows=windows,
                                 p0=p0)
        assert result.random_allocation.epsilon is None or result.random_allocation.epsilon >= 0
    except asyncdp.ConfigError as error:
        assert str(error)
