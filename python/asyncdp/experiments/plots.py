"""Figures drawn from tidy tables, so that every plot can be checked through the table beside it.

A line figure's table has one row per point of a series: ``panel, series, x, mean, low, high, n`` with
``kind = "curve"``, one row per baseline of a panel (``kind = "baseline"``, the value in ``mean``, x
empty): the majority-class rate, F(0) − F*, chance level, a client's target; and one row per marked event
(``kind = "event"``: a pause, a re-join, at (x, mean)). ``save`` writes ``plots/NAME.csv`` and then
``plots/NAME.png`` drawn from exactly that table; ``draw`` gives the matplotlib Figure (the tests read its
axes, labels and lines).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from .stats import mean_interval

COLUMNS = ["panel", "series", "kind", "x", "mean", "low", "high", "n"]


@dataclasses.dataclass(frozen=True)
class LineFigure:
    name: str                     # plots/NAME.png and plots/NAME.csv
    title: str
    xlabel: str
    ylabel: str
    logx: bool = False
    logy: bool = False
    note: str = ""                # e.g. "tiny scale: a smoke test, not a result" (shown under the title)
    bounds: tuple[float, float] | None = None  # the quantity's range (accuracy: 0, 1): intervals are clipped to it
    styles: tuple[tuple[str, str, str], ...] = ()  # (series, line style, colour) for reference curves
    markers: tuple[tuple[str, str], ...] = ()  # (series, matplotlib marker) of kind = "event" rows
    group_colors: tuple[tuple[str, str], ...] = ()  # (group, colour): events coloured by their "group" column


def curve_rows(panel: str, series: str, curves: Sequence[tuple[Sequence[float], Sequence[float]]]) -> list[dict]:
    """Rows of one series: the seeds' curves (x, y) averaged point by point (points at the same x) with a
    95% interval; ``n`` says how many seeds reached each point."""
    by_x: dict[float, list[float]] = {}
    for xs, ys in curves:
        for x, y in zip(xs, ys):
            by_x.setdefault(float(x), []).append(float(y))
    rows = []
    for x in sorted(by_x):
        iv = mean_interval(by_x[x])
        rows.append({"panel": panel, "series": series, "kind": "curve", "x": x, "mean": iv.mean, "low": iv.low,
                     "high": iv.high, "n": iv.n})
    return rows


def baseline_row(panel: str, label: str, value: float) -> dict:
    return {"panel": panel, "series": label, "kind": "baseline", "x": math.nan, "mean": value, "low": math.nan,
            "high": math.nan, "n": 0}


def _group_key(value) -> str:
    """A group read back from CSV (0 becomes 0.0 in a column with empty cells) as the text it was written as."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def table(rows: Iterable[dict]) -> pd.DataFrame:
    """The tidy table of a figure: COLUMNS, plus "group" when rows carry one (events of a client)."""
    rows = list(rows)
    extra = ["group"] if any("group" in r for r in rows) else []
    return pd.DataFrame(rows, columns=COLUMNS + extra)


