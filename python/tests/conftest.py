"""Shared fixtures: the CLI binary of the same build (ASYNCDP_BINARY), the repository and ../shared.

ctest sets the environment (python/CMakeLists.txt); run by hand as
  ASYNCDP_BINARY=build/release/asyncdp PYTHONPATH=build/release/python python3 -m pytest python/tests
"""

import json
import os
import pathlib
import subprocess

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("ASYNCDP_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
SHARED_DIR = pathlib.Path(os.environ.get("ASYNCDP_SHARED_DIR", SOURCE_DIR.parent / "shared"))
BINARY = pathlib.Path(os.environ.get("ASYNCDP_BINARY", SOURCE_DIR / "build" / "release" / "asyncdp"))


def shared_file(relative):
    path = SHARED_DIR / relative
    if not path.exists():  # a missing data file is a failure with a clear message, never a skip
        pytest.fail(f"missing test data {path} (../shared beside the checkout; ASYNCDP_SHARED_DIR)")
    return path


def run_cli(*args, cwd=None, check=True):
    """Runs the asyncdp binary; returns the CompletedProcess (text mode)."""
    result = subprocess.run([str(BINARY), *map(str, args)], capture_output=True, text=True, cwd=cwd)
    if check and result.returncode != 0:
        pytest.fail(f"asyncdp {' '.join(map(str, args))} exited {result.returncode}: {result.stderr}")
    return result


def cli_json(*args):
    return json.loads(run_cli(*args).stdout)


@pytest.fixture
def a9a():
    return shared_file("datasets/libsvm/a9a.gz"), shared_file("datasets/libsvm/a9a.t.gz")
