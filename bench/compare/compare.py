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
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FASHION = "/usr/share/datasets/fashion-mnist"

# The two other sides live beside this script (bench/compare/): the environment of the torch side's BLAS, and
# the torch and Opacus workloads.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from openblas_anchor import (asyncdp_environment, cpu_model, loaded_blas, openblas_core,  # noqa: E402
                             overrides_text, reexec_with_openblas)
from torch_side import (TORCH_ENGINES, best_opacus_rate, check_clipped_sums, import_opacus,  # noqa: E402
                        is_opacus_checkout, lenet, load_a9a, log, opacus_epoch_seconds, torch_clipped_sum_rate)


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


def _positive(kind):
    """An argparse type: a number of ``kind`` > 0 (0 threads or a negative budget would not time anything)."""
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a positive {kind.__name__}, got '{text}'") from None
        if not value > 0 or value == float("inf"):
            raise argparse.ArgumentTypeError(f"expected a positive {kind.__name__}, got '{text}'")
        return value
    return parse


# What --check does not read: given with it, each is refused rather than ignored.
NOT_READ_BY_CHECK = ("build", "seconds", "fashion_mnist", "skip_epoch")


def parse(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--opacus", default=os.environ.get("OPACUS_DIR", ""),
                        help="path of a local Opacus checkout (see the module docstring); empty = skip Opacus")
    parser.add_argument("--build", default=os.path.join(REPO, "build", "release"), help="asyncdp build directory")
    parser.add_argument("--threads", type=_positive(int), default=1, help="threads for all (torch and model.threads)")
    parser.add_argument("--seconds", type=_positive(float), default=3.0, help="timing budget per clipped-sum row")
    parser.add_argument("--fashion-mnist", default=FASHION, help="directory of the Fashion-MNIST IDX files")
    parser.add_argument("--a9a", default=os.path.join(REPO, "..", "shared", "datasets", "libsvm", "a9a.gz"))
    parser.add_argument("--skip-epoch", action="store_true", help="skip the one-epoch runs")
    parser.add_argument("--keep-openblas-overrides", action="store_true",
                        help="leave OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE set for torch (to measure what they cost)")
    parser.add_argument("--check", action="store_true",
                        help="only check the torch clipped sums, and with --opacus each Opacus engine's, "
                             "against a per-example loop, then exit")
    args = parser.parse_args(argv)
    if args.check:
        for dest in NOT_READ_BY_CHECK:
            if getattr(args, dest) != parser.get_default(dest):
                parser.error(f"--{dest.replace('_', '-')} is not read by --check (it checks the clipped sums only)")
    return args


def main():
    args = parse()
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
