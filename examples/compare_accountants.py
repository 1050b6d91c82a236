#!/usr/bin/env python3
"""Accountant comparison for one heterogeneous schedule: epsilon after each phase under RDP, PLD (upper
and lower bound) and GDP (a CLT approximation, not a guarantee), as a table and a plot.

    PYTHONPATH=build/release/python python3 examples/compare_accountants.py --out accountants.png

The schedule is a list of (q, sigma, count) phases: here a decreasing-noise plan, the shape the
Proactive-DP paper's multi-phase calculator produces. Pass --schedule FILE.csv for your own (the CLI's
`asyncdp account --schedule` format: q,sigma[,count] per line).
"""

import argparse
import pathlib

import matplotlib

matplotlib.use("Agg")  # headless: write a PNG, never open a window
import matplotlib.pyplot as plt  # noqa: E402

import asyncdp  # noqa: E402

DEFAULT_SCHEDULE = [(0.01, 2.0, 2000), (0.01, 1.5, 2000), (0.02, 1.2, 1000), (0.02, 1.0, 1000)]


def read_schedule(path):
    groups = []
    for line in pathlib.Path(path).read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line or line[0].isalpha():
            continue  # blank, comment or header
        fields = [f.strip() for f in line.split(",")]
        groups.append((float(fields[0]), float(fields[1]), int(fields[2]) if len(fields) > 2 else 1))
    return groups


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--schedule", type=pathlib.Path, help="CSV of q,sigma[,count] phases")
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--sampling", default="poisson", choices=["poisson", "fixed", "shuffle"])
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("accountants.png"))
    args = parser.parse_args()
    schedule = read_schedule(args.schedule) if args.schedule else DEFAULT_SCHEDULE

    rounds, rows = [], []
    for end in range(1, len(schedule) + 1):
        result = asyncdp.account(schedule=schedule[:end], delta=args.delta, accountant="all",
                                 sampling=args.sampling)
        rounds.append(result.steps)
        rows.append(result)
    print(f"sampling={rows[0].sampling} neighbors={rows[0].neighbors} delta={args.delta:g}")
    print(f"{'rounds':>8} {'rdp':>10} {'pld':>10} {'pld_lower':>10} {'gdp (approx.)':>14}")
    for t, r in zip(rounds, rows):
        print(f"{t:>8} {r.rdp.epsilon:>10.4f} {r.pld.epsilon:>10.4f} {r.pld.epsilon_lower:>10.4f} "
              f"{r.gdp.epsilon:>14.4f}")
    for name in ("rdp", "pld", "gdp"):
        print(f"{name}: {rows[-1].accountants()[name].bound}: {rows[-1].accountants()[name].method}")

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(rounds, [r.rdp.epsilon for r in rows], "s--", label="RDP (upper bound)")
    ax.plot(rounds, [r.pld.epsilon for r in rows], "o-", label="PLD (upper bound)")
    ax.plot(rounds, [r.pld.epsilon_lower for r in rows], "o:", label="PLD (lower bound)")
    ax.plot(rounds, [r.gdp.epsilon for r in rows], "^:", label="GDP (CLT approximation)")
    ax.set_xlabel("rounds")
    ax.set_ylabel(f"ε at δ = {args.delta:g}")
    ax.set_title("ε after each phase of the schedule")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
