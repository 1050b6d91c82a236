#!/usr/bin/env python3
"""Side by side with the anchors: the same DP-SGD workloads timed in asyncdp, in plain PyTorch and in
Opacus, on this machine, in one run, with the ratios.

Workloads (one thread each by default, --threads to change):
  lenet/370        per-example clipped gradient sum of LeNet-5, a batch of 370 28x28 images
                   (cross entropy, loss reduction "sum", C = 1)
  logistic_a9a/26  the same for logistic regression on a9a (d = 123, torch.nn.Linear(123, 1), BCE with
                   logits), a batch of 26, C = 0.1
  lenet_dp_epoch   one DP-SGD epoch of LeNet-5 over Fashion-MNIST's 60,000 training images
                   (Poisson sampling, expected batch 370, sigma = 1, C = 1), end to end (Opacus only)

asyncdp side: Google Benchmark rows of build/release/bench/asyncdp_bench (BM_ClippedGradSum/...) and a
`build/release/asyncdp train` run.

torch side (needs torch only, no Opacus): per-example gradients with functorch, torch 1.13's API --
functorch.vmap(functorch.grad(loss of one example)) over functorch.make_functional's parameters, forward
included -- then each example's gradient clipped to norm C and the clipped gradients summed, with
Opacus's clipping formula (DPOptimizer.clip_and_accumulate: factor min(1, C / (norm + 1e-6))). This is
the computation of Opacus's grad_sample_mode="functorch" engine (which vmaps functorch.grad over each
trainable layer inside backward hooks, after an ordinary backward pass; here it is one pass over the
whole model). Opacus adds its GradSampleModule wrapper, that ordinary backward pass and DPOptimizer on
top, so the torch column is a lower bound on Opacus's cost with the same engine: asyncdp/Opacus >=
asyncdp/torch for the functorch engine (the Opacus column is Opacus's fastest engine, which may be
another one). Extra rows "[torch ew]" do the same with torch's hooks-free ExpandedWeights
(torch.nn.utils._per_sample_grad.call_for_per_sample_grads), the engine under Opacus's
grad_sample_mode="ew", so they bound that engine the same way.

Opacus side: its per-example gradient wrapper + DPOptimizer's clip_and_accumulate for the clipped sums
(loss reduction "sum", as asyncdp), PrivacyEngine.make_private for the epoch. Each of Opacus's
per-example gradient engines (grad_sample_mode hooks, ew = expanded weights, functorch) is tried and the
fastest is compared (and named in the table); the epoch uses LeNet's fastest.

--check compares both torch clipped sums with a plain loop (autograd one example at a time, clip, sum)
on a few examples and exits; with --opacus it also checks each of Opacus's engines the same way, set up
exactly as the timed Opacus rows are (the clipped sum DPOptimizer.clip_and_accumulate leaves in each
parameter's summed_grad). An engine this Opacus/torch pair does not support is logged and skipped.

Requirements: Debian's python3-torch (apt-get install python3-torch python3-numpy), which is installed
for the system interpreter only: run the script with /usr/bin/python3 (or any interpreter that imports
python3-torch's torch), not with a pyenv/venv python3 that comes first on PATH. For the Opacus column,
also a local Opacus source checkout passed with --opacus (Opacus is not packaged for Debian). With
bookworm's torch 1.13 use Opacus v1.4.0, the last release that supports it:
    git clone --branch v1.4.0 https://github.com/pytorch/opacus /path/to/opacus
Opacus imports opt_einsum; when that package is missing, a stand-in that forwards to torch.einsum is
installed (same contraction, chosen by torch instead of opt_einsum's path optimiser; the products here
have two operands, so there is nothing to optimise). Without torch the asyncdp side still runs and the
torch and Opacus columns are skipped; without --opacus the Opacus column is skipped (exit status 0).

Timing: with one thread (the default) all sides are timed in CPU seconds of the process (Google
Benchmark's default for asyncdp's rows; time.process_time for torch and Opacus; user + system time of
the `asyncdp train` child), so a machine shared with other work does not skew the ratio; with
--threads > 1 all sides are timed in wall seconds.

BLAS: Debian's torch calls the system BLAS, which is the unoptimised reference (netlib) one unless
another is selected; per-example gradients are BLAS products, so that would flatter asyncdp. When
OpenBLAS is installed (apt-get install libopenblas0-pthread) and torch is importable, the script
re-executes itself with OpenBLAS first on LD_LIBRARY_PATH (as many threads as --threads), so torch loads it instead of the
reference BLAS, and it prints the BLAS library torch actually loaded, the kernel set OpenBLAS chose
(openblas_get_corename) and the CPU model. Hosts that set OPENBLAS_CORETYPE or OPENBLAS_L2_SIZE pin OpenBLAS
to another CPU's kernels; the torch side runs without them (the header says what was unset), the asyncdp
processes with them (Eigen ignores them). Where OpenBLAS by itself falls back to kernels older than AVX2
on a CPU with AVX2 or AVX-512 (a CPU its table does not know: 0.3.21 chose Prescott on an Intel Xeon of
family 6 model 207), the torch side gets OPENBLAS_CORETYPE set to the kernels the CPU's flags allow
(Cooperlake, SkylakeX or Haswell), and the header says so.

Usage: /usr/bin/python3 bench/compare/compare.py [--opacus /path/to/opacus] [--build build/release]
           [--threads 1] [--check]
"""

