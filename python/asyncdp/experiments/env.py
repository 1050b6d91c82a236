"""Where the experiments find things: the repository, the data sets, the asyncdp binary, the machine.

One place for the conventions the bash front door used to spread over several files:

* the repository is ``ASYNCDP_SOURCE_DIR`` or the directory ``run_experiments.sh`` runs from;
* LIBSVM data: ``--libsvm PATH``, else a9a from ``datasets/libsvm`` in the repository, else from
  ``$ASYNCDP_SHARED_DIR/datasets/libsvm`` (default ``../shared``), else the Fashion-MNIST binary task
  (two classes written as LIBSVM text by ``fashion_binary``, cached in .cache/experiments);
* images: ``--images DIR``, else Debian's Fashion-MNIST (``ASYNCDP_FASHION_DIR``);
* the interpreter: ``/usr/bin/python3``. A pyenv ``python3`` first on PATH may lack numpy, so
  ``run_experiments.sh`` always starts this package with ``/usr/bin/python3``.
"""

from __future__ import annotations

import dataclasses
import datetime
import gzip
import math
import os
import pathlib
import platform
import shutil
import subprocess

import numpy as np


class UsageError(Exception):
    """Bad input to an experiment (a missing data set, an unknown option): exit code 2, no traceback."""


# The environment's settings, each read here only; __main__.parse() reads them all before any run, so a bad
# value stops the mode at once (exit 2) even where this mode would not use it.

def run_timeout() -> float:
    """ASYNCDP_RUN_TIMEOUT: seconds a run may take before it is stopped and reported failed; unset or 0 =
    none."""
    text = os.environ.get("ASYNCDP_RUN_TIMEOUT") or "0"
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise UsageError(f"ASYNCDP_RUN_TIMEOUT={text}: expected seconds per run, a number >= 0 (0 = none)")
    return value


def fashion_pair() -> tuple[int, int]:
    """ASYNCDP_FASHION_PAIR: the two Fashion-MNIST classes of the binary task used when no LIBSVM a9a is
    found (default 7,9)."""
    text = os.environ.get("ASYNCDP_FASHION_PAIR", "7,9")
    try:
        a, b = (int(c) for c in text.split(","))
    except ValueError:
        a = b = -1
    if not (0 <= a <= 9 and 0 <= b <= 9 and a != b):
        raise UsageError(f"ASYNCDP_FASHION_PAIR={text}: expected two different Fashion-MNIST classes 0-9, e.g. 7,9")
    return a, b


SCALES = ("tiny", "default", "full")


def scale() -> str:
    """ASYNCDP_EXPERIMENTS_SCALE: tiny, default or full (unset: default); --tiny and --full override it."""
    text = os.environ.get("ASYNCDP_EXPERIMENTS_SCALE") or "default"
    if text not in SCALES:
        raise UsageError(f"ASYNCDP_EXPERIMENTS_SCALE={text}: expected one of {', '.join(SCALES)}")
    return text


def repo_dir() -> pathlib.Path:
    env = os.environ.get("ASYNCDP_SOURCE_DIR")
    if env:
        return pathlib.Path(env).resolve()
    here = pathlib.Path(__file__).resolve()
    for parent in [pathlib.Path.cwd(), *here.parents]:
        if (parent / "run_experiments.sh").is_file() and (parent / "experiments").is_dir():
            return parent
    raise UsageError("cannot find the asyncdp repository: set ASYNCDP_SOURCE_DIR or run from its root")


def shared_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("ASYNCDP_SHARED_DIR") or repo_dir().parent / "shared")


def asyncdp_binary() -> pathlib.Path:
    """The CLI of the same build as the module (``ASYNCDP_BIN``, else build/release/asyncdp)."""
    path = pathlib.Path(os.environ.get("ASYNCDP_BIN") or repo_dir() / "build" / "release" / "asyncdp")
    if not os.access(path, os.X_OK):
        raise UsageError(f"no asyncdp binary at {path} (set ASYNCDP_BIN, or build with ./run_experiments.sh)")
    return path


