"""The error-against-N figure: one panel per rank, the trained curve with its interval, and the
certified bound at N >= 3 on D_N (the registered bound ``certified-n``: the largest
sequence-length bound covering each point, handed in by the command that draws, since this layer
does not reach the registry) under it (docs/sweeps.md, "Reports and the graph"; docs/paper.md,
"Beyond two keys").

The bound at N is a theorem about one layer of Eq. 2 attention (standard attention is a case of
it) on the nearest-neighbour task with N orthonormal keys (D_N); bounds at different N are
different theorems, about different laws. Where the runs are of that setting it is their bound
(dashed, black). Where they are not (the paper's sweep: the farthest-point task, i.i.d. keys, two
layers, for which no bound exists at N >= 3) it is drawn only as what it is: the D_N bound at the
same ``(d, r, H, N)``, dotted grey, labelled with its law, never as a bound on the trained curve.
The legend and the caption say which law each curve is under; a point no bound covers, or where
the bound is 0 (vacuous), is not drawn, and the caption says so.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

from workbench.verifiers import figure_style as style
from workbench.verifiers.figure_rows import AXIS_NAMES, band_label, caption, describe, point

Row = dict[str, Any]

DN_LAW = "D_N: N orthonormal keys, uniform query, nearest neighbour, one layer of Eq. 2"
OWN_LABEL = "certified bound (D_N)"  # the runs' own bound
OTHER_LABEL = "D_N bound (another law)"  # a reference under runs of another law


def why_no_bound(row: Row, bound: Any) -> str | None:
    """Why the certified bound at N is not a bound for the stored run ``row`` (``bound``: a
    registered ``Bound``, or ``None``), or ``None`` where it is."""
    why = law_mismatch(row)
    if why:
        return why
    if bound is None:
        return "no certified bound at N >= 3 registered here"
    return _outside(row, bound)


def law_mismatch(row: Row) -> str | None:
    """How the run's setting differs from the bound's (D_N, nearest, one layer), or ``None``."""
    cfg = row.get("config") or {}
    task, spec = cfg.get("task") or {}, cfg.get("spec") or {}
    why = []
    if task.get("name") != "nearest":
        why.append(f"the {task.get('name')} task, not nearest neighbour")
    if task.get("points") != "orthonormal":
        why.append(f"{task.get('points')} keys, not orthonormal (D_N)")
    if spec.get("layers", 1) != 1:
        why.append(f"{spec.get('layers')} layers, not one")
    return ", ".join(why) or None


def law_of(row: Row) -> str:
    """The run's setting in words, for the legend."""
    cfg = row.get("config") or {}
    task, spec = cfg.get("task") or {}, cfg.get("spec") or {}
    return (f"{task.get('name')}, {task.get('points')} keys, {spec.get('layers', 1)} "
            f"layer{'s' if spec.get('layers', 1) != 1 else ''}")


def _outside(row: Row, bound: Any) -> str | None:
    task, spec = row["config"]["task"], row["config"]["spec"]
    why: str | None = bound.outside(task["d"], spec["rank"], spec["heads"], task["N"])
    return why


def reference_at(row: Row, bound: Any) -> tuple[float, str, bool] | None:
    """The D_N bound at the run's ``(d, r, H, N)`` and the part that decided, wherever some bound
    covers that point (whatever the run's own law), and whether it is rigorous."""
    if bound is None or _outside(row, bound) is not None:
        return None
    task, spec = row["config"]["task"], row["config"]["spec"]
    bv = bound.evaluate(task["d"], spec["rank"], spec["heads"], task["N"])
    return float(bv.value), bv.source, bool(bv.rigorous)


COVERED = ("the lower bounds are proved for one layer on the nearest-neighbour task: N = 2 (D_2, "
           "and i.i.d. keys by the transfer) and 3 <= N <= d on orthonormal keys (D_N)")
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
    """The certified bound at the run's ``(d, r, H, N)`` (its lower end), where it is proved for
    the run."""
    if why_no_bound(row, bound) is not None:
        return None
    ref = reference_at(row, bound)
    return None if ref is None else ref[0]


def bound_note(rows: Sequence[Row], bound: Any) -> str:
    """The caption's sentences on the bound: whose law it is, where it is drawn, and why not."""
    refs = [(r, reference_at(r, bound)) for r in rows]
    drawn = [ref for _, ref in refs if ref is not None and ref[0] > 0]
    kind = "rigorous" if drawn and all(ref[2] for ref in drawn) else "not all rigorous"
    uncovered = sorted({_outside(r, bound) or "" for r, ref in refs if ref is None} - {""})
    zero: dict[int, set[int]] = {}  # rank -> the N where the bound is 0
    for r, ref in refs:
        if ref is not None and ref[0] <= 0:
            zero.setdefault(r["config"]["spec"]["rank"], set()).add(r["config"]["task"]["N"])
    source = sorted({ref[1] for ref in drawn})
    if bound is None:
        return "No certified bound at N >= 3 is registered here: none is drawn"
    where = (f"; not drawn where {'; '.join(uncovered)}" if uncovered else "") + (
        "; 0 (vacuous), not drawn, at " + "; ".join(
            f"r = {k}: N = {', '.join(map(str, sorted(v)))}" for k, v in sorted(zero.items()))
        if zero else "")
    decided = f", decided by {', '.join(source)}" if source else ""
    mismatch = sorted({m for m in (law_mismatch(r) for r in rows) if m})
    if mismatch and not any(law_mismatch(r) is None for r in rows):
        return (f"Dotted grey: the certified bound at each N on {DN_LAW} ({bound.name}, {kind}"
                f"{decided}), at the same (d, r, H), drawn only for reference: it is a theorem "
                f"about another law than the trained curves' ({'; '.join(mismatch)}), and no "
                "bound exists for i.i.d. keys at N >= 3; bounds at different N are different "
                f"theorems (different laws D_N){where}")
    other = f" (not for the runs with {'; '.join(mismatch)})" if mismatch else ""
    return (f"Dashed: the certified bound at each N ({bound.name}, {kind}{decided}), proved for "
            f"these runs' law, {DN_LAW}{other}; bounds at different N are different theorems "
            f"(different laws D_N){where}")