import argparse
import gzip
import importlib.util
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
    """Median items_per_second of one Google Benchmark row. The row's name may carry suffixes after
    `name` (the two-thread rows are ".../370/process_time/real_time")."""
    out = subprocess.run(
        [bench, f"--benchmark_filter=^BM_ClippedGradSum/{name}(/|$)", "--benchmark_format=json",
         f"--benchmark_repetitions={repetitions}", f"--benchmark_min_time={min_time}"],
        check=True, capture_output=True, text=True, env=asyncdp_environment()).stdout
    # No matching row: Google Benchmark prints nothing on stdout (and says so on stderr).
    rows = [b for b in json.loads(out)["benchmarks"] if b.get("run_type") == "iteration"] if out.strip() else []
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
                       capture_output=True, env=asyncdp_environment())
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return cpu if threads == 1 else wall


# ----------------------------------------------------------------------------------------------------
# Opacus side
# ----------------------------------------------------------------------------------------------------

def import_opacus(path):
    if importlib.util.find_spec("opt_einsum") is None:
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


def is_opacus_checkout(path):
    """True if `path` (--opacus) is a directory holding Opacus's package."""
    return bool(path) and os.path.isdir(os.path.join(path, "opacus"))


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


def median_rate(step, batch, seconds, threads):
    """Examples/s of step(i) (one batch of `batch` examples) from the median time of its calls: 3 warm-up
    calls, then calls for `seconds` (at least 5), timed with clock(threads). Shared by the torch and the
    Opacus rows so both are timed alike."""
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


def opacus_clipped_sum_fn(torch, model, loss, clip, batch, mode):
    """A function (x, y) -> Opacus's clipped gradient sum (a list, one tensor per parameter of `model`):
    zero_grad, forward, backward with Opacus's per-example gradient engine `mode`, then
    DPOptimizer.clip_and_accumulate, which stores the clipped sum in each parameter's `summed_grad`
    (noise 0, loss reduction "sum", as asyncdp; `batch` is DPOptimizer's expected batch size, which only
    reduction "mean" uses). The one Opacus setup of both the timed rows and --check. Wraps `model` in
    place (hooks and functorch attach hooks to it), so give it a model of its own. Raises if this
    Opacus/torch pair does not support `mode`."""
    from opacus.grad_sample import wrap_model
    from opacus.optimizers import DPOptimizer
    module = wrap_model(model, grad_sample_mode=mode, batch_first=True, loss_reduction="sum")
    optimizer = DPOptimizer(torch.optim.SGD(module.parameters(), lr=0.0), noise_multiplier=0.0,
                            max_grad_norm=clip, expected_batch_size=batch, loss_reduction="sum")
    params = list(model.parameters())  # the optimizer's: Opacus's wrappers keep the model's parameters

    def clipped_sum(x, y):
        optimizer.zero_grad(set_to_none=True)  # also sets summed_grad to None: one batch's sum, not a total
        loss(module(x), y).backward()
        optimizer.clip_and_accumulate()
        return [p.summed_grad for p in params]

    return clipped_sum


