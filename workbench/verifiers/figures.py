"""The figure of one stored sweep preset (docs/paper.md §7; docs/sweeps.md, "Reports").

Each figure states the quantity (``E‖f − A‖²``, the task, N, d and the law of the keys), the
model class, the steps and the seeds; what is the same for every run goes in the caption line,
what tells curves apart in the legend. The band is a real confidence interval, named:

- trained runs: the best seed by held-out error (the paper's convention), with the Monte Carlo
  interval of its held-out error (``heldout_lo``, ``heldout_hi``, stored with the run);
- exact runs (random features: each draw's error is computed exactly): the mean over the seeds'
  draws with the Student-t interval over seeds (``workbench.core.intervals.student_t``); one
  seed draws no band.

The 0.5 line is drawn on every figure; random-features figures also draw the certified lower
bound (``workbench.core.bounds.certified.certified_lower_bound``, the larger of the harmonic
count and the fiber bound).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from workbench.verifiers import figure_style as style
from workbench.verifiers.figure_rows import (
    AXIS_NAMES,
    band_label,
    caption,
    describe,
    exact,
    params,
    point,
)


def draw_preset(p: Any, rows: Sequence[dict[str, Any]], stem: Path, scale: str,
                n_bound: Any = None) -> list[str]:
    """Draw preset ``p``'s stored runs ``rows`` (one code version) to ``stem``.png/.svg; the
    file names written (``n_bound``: as in :func:`preset_figure`)."""
    return style.save(preset_figure(p, rows, scale, n_bound), stem)


def preset_figure(p: Any, rows: Sequence[dict[str, Any]], scale: str,
                  n_bound: Any = None) -> Any:
    """The matplotlib Figure of preset ``p``'s runs ``rows`` at ``scale`` (trained runs against
    N: one panel per curve with ``n_bound``, the bound beyond two keys from the registry, where
    it is proved; ``workbench.verifiers.n_figure``)."""
    from workbench.core.bounds.certified import certified_lower_bound

    if p.x == "N" and rows[0].get("kind") != "random_features":
        from workbench.verifiers.n_figure import n_figure

        return n_figure(p, rows, scale, n_bound)

    plt = style.pyplot()

    def curve_of(r: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(r["labels"].get(c) for c in p.curves)

    fixed, per_curve = describe(rows, curve_of)
    by: dict[tuple[Any, ...], dict[Any, list[dict[str, Any]]]] = {}
    for r in rows:
        by.setdefault(curve_of(r), {}).setdefault(r["labels"].get(p.x), []).append(r)
    numeric = all(isinstance(x, int | float) for c in by.values() for x in c)
    cats = sorted({repr(x) for c in by.values() for x in c})
    rf = rows[0].get("kind") == "random_features"
    with plt.rc_context(style.STYLE):
        fig, ax = plt.subplots(figsize=(9.6, 5.4))
        values: list[float] = [0.5]
        half: list[float] = []  # the intervals' half-widths, stated in the caption
        for i, (key, cells) in enumerate(sorted(by.items(), key=lambda kv: repr(kv[0]))):
            pts = [point(cs, x) for x, cs in sorted(cells.items(), key=lambda kv: repr(kv[0])
                                                     if not numeric else kv[0])]
            xs = [pt.x if numeric else cats.index(repr(pt.x)) for pt in pts]
            first = next(iter(cells.values()))[0]
            extra = [f"{n} = {params(first)[n]}" for n in sorted(per_curve)
                     if n not in p.curves and n != p.x]
            label = (", ".join([*(f"{c} = {v}" for c, v in zip(p.curves, key)), *extra])
                     or f"{first['model_class']} attention")
            colour = f"C{i % 10}"
            ax.plot(xs, [pt.value for pt in pts], marker="o", color=colour, linewidth=2,
                    label=label, zorder=3)
            banded = [(x, pt) for x, pt in zip(xs, pts) if pt.lo is not None]
            if banded:
                ax.fill_between([x for x, _ in banded], [pt.lo for _, pt in banded],
                                [pt.hi for _, pt in banded], color=colour, alpha=0.2,
                                linewidth=0)
                # the interval as capped bars too: a band narrower than the line still shows
                ax.errorbar([x for x, _ in banded], [pt.value for _, pt in banded],
                            yerr=[[pt.value - pt.lo for _, pt in banded],  # type: ignore[operator]
                                  [pt.hi - pt.value for _, pt in banded]],  # type: ignore[operator]
                            fmt="none", ecolor=colour, capsize=5, elinewidth=1.5, zorder=4)
                values += [v for _, pt in banded for v in (pt.lo, pt.hi) if v is not None]
                half += [max(pt.value - pt.lo, pt.hi - pt.value)  # type: ignore[operator]
                         for _, pt in banded]
            values += [pt.value for pt in pts]
            # every seed (each draw, for exact runs): the spread behind the plotted line
            draws = [(xs[j], float(r["heldout"])) for j, (_, cs) in
                     enumerate(sorted(cells.items(), key=lambda kv: kv[0] if numeric
                                      else repr(kv[0]))) for r in cs]
            ax.scatter([x for x, _ in draws], [v for _, v in draws], s=16, color=colour,
                       alpha=0.55, marker="x" if not exact(rows) else "o", zorder=4)
            values += [v for _, v in draws]
            if rf and p.x == "H":
                d = params(first)["d"]
                bound = [certified_lower_bound(d, 1, int(x)).value for x in xs]
                ax.plot(xs, bound, linestyle="--", color=colour, linewidth=2,
                        label=f"certified lower bound, d = {d}")
                values += bound
        log_y = style.set_y_axis(ax, values)
        if log_y:
            ax.set_ylim(bottom=min(v for v in values if v > 0) / 1.5)
        style.reference_line(ax, on_d2=rf)
        if numeric:
            style.set_x_axis(ax, [x for c in by.values() for x in c], p.log_x)
        else:
            ax.set_xticks(range(len(cats)), [c.strip("'") for c in cats])
        ax.set_xlabel(AXIS_NAMES.get(p.x, p.x))
        ax.set_ylabel(f"error {style.QUANTITY}" + (" (log scale)" if log_y else ""))
        title = p.sweeps[0].upper() + p.sweeps[1:]
        ax.set_title("\n".join(textwrap.wrap(f"{title} ({scale} scale)", 70)), loc="left")
        note = caption(p, rows, fixed) + ". " + band_label(rows) + (
            f" (half-width at most {style.plain(max(half))}, also drawn as capped bars)"
            if half else "") + ("" if exact(rows) else "; crosses: every seed") + "."
        fig.text(0.0, -0.16, "\n".join(textwrap.wrap(note, 120)), ha="left", va="top",
                 fontsize=10, transform=ax.transAxes)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        return fig