def _draw_bound(ax: Any, xs: list[Any], cells: dict[Any, list[Row]], bound: Any) -> list[float]:
    """The bound under one panel's curve: dashed where it is the runs' own, dotted grey where it
    is the D_N reference under runs of another law; the values drawn."""
    own: list[tuple[Any, float]] = []
    other: list[tuple[Any, float]] = []
    for x in xs:
        row = cells[x][0]
        ref = reference_at(row, bound)
        if ref is None or ref[0] <= 0:
            continue
        (own if law_mismatch(row) is None else other).append((x, ref[0]))
    if own:
        ax.plot([x for x, _ in own], [b for _, b in own], linestyle="--", color="black",
                linewidth=1.5, marker="x", label=OWN_LABEL)
    if other:
        ax.plot([x for x, _ in other], [b for _, b in other], linestyle=":", color="0.35",
                linewidth=2.0, marker="x", label=OTHER_LABEL)
    return [b for _, b in own + other]


def n_figure(p: Any, rows: Sequence[Row], scale: str, bound: Any = None) -> Any:
    """The matplotlib Figure: one panel per curve of preset ``p`` (its ranks), x = N; ``bound``
    is the certified bound at N >= 3 (``workbench.plugins.get_bound("certified-n")``;
    ``None``: not drawn)."""
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
        half: list[float] = []
        for i, (ax, key) in enumerate(zip(axes[0], keys)):
            cells = by[key]
            xs = sorted(cells)
            pts = [point(cells[x], x) for x in xs]
            colour = f"C{i % 10}"
            laws = sorted({law_of(cells[x][0]) for x in xs})
            ax.plot(xs, [pt.value for pt in pts], marker="o", color=colour, linewidth=2,
                    label=f"trained: {'; '.join(laws)}", zorder=3)
            band = [pt for pt in pts if pt.lo is not None and pt.hi is not None]
            if band:
                ax.fill_between([pt.x for pt in band], [pt.lo for pt in band],
                                [pt.hi for pt in band], color=colour, alpha=0.25, linewidth=0)
                # the interval as capped bars too: a band narrower than the line still shows
                ax.errorbar([pt.x for pt in band], [pt.value for pt in band],
                            yerr=[[pt.value - pt.lo for pt in band],  # type: ignore[operator]
                                  [pt.hi - pt.value for pt in band]],  # type: ignore[operator]
                            fmt="none", ecolor=colour, capsize=5, elinewidth=1.5, zorder=4)
                half += [max(pt.value - pt.lo, pt.hi - pt.value)  # type: ignore[operator]
                         for pt in band]
            # every seed: the spread behind the best-of-seeds line
            draws = [(x, float(r["heldout"])) for x in xs for r in cells[x]]
            ax.scatter([x for x, _ in draws], [v for _, v in draws], s=16, color=colour,
                       alpha=0.55, marker="x", zorder=4)
            values += [v for _, v in draws]
            values += [v for pt in pts for v in (pt.value, pt.lo, pt.hi) if v is not None]
            values += _draw_bound(ax, xs, cells, bound)
            ax.set_title(", ".join(f"{c} = {v}" for c, v in zip(p.curves, key)), loc="left")
            style.set_x_axis(ax, xs, p.log_x)
            ax.set_xlabel(AXIS_NAMES.get(p.x, p.x))
            style.reference_line(ax, on_d2=False)
            ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.14), frameon=False,
                      fontsize=9)  # below the panel: it never hides a curve or a tick
        log_y = style.set_y_axis(axes[0][0], values)
        if not log_y:  # errors from 0: the full-rank curve's height reads against it
            axes[0][0].set_ylim(bottom=0.0)
        axes[0][0].set_ylabel(f"error {style.QUANTITY}" + (" (log scale)" if log_y else ""))
        title = p.sweeps[0].upper() + p.sweeps[1:]
        fig.suptitle(f"{title} ({scale} scale), one panel per {p.curves[0] if p.curves else 'run'}",
                     x=0.02, ha="left")
        note = (caption(p, rows, fixed) + ". " + band_label(rows) + (
            f" (half-width at most {style.plain(max(half))}, also drawn as capped bars)"
            if half else "") + "; crosses: every seed. " + bound_note(rows, bound) + ".")
        fig.text(0.02, -0.17, "\n".join(textwrap.wrap(note, 125)), ha="left", va="top",
                 fontsize=12)  # about 7 pt where a paper prints the figure 6.5 in wide
        return fig
