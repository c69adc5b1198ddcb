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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.verdict import percent
from workbench.verifiers import figure_style as style

SEED_LEVEL = 0.95  # the Student-t interval over seeds
AXIS_NAMES = {"r": "rank r", "N": "sequence length N", "d": "dimension d", "H": "heads H"}
KEY_LAWS = {"iid": "i.i.d. uniform keys on the sphere", "orthonormal": "orthonormal keys (D_N)"}


@dataclass(frozen=True)
class Point:
    """One plotted point: x, the plotted error and its interval."""

    x: Any
    value: float
    lo: float | None
    hi: float | None


def _params(run: dict[str, Any]) -> dict[str, Any]:
    """The settings a reader needs from one stored run's configuration."""
    cfg = run.get("config") or {}
    task, spec, tr = cfg.get("task") or {}, cfg.get("spec") or {}, cfg.get("train") or {}
    heads, rank = spec.get("heads"), spec.get("rank")
    if run.get("kind") == "random_features":
        return {"d": task.get("d"), "H": heads, "r": rank}
    return {"d": task.get("d"), "N": task.get("N"), "L": spec.get("layers"), "H": heads,
            "H·r": heads * rank if heads and rank else None, "steps": tr.get("steps")}


def _exact(rows: Sequence[dict[str, Any]]) -> bool:
    return all((r.get("extra") or {}).get("exact") for r in rows)


def point(rows: Sequence[dict[str, Any]], x: Any) -> Point:
    """The plotted point of one configuration's seeds (see the module docstring)."""
    from workbench.core.intervals import NONNEGATIVE, student_t

    if _exact(rows):
        values = [float(r["heldout"]) for r in rows]
        if len(values) == 1:
            return Point(x, values[0], None, None)
        e = student_t(values, SEED_LEVEL, NONNEGATIVE)  # an error is never negative
        return Point(x, e.mean, e.lo, e.hi)
    best = min(rows, key=lambda r: (r["heldout"], r["seed"]))
    return Point(x, float(best["heldout"]), best.get("heldout_lo"), best.get("heldout_hi"))


def band_label(rows: Sequence[dict[str, Any]]) -> str:
    """What the shaded band is, for the caption."""
    seeds = len({r["seed"] for r in rows})
    if _exact(rows):
        if seeds == 1:
            return "exact error of one draw (no interval: nothing is sampled)"
        return (f"Line: mean over {seeds} seeds' draws (each exact); band: "
                f"{SEED_LEVEL:.0%} Student-t interval over seeds (cut at 0); dots: the draws")
    extra = next((r.get("extra") or {} for r in rows), {})
    level, method = extra.get("ci_level"), extra.get("interval") or "Monte Carlo"
    n = next((r.get("heldout_n") for r in rows if r.get("heldout_n")), None)
    lvl = f"{percent(level)} " if isinstance(level, float) else ""
    size = f", {n} held-out samples" if n else ""
    return (f"Line: best of {seeds} seeds by held-out error; band: its {lvl}Monte Carlo "
            f"interval ({method}{size})")


def describe(rows: Sequence[dict[str, Any]], curve_of: Any) -> tuple[list[str], set[str]]:
    """The settings equal across all rows (caption), and the names of those that vary between
    curves but not within one (for the legend)."""
    params = [(_params(r), curve_of(r)) for r in rows]
    fixed, per_curve = [], set()
    for name in params[0][0]:
        vals = {repr(p[name]) for p, _ in params}
        if len(vals) == 1 and params[0][0][name] is not None:
            fixed.append(f"{name} = {params[0][0][name]}")
        elif all(len({repr(p[name]) for p, c in params if c == k}) == 1
                 for k in {c for _, c in params}):
            per_curve.add(name)
    return fixed, per_curve


def caption(p: Any, rows: Sequence[dict[str, Any]], fixed: list[str]) -> str:
    r0 = rows[0]
    cfg = r0.get("config") or {}
    task = cfg.get("task") or {}
    law = cfg.get("law") or "cosine_uniform"
    if r0.get("kind") == "random_features":
        what = (f"{style.QUANTITY} on D₂ (N = 2 orthonormal keys, uniform query), nearest "
                f"neighbour; {len(rows) and r0['model_class']} attention, H random rank-1 "
                f"hardmax heads ({law}) with optimal values")
    else:
        keys = KEY_LAWS.get(task.get("points", "iid"), task.get("points", ""))
        what = (f"held-out {style.QUANTITY}, {task.get('name', '?')} task, {keys}; "
                f"{r0['model_class']} attention")
    seeds = len({r["seed"] for r in rows})
    bound = ("; dashed: Theorem 2's certified lower bound, the larger of the harmonic count and "
             "the fiber bound" if r0.get("kind") == "random_features" else "")
    text = f"{what}; {', '.join(fixed)}; {seeds} seed{'s' if seeds > 1 else ''}{bound}"
    return text[0].upper() + text[1:]


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
        for i, (key, cells) in enumerate(sorted(by.items(), key=lambda kv: repr(kv[0]))):
            pts = [point(cs, x) for x, cs in sorted(cells.items(), key=lambda kv: repr(kv[0])
                                                     if not numeric else kv[0])]
            xs = [pt.x if numeric else cats.index(repr(pt.x)) for pt in pts]
            first = next(iter(cells.values()))[0]
            extra = [f"{n} = {_params(first)[n]}" for n in sorted(per_curve)
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
                values += [v for _, pt in banded for v in (pt.lo, pt.hi) if v is not None]
            values += [pt.value for pt in pts]
            if _exact(rows):  # each seed's draw, so the spread behind the band shows
                draws = [(xs[j], float(r["heldout"])) for j, (_, cs) in
                         enumerate(sorted(cells.items(), key=lambda kv: kv[0] if numeric
                                          else repr(kv[0]))) for r in cs]
                ax.scatter([x for x, _ in draws], [v for _, v in draws], s=14, color=colour,
                           alpha=0.6, zorder=4)
            if rf and p.x == "H":
                d = _params(first)["d"]
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
        note = caption(p, rows, fixed) + ". " + band_label(rows) + "."
        fig.text(0.0, -0.16, "\n".join(textwrap.wrap(note, 120)), ha="left", va="top",
                 fontsize=10, transform=ax.transAxes)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        return fig