def opacus_clipped_sum_rate(torch, opacus, model, x, y, loss, batch, seconds, clip, threads, mode):
    """Examples/s of forward + per-example backward + clip + sum (DPOptimizer.clip_and_accumulate), with
    Opacus's per-example gradient engine `mode`."""
    clipped_sum = opacus_clipped_sum_fn(torch, model, loss, clip, batch, mode)
    generator = torch.Generator().manual_seed(11)
    batches = [torch.randint(0, x.shape[0], (batch,), generator=generator) for _ in range(16)]

    def step(i):
        rows = batches[i % len(batches)]
        clipped_sum(x[rows], y[rows])

    return median_rate(step, batch, seconds, threads)


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
# torch side: the same clipped sums in plain PyTorch, no Opacus (lower bounds on Opacus's engines)
# ----------------------------------------------------------------------------------------------------

TORCH_ENGINES = ["functorch", "ew"]


def clip_and_sum(torch, per_example, clip):
    """Sum over examples of per-example gradients (one tensor per parameter, examples first) clipped to
    total norm `clip`, with DPOptimizer.clip_and_accumulate's formula, so torch and Opacus clip alike."""
    norms = torch.stack([g.reshape(len(g), -1).norm(2, dim=-1) for g in per_example], dim=1).norm(2, dim=1)
    factor = (clip / (norms + 1e-6)).clamp(max=1.0)
    return [torch.einsum("i,i...", factor, g) for g in per_example]


def torch_clipped_sum_fn(torch, engine, model, loss, clip):
    """A function (x, y) -> clipped gradient sum (a list, one tensor per parameter of `model`): forward,
    per-example gradients with `engine`, clip, sum. `loss` has reduction "sum", so an example's gradient
    is the gradient of its own loss."""
    if engine == "functorch":
        import functorch
        # No autograd graph around the parameters: as in Opacus, where the vmapped grads run inside the
        # backward pass (grad mode off); tracking would add a graph that nothing uses.
        fmodel, params = functorch.make_functional(model, disable_autograd_tracking=True)

        def example_loss(params, xi, yi):
            return loss(fmodel(params, xi.unsqueeze(0)), yi.unsqueeze(0))

        per_example = functorch.vmap(functorch.grad(example_loss), in_dims=(None, 0, 0))
        return lambda x, y: clip_and_sum(torch, per_example(params, x, y), clip)
    if engine == "ew":
        # torch's ExpandedWeights: no module hooks; backward fills param.grad_sample (not param.grad).
        from torch.nn.utils._per_sample_grad import call_for_per_sample_grads
        forward = call_for_per_sample_grads(model, loss_reduction="sum")
        params = list(model.parameters())

        def clipped_sum(x, y):
            for p in params:
                p.grad_sample = None  # ExpandedWeights accumulates into an existing grad_sample
            loss(forward(x), y).backward()
            return clip_and_sum(torch, [p.grad_sample for p in params], clip)

        return clipped_sum
    raise ValueError(f"unknown torch engine {engine}")


def torch_clipped_sum_rate(torch, engine, model, x, y, loss, batch, seconds, clip, threads):
    """Examples/s of forward + per-example gradients + clip + sum in plain torch with `engine`, on the
    same kind of random batches as the Opacus rows; None if this torch lacks the engine."""
    try:
        clipped_sum = torch_clipped_sum_fn(torch, engine, model, loss, clip)
    except ImportError as error:
        log(f"compare:   torch {engine}: unavailable ({error})")
        return None
    generator = torch.Generator().manual_seed(11)
    batches = [torch.randint(0, x.shape[0], (batch,), generator=generator) for _ in range(16)]

    def step(i):
        rows = batches[i % len(batches)]
        clipped_sum(x[rows], y[rows])

    rate = median_rate(step, batch, seconds, threads)
    log(f"compare:   torch {engine}: {rate:.4g} examples/s")
    return rate


