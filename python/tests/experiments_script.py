"""Runs run_experiments.sh at the tiny scale through the front door, for the test_experiments*.py files."""

import os
import pathlib
import subprocess

SOURCE = pathlib.Path(os.environ.get("ASYNCDP_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))


def run_script(args, tmp_path):
    # This build's binary and module (no set-up or build); ../shared deliberately absent: the script must
    # find its data in the repository, as on a fresh clone.
    binary = os.environ.get("ASYNCDP_BINARY", str(SOURCE / "build" / "release" / "asyncdp"))
    env = dict(os.environ, ASYNCDP_EXPERIMENTS_SCALE="tiny", ASYNCDP_RUN_TIMEOUT="240", ASYNCDP_BIN=binary,
               ASYNCDP_SHARED_DIR=str(tmp_path / "no-shared-beside-this-clone"))
    return subprocess.run([str(SOURCE / "run_experiments.sh"), *args], env=env, capture_output=True, text=True,
                          timeout=600)
