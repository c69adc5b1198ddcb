"""The error-against-N figure: one panel per rank, the trained curve with its interval, and the
bound beyond two keys ``B_N`` (the registered bound ``n-keys``, handed in by the command that
draws, since this layer does not reach the registry) dashed under it wherever it is proved for
the runs (docs/sweeps.md, "Reports and the graph"; docs/paper.md, "Beyond two
keys").

``B_N`` is proved for one layer of Eq. 2 attention (standard attention is a case of it) on the
nearest-neighbour task with orthonormal keys (D_N), ``3 <= N <= d - 2``; a point outside that is
drawn without it, and the caption says why (for the paper's sweep: the farthest-point task,
i.i.d. keys, two layers).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

from workbench.verifiers import figure_style as style
from workbench.verifiers.figure_rows import AXIS_NAMES, band_label, caption, describe, point

Row = dict[str, Any]


def why_no_bound(row: Row, bound: Any) -> str | None:
    """Why ``B_N`` (``bound``: a registered ``Bound``, or ``None``) does not cover the stored run
    ``row``, or ``None`` where it does."""
    cfg = row.get("config") or {}
    task, spec = cfg.get("task") or {}, cfg.get("spec") or {}
    why = []
    if task.get("name") != "nearest":
        why.append(f"the {task.get('name')} task, not nearest neighbour")
    if task.get("points") != "orthonormal":
        why.append(f"{task.get('points')} keys, not orthonormal (D_N)")
    if spec.get("layers", 1) != 1:
        why.append(f"{spec.get('layers')} layers, not one")
    if why:
        return ", ".join(why)
    if bound is None:
        return "no bound n-keys registered here"
    d, N, r, H = task["d"], task["N"], spec["rank"], spec["heads"]
    why_not: str | None = bound.outside(d, r, H, N)
    return why_not


COVERED = ("the lower bounds are proved for one layer on the nearest-neighbour task: N = 2 (D_2, "
           "and i.i.d. keys by the transfer) and 3 <= N <= d - 2 on orthonormal keys (D_N)")
PAPER_SWEEP = ("the paper's own N-sweep (farthest-point task, i.i.d. keys, N up to 256, two "
               "layers) has no lower bound")


def no_bound_line(why: str, what: str = "these runs") -> str:
    """The one sentence for runs against N that no bound covers (``why``: their reasons)."""
    return f"no lower bound covers {what} ({why}): {COVERED}; {PAPER_SWEEP}"


def sweep_bound_line(rows: Sequence[Row], bound: Any) -> str | None:
    """For runs with ``N >= 3``: :func:`no_bound_line` when ``B_N`` covers none of them, else
    ``None`` (the figure's caption says where it is drawn)."""
    rows = [r for r in rows if ((r.get("config") or {}).get("task") or {}).get("N", 2) >= 3]
    found = {w for w in (why_no_bound(r, bound) for r in rows) if w is not None}
    if not rows or any(why_no_bound(r, bound) is None for r in rows):
        return None
    reasons = sorted(w for w in found if not any(w != v and w in v for v in found))
    return no_bound_line("; ".join(reasons))


def bound_at(row: Row, bound: Any) -> float | None:
    """``B_N`` at the run's ``(d, r, H, N)`` (the bound's lower end), where proved."""
    if why_no_bound(row, bound) is not None:
        return None
    task, spec = row["config"]["task"], row["config"]["spec"]
    return float(bound.interval(task["d"], spec["rank"], spec["heads"], task["N"])[0])


def bound_note(rows: Sequence[Row], bound: Any) -> str:
    """The caption's sentence on ``B_N``: where it is drawn, or why it is not."""
    kind = "rigorous" if bound is not None and bound.rigorous else "a float estimate, not rigorous"
    reasons = sorted({w for w in (why_no_bound(r, bound) for r in rows) if w is not None})
    if len(reasons) and not any(why_no_bound(r, bound) is None for r in rows):
        return ("B_N (n-keys) is not drawn: it is proved for one layer on the nearest-neighbour "
                "task with orthonormal keys (D_N), 3 ≤ N ≤ d − 2, and these runs have "
                + "; ".join(reasons))
    missing = f" (not drawn where {'; '.join(reasons)})" if reasons else ""
    return (f"dashed: B_N (n-keys, {kind}), the lower bound beyond two keys, drawn where it is "
            f"proved (one layer, nearest neighbour, D_N, 3 ≤ N ≤ d − 2){missing}")


def n_figure(p: Any, rows: Sequence[Row], scale: str, bound: Any = None) -> Any:
    """The matplotlib Figure: one panel per curve of preset ``p`` (its ranks), x = N; ``bound``
    is ``B_N`` (``workbench.plugins.get_bound("n-keys")``; ``None``: not drawn)."""
    plt = style.pyplot()

    def curve_of(r: Row) -> tuple[Any, ...]:
        return tuple(r["labels"].get(c) for c in p.curves)

    fixed, _ = describe(rows, curve_of)
    by: dict[tuple[Any, ...], dict[Any, list[Row]]] = {}
    for r in rows:
        by.setdefault(curve_of(r), {}).setdefault(r["labels"][p.x], []).append(r)
    keys = sorted(by, key=repr)
    with plt.rc_context(style.STYLE):
        fig, axes = plt.subplots(1, len(keys), figsize=(4.8 * len(keys) + 1.5, 5.0),
                                 sharey=True, squeeze=False)
        values: list[float] = [0.5]
        for i, (ax, key) in enumerate(zip(axes[0], keys)):
            cells = by[key]
            xs = sorted(cells)
            pts = [point(cells[x], x) for x in xs]
            colour = f"C{i % 10}"
            ax.plot(xs, [pt.value for pt in pts], marker="o", color=colour, linewidth=2,
                    label="trained (best seed)", zorder=3)
            band = [pt for pt in pts if pt.lo is not None and pt.hi is not None]
            if band:
                ax.fill_between([pt.x for pt in band], [pt.lo for pt in band],
                                [pt.hi for pt in band], color=colour, alpha=0.25, linewidth=0)
            values += [v for pt in pts for v in (pt.value, pt.lo, pt.hi) if v is not None]
            covered = [(x, bound_at(cells[x][0], bound)) for x in xs]
            drawn = [(x, b) for x, b in covered if b is not None]
            if drawn:
                ax.plot([x for x, _ in drawn], [b for _, b in drawn], linestyle="--",
                        color="black", linewidth=1.5, marker="x", label="B_N (n-keys)")
                values += [b for _, b in drawn]
            ax.set_title(", ".join(f"{c} = {v}" for c, v in zip(p.curves, key)), loc="left")
            style.set_x_axis(ax, xs, p.log_x)
            ax.set_xlabel(AXIS_NAMES.get(p.x, p.x))
            style.reference_line(ax, on_d2=False)
            ax.legend(loc="best", frameon=False, fontsize=9)
        log_y = style.set_y_axis(axes[0][0], values)
        if not log_y:  # errors from 0: the full-rank curve's height reads against it
            axes[0][0].set_ylim(bottom=0.0)
        axes[0][0].set_ylabel(f"error {style.QUANTITY}" + (" (log scale)" if log_y else ""))
        title = p.sweeps[0].upper() + p.sweeps[1:]
        fig.suptitle(f"{title} ({scale} scale), one panel per {p.curves[0] if p.curves else 'run'}",
                     x=0.02, ha="left")
        note = (caption(p, rows, fixed) + ". " + band_label(rows) + ". " + bound_note(rows, bound)
                + ".")
        fig.text(0.02, -0.02, "\n".join(textwrap.wrap(note, 150)), ha="left", va="top",
                 fontsize=10)
        return fig