def loop_clipped_sum(torch, model, loss, x, y, clip):
    """The reference: autograd on one example at a time, its gradient clipped to norm `clip` (min(1,
    clip / norm)), the clipped gradients summed."""
    params = list(model.parameters())
    total = [torch.zeros_like(p) for p in params]
    for i in range(len(x)):
        model.zero_grad(set_to_none=True)
        loss(model(x[i:i + 1]), y[i:i + 1]).backward()
        norm = torch.sqrt(sum((p.grad ** 2).sum() for p in params)).item()
        factor = min(1.0, clip / norm)
        for t, p in zip(total, params):
            t += factor * p.grad
    model.zero_grad(set_to_none=True)
    return total


def check_clipped_sums(torch, a9a, opacus=None):
    """--check: each torch engine's clipped sum and, with `opacus` (the imported module, from --opacus),
    each of Opacus's engines' (opacus_clipped_sum_fn, as timed) against loop_clipped_sum on a few
    examples, with the workloads' clip norm (clipping active) and with a huge one (nothing clipped: the
    plain sum). An engine that raises is logged as unavailable and skipped. True if all that ran agree to
    rtol 1e-4.

    Opacus and clip_and_sum clip with C / (norm + 1e-6) where the loop uses C / norm: for a clipped
    example (norm > C) the factors differ by a relative 1e-6 / (norm + 1e-6) < 1e-6 / C, at most 1e-5 at
    the smallest C here (0.1), well inside rtol 1e-4; unclipped examples get factor 1 on both sides."""
    torch.manual_seed(3)
    images, labels = torch.rand(8, 1, 28, 28), torch.randint(0, 10, (8,))
    if os.path.exists(a9a):
        x, y = load_a9a(torch, a9a)
        rows = torch.arange(0, 26 * 8, 26)  # 8 examples spread over the file
        features, targets = x[rows], y[rows]
    else:
        log(f"compare: {a9a} not found; checking logistic regression on random binary rows")
        features = (torch.rand(8, 123) < 0.11).float()
        targets = (torch.rand(8, 1) < 0.25).float()
    cases = [("lenet", lambda: lenet(torch), torch.nn.CrossEntropyLoss(reduction="sum"), images, labels, 1.0),
             ("logistic_a9a", lambda: torch.nn.Linear(123, 1), torch.nn.BCEWithLogitsLoss(reduction="sum"),
              features, targets, 0.1)]
    modes = OPACUS_MODES if opacus is not None else []
    # The engine column as wide as its widest entry ("torch functorch" without Opacus, as before).
    width = max(len(side) for side in [f"torch {e}" for e in TORCH_ENGINES] + [f"Opacus {m}" for m in modes])
    ok = True
    for name, make_model, loss, x, y, clip in cases:
        for c in (clip, 1e6):
            torch.manual_seed(5)
            model = make_model()
            # atol 0 would fail on entries that are 0 up to rounding (cancelling sums); 1e-6 of the
            # largest entry is far below what a wrong clip factor or a missing example would change.
            expected = loop_clipped_sum(torch, model, loss, x, y, c)
            scale = max(t.abs().max().item() for t in expected)

            def report(side, got):
                good = all(torch.allclose(g, e, rtol=1e-4, atol=1e-6 * scale) for g, e in zip(got, expected))
                # Relative error on the entries that are not rounding noise, absolute error in units of
                # the largest entry.
                relative = max((((g - e).abs() / e.abs())[e.abs() > 1e-3 * scale]).max().item()
                               for g, e in zip(got, expected))
                absolute = max((g - e).abs().max().item() for g, e in zip(got, expected)) / scale
                print(f"check {name:13} C = {c:<6g} {side:{width}} vs per-example loop: max relative error "
                      f"{relative:.1e} (entries > 1e-3 of the largest), max absolute {absolute:.1e} of the largest: "
                      f"{'ok' if good else 'MISMATCH'}")
                return good

            for engine in TORCH_ENGINES:
                try:
                    got = torch_clipped_sum_fn(torch, engine, model, loss, c)(x, y)
                except ImportError as error:
                    log(f"compare: check {name} torch {engine}: unavailable ({error})")
                    continue
                ok = report(f"torch {engine}", got) and ok
            for mode in modes:
                # A model of its own with the same weights: wrap_model hooks into the module it is given.
                own = make_model()
                own.load_state_dict(model.state_dict())
                try:
                    got = opacus_clipped_sum_fn(torch, own, loss, c, len(x), mode)(x, y)
                except Exception as error:  # an engine this Opacus/torch pair does not support
                    log(f"compare: check {name} Opacus {mode}: unavailable ({type(error).__name__}: {error})")
                    continue
                ok = report(f"Opacus {mode}", got) and ok
    return ok


