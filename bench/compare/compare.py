#!/usr/bin/env python3
"""Side by side with the anchor: the same DP-SGD workloads timed in asyncdp and in Opacus, on this
machine, in one run, with the ratios.

Workloads (one thread each by default, --threads to change):
  lenet/370        per-example clipped gradient sum of LeNet-5, a batch of 370 28x28 images
  logistic_a9a/26  the same for logistic regression on a9a (d = 123), a batch of 26
  lenet_dp_epoch   one DP-SGD epoch of LeNet-5 over Fashion-MNIST's 60,000 training images
                   (Poisson sampling, expected batch 370, sigma = 1, C = 1), end to end

asyncdp side: Google Benchmark rows of build/release/bench/asyncdp_bench (BM_ClippedGradSum/...) and a
`build/release/asyncdp train` run. Opacus side: its per-example gradient wrapper + DPOptimizer's
clip_and_accumulate for the clipped sums (loss reduction "sum", as asyncdp), PrivacyEngine.make_private for
the epoch. Each of Opacus's per-example gradient engines (grad_sample_mode hooks, ew = expanded weights,
functorch) is tried and the fastest is compared (and named in the table); the epoch uses LeNet's fastest.

Requirements: Debian's python3-torch (apt-get install python3-torch python3-numpy), and a local Opacus
source checkout passed with --opacus (Opacus is not packaged for Debian). With bookworm's torch 1.13 use
Opacus v1.4.0, the last release that supports it:
    git clone --branch v1.4.0 https://github.com/pytorch/opacus /path/to/opacus
Opacus imports opt_einsum; when that package is missing, a stand-in that forwards to torch.einsum is
installed (same contraction, chosen by torch instead of opt_einsum's path optimiser; the products here
have two operands, so there is nothing to optimise). Without torch or without --opacus, the asyncdp
side still runs and the Opacus column is skipped (exit status 0).

Timing: with one thread (the default) both sides are timed in CPU seconds of the process (Google
Benchmark's default for asyncdp's rows; time.process_time for Opacus; user + system time of the
`asyncdp train` child), so a machine shared with other work does not skew the ratio; with --threads > 1
both sides are timed in wall seconds.

BLAS: Debian's torch calls the system BLAS, which is the unoptimised reference (netlib) one unless
another is selected; Opacus's per-example gradients are BLAS products, so that would flatter asyncdp.
When OpenBLAS is installed (apt-get install libopenblas0-pthread) and torch would otherwise load the
reference BLAS, the script re-executes itself with OpenBLAS first on LD_LIBRARY_PATH (one thread), and it
prints the BLAS library torch actually loaded.

Usage: python3 bench/compare/compare.py --opacus /path/to/opacus [--build build/release] [--threads 1]
"""

import argparse
import gzip
import json
import os
import resource
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import types

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FASHION = "/usr/share/datasets/fashion-mnist"
OPACUS_MODES = ["hooks", "ew", "functorch"]
OPENBLAS_DIRS = ["/usr/lib/x86_64-linux-gnu/openblas-pthread", "/usr/lib/aarch64-linux-gnu/openblas-pthread"]


