"""The claims graph as a picture (docs/architecture.md, "Claims and verdicts"): a layered,
left-to-right layout computed from the DAG, the same on every run.

- Columns are the topological generations (a claim sits one column right of its deepest
  dependency). Inside a column the claims are sorted by id, then reordered by the barycentre of
  their neighbours in the columns beside (two sweeps, ties by id), which reduces crossings.
- A claim's kind is its marker's shape, its verdict the marker's colour (both in the legend);
  its id is written beside the marker, and edges start where the label ends.
- Units are inches, measured with the label font (``TextPath``), so nothing depends on a
  renderer: the same graph gives the same PNG and SVG bytes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import networkx as nx

from workbench.core.safe_files import write_file
from workbench.verifiers import figure_style as style

COLOURS: dict[str, str] = {
    "holds": "#4caf50", "violated": "#e53935", "inconclusive": "#fbc02d",
    "unsupported": "#8e24aa", "skipped": "#9e9e9e", "error": "#795548",
}
NO_VERDICT = "#e0e0e0"


def colour(verdict: str | None) -> str:
    return COLOURS.get(verdict or "", NO_VERDICT)


SHAPES: dict[str, str] = {"fact": "s", "lemma": "o", "theorem": "D", "remark": "p",
                          "conjecture": "*", "experiment": "^"}
FONT = 12  # points: the claim ids
ROW, GAP, PAD = 0.52, 0.9, 0.16  # inches: between rows, between columns, marker to label


def layers(g: nx.DiGraph) -> list[list[str]]:
    """The columns of the drawing: topological generations, each ordered to reduce crossings."""
    cols = [sorted(c) for c in nx.topological_generations(g)]
    for _ in range(2):
        for k in range(1, len(cols)):  # forward: by the positions of the dependencies
            _reorder(cols, k, g.predecessors)
        for k in range(len(cols) - 2, -1, -1):  # backward: by the dependents
            _reorder(cols, k, g.successors)
    return cols


def _reorder(cols: list[list[str]], k: int, neighbours: object) -> None:
    place = {n: i / max(1, len(c) - 1) for c in cols for i, n in enumerate(c)}
    here = {n: i / max(1, len(cols[k]) - 1) for i, n in enumerate(cols[k])}

    def centre(n: str) -> tuple[float, str]:
        ns = [place[m] for m in neighbours(n)]  # type: ignore[operator]
        return (sum(ns) / len(ns) if ns else here[n], n)

    cols[k] = sorted(cols[k], key=centre)


@cache
def _width(text: str) -> float:
    """The width of ``text`` in the label font, in inches (cached: a label is measured once
    per process, not once per drawing and column)."""
    from matplotlib.textpath import TextPath

    return float(TextPath((0, 0), text, size=FONT).get_extents().width) / 72


def positions(g: nx.DiGraph) -> dict[str, tuple[float, float]]:
    """Each claim's marker centre in inches (x right, y up), column by column."""
    out: dict[str, tuple[float, float]] = {}
    x = 0.3
    cols = layers(g)
    tallest = max((len(c) for c in cols), default=1)
    for col in cols:
        top = (tallest - 1) * ROW - (tallest - len(col)) * ROW / 2
        for i, n in enumerate(col):
            out[n] = (round(x, 4), round(top - i * ROW, 4))
        x += PAD + max(_width(n) for n in col) + GAP
    return out


def draw(g: nx.DiGraph, path: str | os.PathLike[str],
         verdicts: Mapping[str, str] | None = None, name: str = "path") -> tuple[int, int]:
    """Draw ``g`` to ``path`` (``.png`` or ``.svg``, written by ``safe_files.write_file``:
    errors name ``name``); the picture's size in pixels at ``style.DPI``."""
    plt = style.pyplot()
    fig = figure(g, verdicts)
    width, height = fig.get_size_inches()
    out = Path(path)
    meta = {"Date": None} if out.suffix == ".svg" else {"Software": None}
    fmt = out.suffix.lstrip(".").lower()
    try:
        with plt.rc_context(style.STYLE):
            write_file(out, lambda fh: fig.savefig(fh, format=fmt, dpi=style.DPI,
                                                   metadata=meta), name)
    finally:
        plt.close(fig)
    return int(round(width * style.DPI)), int(round(height * style.DPI))


def figure(g: nx.DiGraph, verdicts: Mapping[str, str] | None = None) -> Any:
    """The matplotlib Figure of ``g``, markers coloured by ``verdicts``."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyArrowPatch


    plt = style.pyplot()
    v = verdicts or {}
    pos = positions(g)
    ys = [y for _, y in pos.values()] or [0.0]
    right = max((x + PAD + _width(n) for n, (x, _) in pos.items()), default=1.0)
    width, top, bottom = right + 0.3, max(ys) + 0.9, min(ys) - 1.6
    height = top - bottom
    with plt.rc_context(style.STYLE):
        fig = plt.figure(figsize=(width, height))
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_xlim(0, width)
        ax.set_ylim(bottom, top)
        ax.set_axis_off()
        for a, b in sorted(g.edges):
            (xa, ya), (xb, yb) = pos[a], pos[b]
            start = (xa + PAD + _width(a) + 0.06, ya)
            ax.add_patch(FancyArrowPatch(start, (xb - 0.12, yb), arrowstyle="-|>",
                                         mutation_scale=12, color="#8a8a8a", linewidth=1.0,
                                         shrinkA=0, shrinkB=0, zorder=1))
        for n in sorted(g.nodes):
            x, y = pos[n]
            ax.plot([x], [y], marker=SHAPES.get(g.nodes[n]["kind"], "o"), markersize=13,
                    markerfacecolor=colour(v.get(n)), markeredgecolor="#222222",
                    markeredgewidth=1.2, linestyle="none", zorder=3)
            ax.text(x + PAD, y, n, fontsize=FONT, va="center", ha="left", zorder=4,
                    bbox={"facecolor": "white", "alpha": 0.85, "edgecolor": "none", "pad": 1})
        ax.text(0.3, top - 0.35, "Claims graph: an arrow runs from a claim to one that "
                "depends on it", fontsize=15, va="center", ha="left")
        kinds = [Line2D([], [], marker=SHAPES[k], color="white", markerfacecolor="white",
                        markeredgecolor="#222222", markersize=11, label=k)
                 for k in SHAPES if k in {g.nodes[n]["kind"] for n in g}]
        shown = [k for k in COLOURS if k in set(v.values())]
        verdict = [Line2D([], [], marker="o", color="white", markerfacecolor=COLOURS[k],
                          markeredgecolor="#222222", markersize=11, label=k) for k in shown]
        if len(v) < len(g):
            verdict.append(Line2D([], [], marker="o", color="white",
                                  markerfacecolor=NO_VERDICT, markeredgecolor="#222222",
                                  markersize=11, label="not checked"))
        first = ax.legend(handles=kinds, title="kind (shape)", loc="lower left",
                          bbox_to_anchor=(0.01, 0.0), ncol=len(kinds), frameon=False)
        ax.add_artist(first)
        ax.legend(handles=verdict, title="verdict of the last check (colour)", loc="lower right",
                  bbox_to_anchor=(0.99, 0.0), ncol=max(1, len(verdict)), frameon=False)
    return fig