# ----------------------------------------------------------------------------------------------------

# Variables some hosts set that pin OpenBLAS to another CPU's kernels or cache size (seen: OPENBLAS_CORETYPE=
# Haswell, OPENBLAS_L2_SIZE=512 on an AVX-512 Xeon); with them torch runs slower than this CPU allows and
# every ratio against it is inflated. They are unset for the torch side only (this process after the
# re-exec) and given back to the asyncdp processes, whose Eigen kernels never read them.
OPENBLAS_OVERRIDES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
SAVED_PREFIX = "ASYNCDP_COMPARE_SAVED_"
FORCED_CORE = "ASYNCDP_COMPARE_FORCED_CORE"

# OpenBLAS's fallback kernel sets, older than AVX2. On a CPU its table does not know, OpenBLAS picks one of
# these whatever the CPU can do: 0.3.21 (Debian 12) chose Prescott (SSE3) on an Intel Xeon of family 6
# model 207 (Emerald Rapids, AVX-512; 2026-12-04), which would slow torch and inflate every ratio.
PRE_AVX2_CORES = {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Katmai", "Coppermine", "Northwood",
                  "Banias", "Atom", "Sandybridge"}


def cpu_flags():
    """The flags of /proc/cpuinfo's first CPU (empty where there is none)."""
    try:
        with open("/proc/cpuinfo") as info:
            return next((line.split(":", 1)[1].split() for line in info if line.startswith("flags")), [])
    except OSError:
        return []


def best_openblas_core(flags):
    """The OpenBLAS kernel set CPU flags `flags` allow (an OPENBLAS_CORETYPE name), or None."""
    if "avx512f" in flags:
        return "Cooperlake" if "avx512_bf16" in flags else "SkylakeX"
    if "avx2" in flags and "fma" in flags:
        return "Haswell"
    return None