def cpu_model() -> str:
    """The CPU model every timing is reported beside (``model name`` of /proc/cpuinfo)."""
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def revision() -> str:
    try:
        out = subprocess.run(["git", "-C", str(repo_dir()), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10)
        if out.returncode == 0:
            dirty = subprocess.run(["git", "-C", str(repo_dir()), "status", "--porcelain", "--untracked-files=no"],
                                   capture_output=True, text=True, timeout=10).stdout.strip()
            return out.stdout.strip() + (" with uncommitted changes" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return "not a git checkout"


def utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


@dataclasses.dataclass(frozen=True)
class DataSet:
    """A train/test pair and where it came from (for the REPORT)."""

    name: str
    train: pathlib.Path
    test: pathlib.Path | None
    origin: str
    format: str  # "libsvm" or "idx"

    def overrides(self) -> dict:
        """The data.* settings that point a configuration at this data set."""
        o = {"data.train": str(self.train), "data.format": self.format}
        if self.test is not None:
            o["data.test"] = str(self.test)
        if self.format == "libsvm":
            o["data.features"] = 0
        return o


def _first(*paths: pathlib.Path) -> pathlib.Path | None:
    return next((p for p in paths if p.is_file()), None)


def resolve_images(given: str | None = None) -> DataSet:
    directory = pathlib.Path(given or os.environ.get("ASYNCDP_FASHION_DIR") or "/usr/share/datasets/fashion-mnist")
    train = _first(directory / "train-images-idx3-ubyte.gz", directory / "train-images-idx3-ubyte")
    test = _first(directory / "t10k-images-idx3-ubyte.gz", directory / "t10k-images-idx3-ubyte")
    if train is None or test is None:
        raise UsageError(f"no IDX images (train-images-idx3-ubyte[.gz], t10k-images-idx3-ubyte[.gz]) in {directory} "
                         "(install dataset-fashion-mnist or pass --images DIR)")
    name = "fashion-mnist" if given is None else directory.name
    return DataSet(name, train.resolve(), test.resolve(), f"IDX images from {directory.resolve()}", "idx")


def resolve_libsvm(given: str | None = None) -> DataSet:
    if given:
        train = pathlib.Path(given)
        if not train.is_file():
            raise UsageError(f"--libsvm {given}: no such file")
        train = train.resolve()
        stem = train.name[:-3] if train.name.endswith(".gz") else train.name
        test = _first(pathlib.Path(str(train) + ".t"), train.with_name(stem + ".t.gz"), train.with_name(stem + ".t"))
        origin = (f"--libsvm {given}, test file {test.name}" if test else
                  f"--libsvm {given}, no test file found: 20% of the rows held out (data.test_fraction)")
        return DataSet(stem, train, test, origin, "libsvm")
    for directory in (repo_dir() / "datasets" / "libsvm", shared_dir() / "datasets" / "libsvm"):
        if (directory / "a9a.gz").is_file() and (directory / "a9a.t.gz").is_file():
            d = directory.resolve()
            return DataSet("a9a", d / "a9a.gz", d / "a9a.t.gz", f"LIBSVM a9a / a9a.t from {d}", "libsvm")
    images = resolve_images(None)
    a, b = fashion_pair()
    cache = repo_dir() / ".cache" / "experiments"
    out = {}
    for part, source in (("train", images.train), ("test", images.test)):
        out[part] = cache / f"fashion_{a}_{b}.{part}.libsvm"
        if not out[part].is_file():
            fashion_binary(source, (a, b), out[part])
    return DataSet(f"fashion-mnist-{a}-vs-{b}", out["train"], out["test"],
                   f"Fashion-MNIST classes {{{a},{b}}} as a binary LIBSVM task (no LIBSVM a9a found)", "libsvm")


def _idx(path: pathlib.Path) -> np.ndarray:
    """An IDX file (images: n x rows x cols, or labels: n), plain or gzip."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(dims))
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def fashion_binary(images: pathlib.Path, pair: tuple[int, int], out: pathlib.Path) -> None:
    """The rows of classes a and b of an IDX image file (labels from the sibling *-labels-idx1-ubyte file)
    as LIBSVM text: label -1 for a, +1 for b, features "j:v" = pixel j (1-based) scaled to value/255, zero
    pixels omitted. Written to a temporary file and renamed, so a cache file is whole or absent."""
    labels = _idx(pathlib.Path(str(images).replace("images-idx3", "labels-idx1")))
    pixels = _idx(images).reshape(len(labels), -1)
    lines = []
    for x, y in zip(pixels, labels):
        if y not in pair:
            continue
        nz = np.flatnonzero(x)
        lines.append(("-1" if y == pair[0] else "+1") + "".join(f" {j + 1}:{x[j] / 255:.6g}" for j in nz))
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_suffix(f".partial-{os.getpid()}")
    partial.write_text("\n".join(lines) + "\n")
    os.replace(partial, out)


def majority_rate(data: DataSet, rows: int = 0) -> float:
    """The majority-class rate of the test labels (the first ``rows`` of them when > 0): the accuracy of
    a classifier that ignores its input, the baseline every accuracy is read against."""
    if data.test is None:
        return float("nan")
    if data.format == "idx":
        labels_path = pathlib.Path(str(data.test).replace("images-idx3", "labels-idx1"))
        opener = gzip.open if labels_path.suffix == ".gz" else open
        with opener(labels_path, "rb") as f:
            labels = np.frombuffer(f.read()[8:], dtype=np.uint8)
    else:
        from .. import load_libsvm
        labels = np.asarray(load_libsvm(str(data.test))[1])
    if rows > 0:
        labels = labels[:rows]
    _, counts = np.unique(labels, return_counts=True)
    return float(counts.max() / counts.sum())


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def which(name: str) -> str | None:
    return shutil.which(name)
