"""Builds the asyncdp extension (_asyncdp, pybind11) with CMake for `pip install .` (pyproject.toml).

The C++ libraries, the bindings and the package share one CMake build: by default build/pip, configured
once for the installing interpreter (Release, no tests or benchmarks); ASYNCDP_CMAKE_BUILD_DIR names an
existing build tree to reuse instead (the install test reuses the test build's tree, so nothing compiles
twice). Only the _asyncdp target is built; the .py files come from python/asyncdp.
"""

import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = pathlib.Path(__file__).resolve().parent


class BuildWithCMake(build_py):
    def run(self):
        super().run()
        build_dir = pathlib.Path(os.environ.get("ASYNCDP_CMAKE_BUILD_DIR") or ROOT / "build" / "pip")
        if not (build_dir / "CMakeCache.txt").exists():
            subprocess.check_call([
                "cmake", "-S", str(ROOT), "-B", str(build_dir), "-G", "Ninja",
                "-DCMAKE_BUILD_TYPE=Release", "-DASYNCDP_BUILD_TESTS=OFF", "-DASYNCDP_BUILD_BENCH=OFF",
                f"-DPython3_EXECUTABLE={sys.executable}",
            ])
        subprocess.check_call(["cmake", "--build", str(build_dir), "--target", "_asyncdp",
                               "-j", str(os.cpu_count() or 1)])
        built = sorted((build_dir / "python" / "asyncdp").glob("_asyncdp*.so"))
        if not built:
            raise RuntimeError(f"no _asyncdp extension in {build_dir}/python/asyncdp: did CMake find pybind11 "
                               "and Python 3 (scripts/install-deps.sh installs them)?")
        target = pathlib.Path(self.build_lib) / "asyncdp"
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built[-1], target / built[-1].name)


class BinaryDistribution(Distribution):
    """The package holds a compiled extension: its wheel is platform-specific."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithCMake}, distclass=BinaryDistribution)