def detected_openblas_core(directory, env):
    """The kernel set OpenBLAS in `directory` chooses by itself under `env` (a fresh interpreter, so this
    process loads no BLAS before its re-exec), or None."""
    probe = ("import ctypes, sys; f = ctypes.CDLL(sys.argv[1]).openblas_get_corename; "
             "f.restype = ctypes.c_char_p; print(f().decode())")
    library = os.path.join(directory, "libopenblas.so.0")
    try:
        out = subprocess.run([sys.executable, "-c", probe, library], env=env, capture_output=True, text=True,
                             timeout=60, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def reexec_with_openblas(threads, keep_overrides=False):
    """Re-executes this script for the torch side: OpenBLAS first on LD_LIBRARY_PATH if installed, with as
    many OpenBLAS threads as the comparison's --threads (torch's BLAS calls get the same cores as its other
    kernels and as asyncdp), and without OPENBLAS_OVERRIDES (kept aside for asyncdp_environment)."""
    if os.environ.get("ASYNCDP_COMPARE_BLAS"):
        return
    env = dict(os.environ, ASYNCDP_COMPARE_BLAS="system")
    for name in OPENBLAS_OVERRIDES if not keep_overrides else ():
        if name in env:
            env[SAVED_PREFIX + name] = env.pop(name)
    for directory in OPENBLAS_DIRS:
        if os.path.exists(os.path.join(directory, "libblas.so.3")):
            env.update(ASYNCDP_COMPARE_BLAS=directory, OPENBLAS_NUM_THREADS=str(threads),
                       LD_LIBRARY_PATH=directory + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""))
            if "OPENBLAS_CORETYPE" not in env:
                # OpenBLAS's own choice, unless it fell back to kernels older than this CPU's: then the
                # kernels the CPU's flags allow (named in the header), so torch is not slowed by a table
                # that predates the CPU.
                detected, best = detected_openblas_core(directory, env), best_openblas_core(cpu_flags())
                if detected in PRE_AVX2_CORES and best is not None:
                    env["OPENBLAS_CORETYPE"] = best
                    env[FORCED_CORE] = f"OPENBLAS_CORETYPE={best} for torch: OpenBLAS chose {detected} by itself"
            break
    else:
        log("compare: OpenBLAS not installed (apt-get install libopenblas0-pthread); torch uses the system BLAS")
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def asyncdp_environment():
    """The environment the asyncdp processes run in: the caller's, OPENBLAS_OVERRIDES included."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(SAVED_PREFIX) and k != FORCED_CORE}
    if FORCED_CORE in os.environ:
        env.pop("OPENBLAS_CORETYPE", None)  # set for torch only
    for name in OPENBLAS_OVERRIDES:
        if SAVED_PREFIX + name in os.environ:
            env[name] = os.environ[SAVED_PREFIX + name]
    return env


def overrides_text():
    """What the torch side unset, for the header."""
    unset = [f"{name}={os.environ[SAVED_PREFIX + name]}" for name in OPENBLAS_OVERRIDES
             if SAVED_PREFIX + name in os.environ]
    kept = [f"{name}={os.environ[name]}" for name in OPENBLAS_OVERRIDES if name in os.environ]
    forced = os.environ.get(FORCED_CORE)
    if kept and not forced:
        return "KEPT for torch (--keep-openblas-overrides): " + ", ".join(kept)
    text = "unset for torch: " + ", ".join(unset) if unset else "no OpenBLAS overrides were set"
    return f"{text}; {forced}" if forced else text


def cpu_model():
    """The CPU model of /proc/cpuinfo (BENCHMARKS.md records it beside every figure)."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def openblas_core():
    """The kernel set OpenBLAS chose in this process (openblas_get_corename of the mapped library; else
    threadpoolctl's report), or why there is none."""
    import ctypes
    with open("/proc/self/maps") as maps:
        paths = sorted({line.split()[-1] for line in maps if "blas" in line.split()[-1]})
    for path in paths:
        try:
            corename = ctypes.CDLL(path).openblas_get_corename
        except (OSError, AttributeError):
            continue
        corename.restype = ctypes.c_char_p
        return corename().decode()
    try:
        from threadpoolctl import threadpool_info
        for pool in threadpool_info():
            if pool.get("internal_api") == "openblas":
                return str(pool.get("architecture"))
    except ImportError:
        pass
    return "not OpenBLAS"


def loaded_blas():
    """The BLAS shared library this process has mapped (after torch ran a product)."""
    with open("/proc/self/maps") as maps:
        names = {line.split()[-1] for line in maps if "blas" in line.split()[-1]}
    return ", ".join(sorted(names)) or "none mapped"


def torch_hint():
    """Why torch is missing and what to do, for the log: Debian's python3-torch is installed for the
    system interpreter only, and a pyenv/venv python3 first on PATH does not see it."""
    system = "/usr/bin/python3"
    probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is None)"
    if os.access(system, os.X_OK) and subprocess.run([system, "-c", probe], capture_output=True).returncode == 0:
        return f"{sys.executable} cannot import torch, but {system} can: run the script with {system}"
    return "torch is not installed (Debian: apt-get install python3-torch python3-numpy; then use /usr/bin/python3)"


def ratio_text(unit, ours, theirs):
    """asyncdp's speed-up over the other side ("" when the other side has no number)."""
    if not isinstance(theirs, float):
        return ""
    return f"{(theirs / ours if unit == 'seconds' else ours / theirs):.1f}x"


