"""bench/compare/compare.py's honest anchor (bench/compare/openblas_anchor.py): the torch side gets the OpenBLAS
kernels this CPU allows, and the asyncdp processes the caller's environment. No torch needed: only the decisions
are tested."""

import importlib.util
import os
import pathlib

import pytest

ROOT = pathlib.Path(os.environ.get("ASYNCDP_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))


def load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / "compare" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def compare():
    """The anchor's decisions (bench/compare/openblas_anchor.py, which compare.py imports)."""
    return load("openblas_anchor")


def test_the_script_runs_on_the_anchor_it_imports():
    # compare.py finds its sibling modules wherever it is started from (here: loaded by path, not run from its
    # directory), and its asyncdp processes get the anchor's environment.
    script = load("compare")
    assert script.asyncdp_environment.__module__ == "openblas_anchor"
    assert callable(script.main) and callable(script.check_clipped_sums)


def test_an_option_that_would_be_ignored_or_time_nothing_is_refused(capsys):
    script = load("compare")
    for argv, message in ((["--check", "--seconds", "5"], "--seconds is not read by --check"),
                          (["--check", "--skip-epoch"], "--skip-epoch is not read by --check"),
                          (["--threads", "0"], "expected a positive int, got '0'"),
                          (["--seconds", "-1"], "expected a positive float, got '-1'"),
                          (["--second", "5"], "unrecognized arguments: --second 5")):
        with pytest.raises(SystemExit) as ended:
            script.parse(argv)
        assert ended.value.code == 2, argv
        assert message in capsys.readouterr().err, argv
    args = script.parse(["--check", "--threads", "2"])
    assert args.check and args.threads == 2
    assert script.parse(["--seconds", "1.5"]).seconds == 1.5


def test_best_core_follows_the_flags(compare):
    # Flag lists as /proc/cpuinfo prints them (abridged): Emerald Rapids, Skylake-SP, Haswell, a pre-AVX2 CPU.
    assert compare.best_openblas_core("fma avx2 avx512f avx512bw avx512_bf16".split()) == "Cooperlake"
    assert compare.best_openblas_core("fma avx2 avx512f avx512bw".split()) == "SkylakeX"
    assert compare.best_openblas_core("sse4_2 avx fma avx2".split()) == "Haswell"
    assert compare.best_openblas_core("sse4_2 avx".split()) is None
    assert compare.best_openblas_core([]) is None


def test_only_fallback_cores_are_overridden(compare):
    assert "Prescott" in compare.PRE_AVX2_CORES
    for chosen in ("Cooperlake", "SkylakeX", "Haswell", "Zen", "SapphireRapids"):
        assert chosen not in compare.PRE_AVX2_CORES


def test_header_names_a_forced_core(compare, monkeypatch):
    for name in compare.OPENBLAS_OVERRIDES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(compare.SAVED_PREFIX + name, raising=False)
    monkeypatch.delenv(compare.FORCED_CORE, raising=False)
    assert compare.overrides_text() == "no OpenBLAS overrides were set"
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Cooperlake")
    monkeypatch.setenv(compare.FORCED_CORE, "OPENBLAS_CORETYPE=Cooperlake for torch: OpenBLAS chose Prescott by itself")
    assert compare.overrides_text() == ("no OpenBLAS overrides were set; OPENBLAS_CORETYPE=Cooperlake for torch: "
                                        "OpenBLAS chose Prescott by itself")
    monkeypatch.setenv(compare.SAVED_PREFIX + "OPENBLAS_L2_SIZE", "512")
    assert compare.overrides_text().startswith("unset for torch: OPENBLAS_L2_SIZE=512; OPENBLAS_CORETYPE=Cooperlake")


def test_asyncdp_processes_get_the_callers_environment(compare, monkeypatch):
    # The forced core is the torch side's only; a core the caller set comes back for asyncdp.
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Cooperlake")
    monkeypatch.setenv(compare.FORCED_CORE, "forced")
    monkeypatch.delenv(compare.SAVED_PREFIX + "OPENBLAS_CORETYPE", raising=False)
    env = compare.asyncdp_environment()
    assert "OPENBLAS_CORETYPE" not in env and compare.FORCED_CORE not in env
    monkeypatch.setenv(compare.SAVED_PREFIX + "OPENBLAS_CORETYPE", "Haswell")
    env = compare.asyncdp_environment()
    assert env["OPENBLAS_CORETYPE"] == "Haswell"
    assert not any(k.startswith(compare.SAVED_PREFIX) for k in env)
