"""`pip install .` into a fresh virtual environment made from /usr/bin/python3 (docs/python.md): the package
builds with Debian's setuptools driving CMake (no network, no build isolation) and imports from any
directory. The test reuses this build's CMake tree (ASYNCDP_CMAKE_BUILD_DIR), so nothing compiles twice."""

import os
import pathlib
import subprocess
import sys
import venv

import pytest

ROOT = pathlib.Path(os.environ.get("ASYNCDP_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
BINARY = os.environ.get("ASYNCDP_BINARY")


@pytest.mark.skipif(BINARY is None, reason="run through ctest (needs this build's tree)")
def test_pip_install_into_a_fresh_venv_imports_from_another_directory(tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # not the build tree's package
    env["ASYNCDP_CMAKE_BUILD_DIR"] = str(pathlib.Path(BINARY).parent)
    env["PIP_NO_INPUT"] = "1"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-build-isolation", "--no-index", "--quiet", str(ROOT)],
        env=env, capture_output=True, text=True, timeout=900)
    assert install.returncode == 0, install.stdout + install.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run = subprocess.run(
        [str(python), "-c",
         "import asyncdp, pathlib; print(asyncdp.__file__); "
         "print(asyncdp.account(q=0.01, sigma=1.0, steps=1000, delta=1e-5).pld.epsilon)"],
        cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    location, epsilon = run.stdout.split()
    assert pathlib.Path(location).resolve().is_relative_to(env_dir.resolve()), location
    assert 0.0 < float(epsilon) < 10.0
    assert sys.version_info >= (3, 9)