def value_text(value):
    """A measured number; "skipped" when that side could not run here; "-" when it is not measured for
    this row."""
    return "skipped" if value is None else value if isinstance(value, str) else f"{value:.4g}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--opacus", default=os.environ.get("OPACUS_DIR", ""),
                        help="path of a local Opacus checkout (see the module docstring); empty = skip Opacus")
    parser.add_argument("--build", default=os.path.join(REPO, "build", "release"), help="asyncdp build directory")
    parser.add_argument("--threads", type=int, default=1, help="threads for all (torch and model.threads)")
    parser.add_argument("--seconds", type=float, default=3.0, help="timing budget per clipped-sum row")
    parser.add_argument("--fashion-mnist", default=FASHION, help="directory of the Fashion-MNIST IDX files")
    parser.add_argument("--a9a", default=os.path.join(REPO, "..", "shared", "datasets", "libsvm", "a9a.gz"))
    parser.add_argument("--skip-epoch", action="store_true", help="skip the one-epoch runs")
    parser.add_argument("--keep-openblas-overrides", action="store_true",
                        help="leave OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE set for torch (to measure what they cost)")
    parser.add_argument("--check", action="store_true",
                        help="only check the torch clipped sums, and with --opacus each Opacus engine's, "
                             "against a per-example loop, then exit")
    args = parser.parse_args()
    # Without importing torch: the re-exec has to come before torch loads a BLAS.
    if importlib.util.find_spec("torch") is not None:
        reexec_with_openblas(args.threads, args.keep_openblas_overrides)

    torch = None
    try:
        import torch  # noqa: F811
        torch.set_num_threads(args.threads)
    except ImportError:
        log(f"compare: {torch_hint()}; skipping torch and Opacus")
    if args.check:
        if torch is None:
            sys.exit("compare: --check needs torch")
        torch.ones(64, 64) @ torch.ones(64, 64)
        print(f"{cpu_model()}; torch {torch.__version__}, BLAS {loaded_blas()}, OpenBLAS core {openblas_core()} "
              f"({overrides_text()})")
        opacus = None
        if is_opacus_checkout(args.opacus):
            opacus = import_opacus(os.path.abspath(args.opacus))
            print(f"Opacus {opacus.__version__} ({os.path.abspath(args.opacus)})")
        elif args.opacus:
            log(f"compare: {args.opacus} is not an Opacus checkout; checking torch only")
        sys.exit(0 if check_clipped_sums(torch, args.a9a, opacus) else 1)

    bench = os.path.join(args.build, "bench", "asyncdp_bench")
    cli = os.path.join(args.build, "asyncdp")
    for binary in (bench, cli):
        if not os.access(binary, os.X_OK):
            sys.exit(f"compare: {binary} not found; build first: cmake --preset release && "
                     "cmake --build --preset release")
    thread_suffix = "" if args.threads == 1 else f"_{args.threads}threads"

    log("compare: asyncdp clipped sums ...")
    lenet_rate = asyncdp_rate(bench, f"lenet{thread_suffix}/370", 3, args.seconds / 3)
    a9a_rate = asyncdp_rate(bench, "logistic_a9a/26", 3, args.seconds / 3) if args.threads == 1 else None
    epoch = None
    if not args.skip_epoch:
        log("compare: asyncdp one DP epoch ...")
        epoch = asyncdp_epoch_seconds(cli, args.threads, args.fashion_mnist)

    # Results by workload, None = skipped: {engine: examples/s} for torch; (examples/s, mode) for Opacus.
    torch_lenet, torch_a9a = {}, {}
    opacus_lenet = opacus_a9a = (None, None)
    opacus_epoch = None
    header = ""
    if torch is not None:
        torch.ones(64, 64) @ torch.ones(64, 64)
        header = (f"; torch {torch.__version__}, BLAS {loaded_blas()}, OpenBLAS core {openblas_core()} "
                  f"({overrides_text()})")
        log(f"compare: torch {torch.__version__}, {torch.get_num_threads()} thread(s), BLAS {loaded_blas()}, "
            f"OpenBLAS core {openblas_core()} ({overrides_text()})")
        torch.manual_seed(7)
        images = torch.rand(2048, 1, 28, 28)
        labels = torch.randint(0, 10, (2048,))
        lenet_loss = torch.nn.CrossEntropyLoss(reduction="sum")
        a9a_loss = torch.nn.BCEWithLogitsLoss(reduction="sum")
        a9a = load_a9a(torch, args.a9a) if a9a_rate is not None and os.path.exists(args.a9a) else None
        log("compare: torch lenet/370 ...")
        for engine in TORCH_ENGINES:
            torch_lenet[engine] = torch_clipped_sum_rate(torch, engine, lenet(torch), images, labels, lenet_loss,
                                                         370, args.seconds, 1.0, args.threads)
        if a9a is not None:
            log("compare: torch logistic_a9a/26 ...")
            for engine in TORCH_ENGINES:
                torch_a9a[engine] = torch_clipped_sum_rate(torch, engine, torch.nn.Linear(123, 1), *a9a, a9a_loss,
                                                           26, args.seconds, 0.1, args.threads)

        if not is_opacus_checkout(args.opacus):
            log("compare: no Opacus checkout given (--opacus DIR or OPACUS_DIR); skipping Opacus. Get one with:\n"
                "    git clone --branch v1.4.0 https://github.com/pytorch/opacus DIR")
        else:
            opacus = import_opacus(os.path.abspath(args.opacus))
            log(f"compare: Opacus {opacus.__version__}")
            log("compare: Opacus lenet/370 ...")
            opacus_lenet = best_opacus_rate(torch, opacus, lambda: lenet(torch), images, labels, lenet_loss, 370,
                                            args.seconds, 1.0, args.threads)
            if a9a is not None:
                log("compare: Opacus logistic_a9a/26 ...")
                opacus_a9a = best_opacus_rate(torch, opacus, lambda: torch.nn.Linear(123, 1), *a9a, a9a_loss, 26,
                                              args.seconds, 0.1, args.threads)
            lenet_mode = opacus_lenet[1]
            if epoch is not None and lenet_mode is not None:
                log(f"compare: Opacus one DP epoch (grad_sample_mode={lenet_mode}) ...")
                opacus_epoch = opacus_epoch_seconds(torch, opacus, args.fashion_mnist, args.threads, lenet_mode)

    # (workload, unit, asyncdp, torch, Opacus; larger is better except for seconds). The [torch ew] rows
    # are listed only when torch measured them; their Opacus number is in the row above.
    rows = []
    for name, ours, by_engine, (theirs, mode) in (("lenet/370 clipped sum", lenet_rate, torch_lenet, opacus_lenet),
                                                  ("logistic_a9a/26 clipped sum", a9a_rate, torch_a9a, opacus_a9a)):
        if ours is None:
            continue
        # mode None: Opacus not run, or none of its engines ran (best_opacus_rate's 0.0 is no rate).
        rows.append((name + (f" [Opacus {mode}]" if mode else ""), "examples/s", ours,
                     by_engine.get("functorch"), theirs if mode else None))
        if by_engine.get("ew") is not None:
            rows.append((name + " [torch ew]", "examples/s", ours, by_engine["ew"], "-"))
    if epoch is not None:
        rows.append(("lenet DP epoch (60k images)", "seconds", epoch, "-", opacus_epoch))

    basis = "CPU time" if args.threads == 1 else "wall time"
    print(f"{cpu_model()}; {args.threads} thread(s), {basis}{header}")
    print("torch = plain PyTorch, no Opacus: per-example gradients with functorch (vmap of grad; [torch ew] rows:")
    print("  ExpandedWeights), clipped, summed. A lower bound on Opacus's cost with the same engine (Opacus adds")
    print("  its wrapper and optimizer on top), so asyncdp/Opacus >= asyncdp/torch for that engine. Opacus = its")
    print("  fastest engine, named in the row. - = not measured for this row.")
    print(f"{'workload':44} {'unit':11} {'asyncdp':>12} {'torch (functorch)':>17} {'asyncdp/torch':>13} "
          f"{'Opacus':>12} {'asyncdp/Opacus':>15}")
    for name, unit, ours, torch_value, theirs in rows:
        print(f"{name:44} {unit:11} {ours:12.4g} {value_text(torch_value):>17} "
              f"{ratio_text(unit, ours, torch_value):>13} {value_text(theirs):>12} "
              f"{ratio_text(unit, ours, theirs):>15}")


if __name__ == "__main__":
    main()
