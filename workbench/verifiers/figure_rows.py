"""What a sweep figure says about its stored runs, shared by every figure of a preset
(``figures.py`` and the error-against-N panels of ``n_figure.py``): the point and band of each
(curve, x) cell, the band's name, what is fixed across runs and the caption line
(docs/sweeps.md, "Reports")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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


def params(run: dict[str, Any]) -> dict[str, Any]:
    """The settings a reader needs from one stored run's configuration."""
    cfg = run.get("config") or {}
    task, spec, tr = cfg.get("task") or {}, cfg.get("spec") or {}, cfg.get("train") or {}
    heads, rank = spec.get("heads"), spec.get("rank")
    if run.get("kind") == "random_features":
        return {"d": task.get("d"), "H": heads, "r": rank}
    return {"d": task.get("d"), "N": task.get("N"), "L": spec.get("layers"), "H": heads,
            "H·r": heads * rank if heads and rank else None, "steps": tr.get("steps")}


def exact(rows: Sequence[dict[str, Any]]) -> bool:
    return all((r.get("extra") or {}).get("exact") for r in rows)


def point(rows: Sequence[dict[str, Any]], x: Any) -> Point:
    """The plotted point of one configuration's seeds (see the module docstring)."""
    from workbench.core.intervals import NONNEGATIVE, student_t

    if exact(rows):
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
    if exact(rows):
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
    table = [(params(r), curve_of(r)) for r in rows]
    fixed, per_curve = [], set()
    for name in table[0][0]:
        vals = {repr(p[name]) for p, _ in table}
        if len(vals) == 1 and table[0][0][name] is not None:
            fixed.append(f"{name} = {table[0][0][name]}")
        elif all(len({repr(p[name]) for p, c in table if c == k}) == 1
                 for k in {c for _, c in table}):
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
