"""The torch and Opacus sides of bench/compare/compare.py (its docstring says what each row computes and
how it is timed): LeNet-5 and logistic regression as torch modules, their per-example clipped gradient sums
with functorch and ExpandedWeights, Opacus's engines and its DP epoch, and --check's comparison of each with
a per-example loop. torch and Opacus are passed in (or imported inside), so importing this needs neither."""

import gzip
import importlib.util
import os
import statistics
import struct
import sys
import time
import types

OPACUS_MODES = ["hooks", "ew", "functorch"]


def log(message):
    print(message, file=sys.stderr, flush=True)


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
