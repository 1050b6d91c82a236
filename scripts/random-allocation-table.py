#!/usr/bin/env python3
"""The random-allocation table of docs/random_allocation.md §8, from `asyncdp account`.

For every cell of sigma x m x E x delta (k = 1, p0 = 1) it runs
  asyncdp account --sampling random_allocation --sigma S --steps M --windows E --delta D
and prints one markdown row: the reported epsilon (an upper bound), the certified lower bound on the true
epsilon beside it, their ratio, our Poisson PLD at rate 1/m over m E rounds and the command's wall seconds.

  scripts/random-allocation-table.py [--asyncdp build/release/asyncdp]
"""
import argparse
import itertools
import json
import subprocess
import time

SIGMAS = [0.8, 1, 2, 4, 8]
STEPS = [10, 100, 1000]
WINDOWS = [1, 10, 100]
DELTAS = [1e-5, 1e-6]


def fmt(x):
    return "inf" if x is None else f"{x:.4g}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--asyncdp", default="build/release/asyncdp")
    args = parser.parse_args()
    print("| σ | m | E | δ | **reported (upper)** | certified lower | upper / lower | Poisson 1/m PLD "
          "| upper / Poisson | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    worst = 1.0
    for sigma, m, windows, delta in itertools.product(SIGMAS, STEPS, WINDOWS, DELTAS):
        start = time.monotonic()
        out = subprocess.run([args.asyncdp, "account", "--sampling", "random_allocation", "--sigma", str(sigma),
                              "--steps", str(m), "--windows", str(windows), "--delta", str(delta)],
                             check=True, capture_output=True, text=True).stdout
        seconds = time.monotonic() - start
        r = json.loads(out)
        upper = r["random_allocation"]["epsilon"]
        lower = r["random_allocation"]["lower_bound"]["epsilon"]
        poisson = r["poisson"]["pld"]["epsilon"]
        ratio = upper / lower if upper is not None and lower else None
        if ratio is not None:
            worst = max(worst, ratio)
        print(f"| {sigma:g} | {m} | {windows} | {delta:.0e} | **{fmt(upper)}** | {fmt(lower)} | "
              f"{'' if ratio is None else f'{ratio:.4f}'} | {fmt(poisson)} | "
              f"{'' if upper is None or poisson is None else f'{upper / poisson:.3f}'} | {seconds:.2f} |")
    print(f"\nlargest upper / lower: {worst:.4f}")


if __name__ == "__main__":
    main()