def log(message):
    print(message, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------------------------------
# asyncdp side
# ----------------------------------------------------------------------------------------------------

def asyncdp_rate(bench, name, repetitions, min_time):
    """Median items_per_second of one Google Benchmark row."""
    out = subprocess.run(
        [bench, f"--benchmark_filter=^BM_ClippedGradSum/{name}$", "--benchmark_format=json",
         f"--benchmark_repetitions={repetitions}", f"--benchmark_min_time={min_time}"],
        check=True, capture_output=True, text=True).stdout
    rows = [b for b in json.loads(out)["benchmarks"] if b.get("run_type") == "iteration"]
    if not rows:
        raise RuntimeError(f"asyncdp_bench has no row BM_ClippedGradSum/{name}")
    return statistics.median(b["items_per_second"] for b in rows)


ASYNCDP_EPOCH_TOML = """seed = 1
[data]
train = "{fashion}/train-images-idx3-ubyte.gz"
test = "{fashion}/t10k-images-idx3-ubyte.gz"
eval_rows = 1
[model]
kind = "lenet"
threads = {threads}
[clients]
count = 1
[protocol]
runtime = "virtual"
worker_threads = 1
[dp]
clip = 1.0
sigma = 1.0
sampling = "poisson"
[schedule]
sample_size = 370
epochs = 1.0
step_rule = "constant"
eta0 = 0.1
[eval]
points = 0
train_rows = 0
"""


def asyncdp_epoch_seconds(cli, threads, fashion):
    """Seconds of `asyncdp train` for one DP epoch, process start to exit (loading, training, output):
    CPU seconds (user + system) with one thread, else wall seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        config = os.path.join(tmp, "epoch.toml")
        with open(config, "w") as f:
            f.write(ASYNCDP_EPOCH_TOML.format(fashion=fashion, threads=threads))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([cli, "train", "--config", config, "--out", os.path.join(tmp, "out")], check=True,
                       capture_output=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return cpu if threads == 1 else wall


# ----------------------------------------------------------------------------------------------------
# Opacus side
# ----------------------------------------------------------------------------------------------------

def import_opacus(path):
    try:
        import opt_einsum  # noqa: F401
    except ImportError:
        import torch
        shim = types.ModuleType("opt_einsum")
        contract = types.ModuleType("opt_einsum.contract")
        shim.contract = contract.contract = torch.einsum
        shim.__path__ = []
        sys.modules["opt_einsum"] = shim
        sys.modules["opt_einsum.contract"] = contract
        log("compare: opt_einsum not installed; Opacus's einsum calls go to torch.einsum")
    sys.path.insert(0, path)
    import opacus
    return opacus


def lenet(torch):
    nn = torch.nn
    # conv + bias -> 2x2 max pool -> ReLU, twice; dense 256 -> 120 -> 84 -> 10 (models/cnn/lenet.cc).
    return nn.Sequential(
        nn.Conv2d(1, 6, 5), nn.MaxPool2d(2), nn.ReLU(),
        nn.Conv2d(6, 16, 5), nn.MaxPool2d(2), nn.ReLU(),
        nn.Flatten(), nn.Linear(256, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))


def clock(threads):
    """CPU seconds of this process with one thread, else wall seconds."""
    return time.process_time if threads == 1 else time.perf_counter


def opacus_clipped_sum_rate(torch, opacus, model, x, y, loss, batch, seconds, clip, threads, mode):
    """Examples/s of forward + per-example backward + clip + sum (DPOptimizer.clip_and_accumulate), with
    Opacus's per-example gradient engine `mode`."""
    from opacus.grad_sample import wrap_model
    from opacus.optimizers import DPOptimizer
    module = wrap_model(model, grad_sample_mode=mode, batch_first=True, loss_reduction="sum")
    optimizer = DPOptimizer(torch.optim.SGD(module.parameters(), lr=0.0), noise_multiplier=0.0,
                            max_grad_norm=clip, expected_batch_size=batch, loss_reduction="sum")
    generator = torch.Generator().manual_seed(11)
    batches = [torch.randint(0, x.shape[0], (batch,), generator=generator) for _ in range(16)]

    def step(i):
        rows = batches[i % len(batches)]
        optimizer.zero_grad(set_to_none=True)
        loss(module(x[rows]), y[rows]).backward()
        optimizer.clip_and_accumulate()

    for i in range(3):
        step(i)
    now = clock(threads)
    times = []
    deadline = now() + seconds
    i = 0
    while now() < deadline or len(times) < 5:
        start = now()
        step(i)
        times.append(now() - start)
        i += 1
    return batch / statistics.median(times)


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    dims = magic & 0xFF
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return shape, data[4 + 4 * dims:]


def load_fashion(torch, fashion):
    import numpy as np
    shape, pixels = read_idx(os.path.join(fashion, "train-images-idx3-ubyte.gz"))
    _, labels = read_idx(os.path.join(fashion, "train-labels-idx1-ubyte.gz"))
    x = np.frombuffer(pixels, dtype=np.uint8).reshape(shape[0], 1, shape[1], shape[2]).astype(np.float32) / 255
    y = np.frombuffer(labels, dtype=np.uint8).astype(np.int64)
    return torch.from_numpy(x), torch.from_numpy(y)


def load_a9a(torch, path):
    import numpy as np
    rows, labels = [], []
    with gzip.open(path, "rt") as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            labels.append(1.0 if float(parts[0]) > 0 else 0.0)
            rows.append([int(p.split(":")[0]) for p in parts[1:]])
    x = np.zeros((len(rows), 123), dtype=np.float32)
    for r, columns in enumerate(rows):
        x[r, [c - 1 for c in columns]] = 1.0
    return torch.from_numpy(x), torch.tensor(labels, dtype=torch.float32).unsqueeze(1)


def best_opacus_rate(torch, opacus, make_model, x, y, loss, batch, seconds, clip, threads):
    """The fastest of Opacus's per-example gradient engines (hooks, expanded weights, functorch) on this
    workload, so the comparison is with Opacus at its best: (rate, mode)."""
    best = (0.0, None)
    for mode in OPACUS_MODES:
        try:
            rate = opacus_clipped_sum_rate(torch, opacus, make_model(), x, y, loss, batch, seconds, clip, threads, mode)
        except Exception as error:  # an engine this Opacus/torch pair does not support
            log(f"compare:   Opacus grad_sample_mode={mode}: unavailable ({type(error).__name__})")
            continue
        log(f"compare:   Opacus grad_sample_mode={mode}: {rate:.4g} examples/s")
        best = max(best, (rate, mode), key=lambda pair: pair[0])
    return best


def opacus_epoch_seconds(torch, opacus, fashion, threads, mode):
    """Seconds (clock(threads)) of one DP-SGD epoch: loading the IDX files, make_private, the epoch."""
    now = clock(threads)
    start = now()
    x, y = load_fashion(torch, fashion)
    torch.manual_seed(1)
    model = lenet(torch)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=370)
    engine = opacus.PrivacyEngine()
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                   noise_multiplier=1.0, max_grad_norm=1.0,
                                                   poisson_sampling=True, grad_sample_mode=mode)
    loss = torch.nn.CrossEntropyLoss()
    for xb, yb in loader:
        optimizer.zero_grad(set_to_none=True)
        if len(xb) == 0:
            continue
        loss(model(xb), yb).backward()
        optimizer.step()
    return now() - start