def draw(spec: LineFigure, data: pd.DataFrame):
    """The figure of ``spec`` from its table: one axes per panel (in table order), a line per series with
    its interval as a band, each baseline as a dashed horizontal line; the legend below the axes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = list(dict.fromkeys(data["panel"]))
    cols = min(3, max(1, len(panels)))
    rows = math.ceil(len(panels) / cols)
    width = max(9.0, 5.2 * cols)  # a single panel is wide enough for its title and legend
    fig, axes = plt.subplots(rows, cols, figsize=(width, 3.9 * rows + 0.9), squeeze=False)
    series_order = list(dict.fromkeys(data.loc[data["kind"] == "curve", "series"]))
    colors = {s: plt.get_cmap("tab10")(i % 10) for i, s in enumerate(series_order)}
    handles = {}
    for ax, panel in zip(axes.flat, panels):
        part = data[data["panel"] == panel]
        for series in dict.fromkeys(part.loc[part["kind"] == "curve", "series"]):
            c = part[(part["series"] == series) & (part["kind"] == "curve")].sort_values("x")
            x, y = c["x"].to_numpy(float), c["mean"].to_numpy(float)
            lo, hi = c["low"].to_numpy(float), c["high"].to_numpy(float)
            if spec.logy or spec.logx:  # points at 0 have no place on a log axis: left out, not pinned to an edge
                keep = (y > 0 if spec.logy else np.isfinite(y)) & (x > 0 if spec.logx else np.isfinite(x))
                x, y, lo, hi = x[keep], y[keep], lo[keep], hi[keep]
            if spec.logy:
                lo = np.where(lo > 0, lo, y / 10)  # a band reaching 0 is drawn down to a decade below
            marker = "o" if len(x) <= 12 else None  # a short series (a grid, a single point) shows its points
            style = next(((ls, c) for name, ls, c in spec.styles if name == series), ("-", colors[series]))
            (line,) = ax.plot(x, y, color=style[1], ls=style[0], label=series, lw=1.4, marker=marker, ms=4)
            band = np.isfinite(lo) & np.isfinite(hi)
            if band.any():
                ax.fill_between(x[band], lo[band], hi[band], color=colors[series], alpha=0.18, lw=0)
            handles.setdefault(series, line)
        for series in dict.fromkeys(part.loc[part["kind"] == "event", "series"]):
            ev = part[(part["series"] == series) & (part["kind"] == "event")]
            marker = next((m for name, m in spec.markers if name == series), "o")
            if "group" in ev and spec.group_colors:  # e.g. a client's events in the colour of its target line
                colors_of = dict(spec.group_colors)
                color = [colors_of.get(_group_key(g), "0.3") for g in ev["group"]]
            else:
                color = next((c for name, _, c in spec.styles if name == series), None)
            points = ax.scatter(ev["x"], ev["mean"], marker=marker, s=46, zorder=5, label=series, c=color,
                                edgecolors="black", linewidths=0.4)
            handles.setdefault(series, points)
        for _, b in part[part["kind"] == "baseline"].iterrows():
            if math.isfinite(b["mean"]) and (not spec.logy or b["mean"] > 0):
                ls, color = next(((st, c) for name, st, c in spec.styles if name == b["series"]), ("--", "0.35"))
                line = ax.axhline(b["mean"], color=color, ls=ls, lw=1.1, label=b["series"])
                handles.setdefault(b["series"], line)
        ax.set_title(panel, fontsize=9)
        ax.set_xlabel(spec.xlabel)
        ax.set_ylabel(spec.ylabel)
        if spec.logx:
            ax.set_xscale("log")
        if spec.logy:
            ax.set_yscale("log")
        ax.grid(True, which="major", alpha=0.3)
        ax.margins(x=0.02, y=0.08)  # error bands stay inside the frame
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    title = spec.title + (f"\n{spec.note}" if spec.note else "")
    fig.suptitle(title, fontsize=11)
    fig.legend(list(handles.values()), list(handles.keys()), loc="lower center",
               ncol=min(4, max(1, len(handles))), fontsize=8, frameon=False)
    legend_rows = math.ceil(len(handles) / 4)
    fig.tight_layout(rect=(0, 0.045 * legend_rows + 0.02, 1, 0.95 if not spec.note else 0.92))
    return fig


def save(output, spec: LineFigure, data: pd.DataFrame) -> str:
    """Writes plots/NAME.csv and plots/NAME.png (from that table); returns the PNG's relative path. With
    ``spec.bounds`` the curves' intervals are clipped to the quantity's range in the table, so the figure
    drawn from it shows what the table says (an accuracy's interval stops at 1, as stats.ACCURACY does)."""
    import matplotlib.pyplot as plt

    if spec.bounds is not None:
        data = data.copy()
        curve = data["kind"] == "curve"
        data.loc[curve, ["low", "high"]] = data.loc[curve, ["low", "high"]].clip(*spec.bounds)
    data.to_csv(output.path(f"plots/{spec.name}.csv"), index=False)
    fig = draw(spec, pd.read_csv(output.path(f"plots/{spec.name}.csv")))
    png = f"plots/{spec.name}.png"
    fig.savefig(output.path(png), dpi=110, bbox_inches="tight")
    plt.close(fig)
    return png
