"""The sandwich figure: the lower bound (the certified one, or the bound a point was measured
against, named in its panel's title) and the best witness against H, one panel per d and lower
side and one colour per r, the gap between them shaded (docs/derivations/lower_bound.md, "The
sandwich"; the stored points of ``workbench.verifiers.sandwich_store``).

Filled markers are witnesses measured at that ``(d, r, H)``; hollow markers are inherited from
fewer heads or a lower rank (``best_witnesses``), which is what the flat tails at large H are.
The bound is marked at every H it was computed at (a bar), so a panel of one point shows it
too. A point of another target (``bounds sandwich --target``) gets panels of its own, titled with
the target and its parameters.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from workbench.verifiers import figure_style as style
from workbench.verifiers.sandwich_store import SandwichCell

BOUND = ("lower bound: certified (larger of harmonic\ncount and fiber bound), or the bound "
         "named\nin the panel's title")
MEASURED = "best witness, measured at this (d, r, H)"
INHERITED = "best witness inherited from fewer heads\nor a lower rank: not a new measurement"
GAP = "gap: the least reachable error lies here\n(down to the axis where the bound is 0)"


TITLE_CHARS = 34  # a panel title's line, so that neighbouring titles never meet


def natural(text: str) -> tuple[Any, ...]:
    """A sort key reading the numbers in ``text`` as numbers (``beta=4.0`` < ``beta=1000.0``)."""
    parts = re.split(r"(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|inf)", text)
    return tuple((1, float(p), "") if i % 2 else (0, 0.0, p) for i, p in enumerate(parts)
                 if p)


def draw_sandwich(cells: Sequence[SandwichCell], stem: Path) -> list[str]:
    """Draw ``cells`` to ``stem``.png/.svg; the file names written."""
    return style.save(sandwich_figure(cells), stem)


def sandwich_figure(cells: Sequence[SandwichCell]) -> Any:
    """The matplotlib Figure of the sandwich ``cells`` (one panel per d, a legend panel)."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    plt = style.pyplot()
    # one panel per task (nearest first, then by name with its numbers in numeric order:
    # beta = 4 before beta = 1000), lower side (certified first) and d
    ds = sorted({(c.task != "nearest", natural(c.task), c.task, c.bound != "certified",
                  c.bound, c.d) for c in cells})
    cols = min(4, len(ds) + 1)
    rows = math.ceil((len(ds) + 1) / cols)  # one spare panel holds the legend
    values = [v for c in cells for v in (c.lower, c.best_error) if v > 0]
    with plt.rc_context(style.STYLE):
        fig, axes = plt.subplots(rows, cols, figsize=(4.4 * cols, 4.3 * rows + 0.9),
                                 sharey=True, squeeze=False)
        drawn: set[str] = set()  # what the legend may list: only what some panel shows
        for ax, (_, _, task, _, name, d) in zip(axes.flat, ds):
            here = [c for c in cells if c.d == d and c.bound == name and c.task == task]
            ranks = sorted({c.r for c in here})
            for i, r in enumerate(ranks):
                sel = sorted((c for c in here if c.r == r), key=lambda c: c.heads)
                H = [c.heads for c in sel]
                colour = f"C{i}"
                shown = not style.use_log(values)  # a bound of 0 is drawn on a linear axis
                bound = [c.lower if c.lower > 0 or shown else math.nan for c in sel]
                ax.plot(H, bound, "-", color=colour, linewidth=2, marker="_", markersize=16,
                        markeredgewidth=2.5)  # the bar marks the bound at a lone H too
                ax.plot(H, [c.best_error for c in sel], "--", color=colour, linewidth=1.5,
                        label=f"r = {r}")
                floor = min(values) / 2 if style.use_log(values) else 0.0
                if len(sel) > 1:
                    drawn.add("gap")
                ax.fill_between(H, [max(c.lower, floor) for c in sel],
                                [c.best_error for c in sel], color=colour, alpha=0.15,
                                linewidth=0)
                for c in sel:
                    own = c.inherited_from is None
                    drawn.add("measured" if own else "inherited")
                    ax.plot([c.heads], [c.best_error], "o", color=colour, markersize=6,
                            markerfacecolor=colour if own else "white", markeredgewidth=1.5)
            log = style.set_y_axis(ax, values)
            style.set_x_axis(ax, [c.heads for c in here], True)
            lines = [f"d = {d}"] if task == "nearest" else [f"d = {d}, target {task}"]
            if name != "certified":
                lines += textwrap.wrap(f"lower side: {name}", TITLE_CHARS)
            ax.set_title("\n".join(lines), fontsize=12 if len(lines) > 1 else None)
            ax.set_xlabel("heads H")
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=len(ranks),
                      fontsize=10, handlelength=1.4, columnspacing=0.8, frameon=False)
            if task == "nearest":  # the midpoint scores 0.5 against the nearest neighbour only
                style.reference_line(ax, on_d2=True)  # after the legend: named once, below
                drawn.add("midpoint")
            if log:
                ax.set_ylim(min(values) / 2, 0.7)
        for ax in list(axes.flat)[len(ds):]:
            ax.set_axis_off()
        spare = list(axes.flat)[len(ds)] if len(ds) < rows * cols else None
        kinds = {
            "bound": Line2D([], [], color="k", linewidth=2, marker="_", markersize=16,
                            markeredgewidth=2.5, label=BOUND),
            "measured": Line2D([], [], color="k", linestyle="--", marker="o", label=MEASURED),
            "inherited": Line2D([], [], color="k", linestyle="--", marker="o",
                                markerfacecolor="white", label=INHERITED),
            "gap": Patch(color="grey", alpha=0.3, label=GAP),
            "midpoint": Line2D([], [], color="#555555", linestyle=":",
                               label=style.MIDPOINT_LABEL)}
        handles = [h for k, h in kinds.items() if k == "bound" or k in drawn]
        where = spare if spare is not None else fig
        where.legend(handles=handles, loc="center", frameon=False, fontsize=10)
        fig.supylabel(f"error {style.QUANTITY} on D₂ (N = 2)")
        fig.suptitle("The sandwich: the least error of H heads of rank r (generalized attention, "
                     "Eq. 2)\nlies between the certified lower bound and the best witness found",
                     x=0.01, ha="left")
        fig.tight_layout()
        return fig