# ----------------------------------------------------------------------------------------------------

def reexec_with_openblas():
    """Re-executes this script with OpenBLAS first on LD_LIBRARY_PATH, if installed and not yet done."""
    if os.environ.get("ASYNCDP_COMPARE_BLAS"):
        return
    for directory in OPENBLAS_DIRS:
        if os.path.exists(os.path.join(directory, "libblas.so.3")):
            env = dict(os.environ, ASYNCDP_COMPARE_BLAS=directory, OPENBLAS_NUM_THREADS="1",
                       LD_LIBRARY_PATH=directory + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""))
            os.execve(sys.executable, [sys.executable] + sys.argv, env)
    log("compare: OpenBLAS not installed (apt-get install libopenblas0-pthread); torch uses the system BLAS")


def loaded_blas():
    """The BLAS shared library this process has mapped (after torch ran a product)."""
    with open("/proc/self/maps") as maps:
        names = {line.split()[-1] for line in maps if "blas" in line.split()[-1]}
    return ", ".join(sorted(names)) or "none mapped"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--opacus", default=os.environ.get("OPACUS_DIR", ""),
                        help="path of a local Opacus checkout (see the module docstring); empty = skip Opacus")
    parser.add_argument("--build", default=os.path.join(REPO, "build", "release"), help="asyncdp build directory")
    parser.add_argument("--threads", type=int, default=1, help="threads for both (torch and model.threads)")
    parser.add_argument("--seconds", type=float, default=3.0, help="timing budget per clipped-sum row")
    parser.add_argument("--fashion-mnist", default=FASHION, help="directory of the Fashion-MNIST IDX files")
    parser.add_argument("--a9a", default=os.path.join(REPO, "..", "shared", "datasets", "libsvm", "a9a.gz"))
    parser.add_argument("--skip-epoch", action="store_true", help="skip the one-epoch runs")
    args = parser.parse_args()
    if args.opacus:
        reexec_with_openblas()

    bench = os.path.join(args.build, "bench", "asyncdp_bench")
    cli = os.path.join(args.build, "asyncdp")
    for binary in (bench, cli):
        if not os.access(binary, os.X_OK):
            sys.exit(f"compare: {binary} not found; build first: cmake --preset release && "
                     "cmake --build --preset release")
    thread_suffix = "" if args.threads == 1 else f"_{args.threads}threads"
    rows = []  # (workload, unit, asyncdp, opacus or None; larger is better)

    log("compare: asyncdp clipped sums ...")
    lenet_rate = asyncdp_rate(bench, f"lenet{thread_suffix}/370", 3, args.seconds / 3)
    rows.append(["lenet/370 clipped sum", "examples/s", lenet_rate, None])
    a9a_rate = asyncdp_rate(bench, "logistic_a9a/26", 3, args.seconds / 3) if args.threads == 1 else None
    rows.append(["logistic_a9a/26 clipped sum", "examples/s", a9a_rate, None])
    epoch = None
    if not args.skip_epoch:
        log("compare: asyncdp one DP epoch ...")
        epoch = asyncdp_epoch_seconds(cli, args.threads, args.fashion_mnist)
        rows.append(["lenet DP epoch (60k images)", "seconds", epoch, None])

    opacus = torch = None
    try:
        import torch  # noqa: F811
        torch.set_num_threads(args.threads)
    except ImportError:
        log("compare: torch is not installed (Debian: apt-get install python3-torch python3-numpy); "
            "skipping Opacus")
    if torch is not None and not (args.opacus and os.path.isdir(os.path.join(args.opacus, "opacus"))):
        log("compare: no Opacus checkout given (--opacus DIR or OPACUS_DIR); skipping Opacus. Get one with:\n"
            "    git clone --branch v1.4.0 https://github.com/pytorch/opacus DIR")
        torch = None
    if torch is not None:
        opacus = import_opacus(os.path.abspath(args.opacus))
        torch.ones(64, 64) @ torch.ones(64, 64)
        log(f"compare: Opacus {opacus.__version__}, torch {torch.__version__}, {torch.get_num_threads()} "
            f"thread(s), BLAS {loaded_blas()}")
        torch.manual_seed(7)
        images = torch.rand(2048, 1, 28, 28)
        labels = torch.randint(0, 10, (2048,))
        log("compare: Opacus lenet/370 ...")
        rows[0][3], lenet_mode = best_opacus_rate(torch, opacus, lambda: lenet(torch), images, labels,
                                                  torch.nn.CrossEntropyLoss(reduction="sum"), 370, args.seconds,
                                                  1.0, args.threads)
        rows[0][0] += f" [Opacus {lenet_mode}]"
        if a9a_rate is not None and os.path.exists(args.a9a):
            log("compare: Opacus logistic_a9a/26 ...")
            x, y = load_a9a(torch, args.a9a)
            rows[1][3], a9a_mode = best_opacus_rate(torch, opacus, lambda: torch.nn.Linear(123, 1), x, y,
                                                    torch.nn.BCEWithLogitsLoss(reduction="sum"), 26,
                                                    args.seconds, 0.1, args.threads)
            rows[1][0] += f" [Opacus {a9a_mode}]"
        if epoch is not None and lenet_mode is not None:
            log(f"compare: Opacus one DP epoch (grad_sample_mode={lenet_mode}) ...")
            rows[2][3] = opacus_epoch_seconds(torch, opacus, args.fashion_mnist, args.threads, lenet_mode)

    basis = "CPU time" if args.threads == 1 else "wall time"
    print(f"{args.threads} thread(s), {basis}")
    print(f"{'workload':44} {'unit':11} {'asyncdp':>12} {'Opacus':>12} {'asyncdp/Opacus':>15}")
    for name, unit, ours, theirs in rows:
        if ours is None:
            continue
        ratio = ""
        if theirs is not None:
            speedup = theirs / ours if unit == "seconds" else ours / theirs
            ratio = f"{speedup:.1f}x"
        theirs_text = "skipped" if theirs is None else f"{theirs:12.4g}"
        print(f"{name:44} {unit:11} {ours:12.4g} {theirs_text:>12} {ratio:>15}")


if __name__ == "__main__":
    main()
