#!/usr/bin/env python3
"""Noise sweep: train the Table 3 model (L2-regularised logistic regression on a9a, 5 asynchronous
clients) at several noise multipliers sigma and plot test accuracy against the epsilon each run spent.

    PYTHONPATH=build/release/python python3 examples/sigma_sweep.py --out sigma_sweep.png

Each point is one asyncdp.train run (the same simulator as `asyncdp train`); epsilon is the run's PLD
upper bound at delta = 1/N_c. The right panel shows epsilon(sigma) for the same schedule from
asyncdp.account, i.e. the privacy side of the trade-off on its own.
"""

import argparse
import pathlib

import matplotlib

matplotlib.use("Agg")  # headless: write a PNG, never open a window
import matplotlib.pyplot as plt  # noqa: E402

import asyncdp  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sigmas", type=float, nargs="+", default=[2.0, 4.0, 8.0, 19.29962])
    parser.add_argument("--data-dir", type=pathlib.Path, default=REPO.parent / "shared" / "datasets" / "libsvm")
    parser.add_argument("--rows-per-client", type=int, default=0, help="0 = the whole a9a split")
    parser.add_argument("--epochs", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("sigma_sweep.png"))
    args = parser.parse_args()

    runs = []
    for sigma in args.sigmas:
        run = asyncdp.train(REPO / "experiments" / "table3_strongly_convex.toml",
                            data={"train": str(args.data_dir / "a9a.gz"), "test": str(args.data_dir / "a9a.t.gz"),
                                  "rows_per_client": args.rows_per_client},
                            schedule={"epochs": args.epochs}, dp={"sigma": sigma}, seed=args.seed)
        epsilon = run.summary["epsilon"]["pld"]
        runs.append((sigma, epsilon, run.summary["test_accuracy"], run))
        print(f"sigma={sigma:<10.6g} epsilon(pld)={epsilon:<10.4g} test_accuracy={run.summary['test_accuracy']:.4f}")

    # The same schedule accounted on its own, on a finer sigma grid (q = s / N_c, T rounds per client).
    first = runs[0][3].summary
    q = first["sample_size"] / first["records_per_client"]
    steps = first["rounds_per_client"][0]
    delta = first["delta"]
    grid = [args.sigmas[0] * (args.sigmas[-1] / args.sigmas[0]) ** (i / 15) for i in range(16)]
    curve = [asyncdp.account(q=q, sigma=s, steps=steps, delta=delta, accountant="all") for s in grid]

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.plot([r[1] for r in runs], [r[2] for r in runs], "o-")
    for sigma, epsilon, accuracy, _ in runs:
        left.annotate(f"σ={sigma:.3g}", (epsilon, accuracy), textcoords="offset points", xytext=(4, -10))
    left.set_xscale("log")
    left.set_xlabel("ε (PLD upper bound)")
    left.set_ylabel("test accuracy")
    left.set_title("Table 3 model: accuracy vs privacy")
    for name, style in (("pld", "-"), ("rdp", "--"), ("gdp", ":")):
        right.plot(grid, [getattr(c, name).epsilon for c in curve], style, label=name)
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("noise multiplier σ")
    right.set_ylabel(f"ε at δ = {delta:.3g}")
    right.set_title(f"q = {q:.4g}, T = {steps}")
    right.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
