"""The one verdict rule of the workbench (docs/architecture.md, Claims and verdicts).

A measurement with interval ``[lo, hi]`` is compared with a bound, itself a number or an interval
``[b_lo, b_hi]`` (a bound that was estimated too), through a relation:

- ``<=``: ``holds`` when ``hi <= b_lo + tolerance``, ``violated`` when ``lo > b_hi + tolerance``;
- ``>=``: ``holds`` when ``lo >= b_hi - tolerance``, ``violated`` when ``hi < b_lo - tolerance``;
- ``==``: ``violated`` when the two intervals are apart by more than ``tolerance``; otherwise
  ``holds``, except that a *statistical* interval must resolve the equality: when its
  half-width (both sides' half-widths added) exceeds ``resolution``, or no resolution is
  stated, the verdict is ``inconclusive``. Exact values and rigorous enclosures need none.

Anything else is ``inconclusive``: the interval straddles the bound. A NaN anywhere is
``inconclusive``. ``Evidence.verdict``, ``workbench construct`` and every other command that
prints a verdict call :func:`decide`.
"""

from __future__ import annotations

import math

RELATIONS: tuple[str, ...] = ("<=", ">=", "==")
# the level of the interval a command's verdict is made beyond (``workbench construct`` and its
# public runner): at 95 % a true claim would read ``violated``, exit 1, once in twenty runs
VERDICT_LEVEL = 0.999
VERDICTS: tuple[str, ...] = ("holds", "violated", "inconclusive")


def decide(
    lo: float,
    hi: float,
    relation: str,
    bound: float | tuple[float, float],
    tolerance: float = 0.0,
    resolution: float | None = None,
    *,
    statistical: bool = True,
) -> str:
    """``holds``, ``violated`` or ``inconclusive`` for ``[lo, hi] relation bound`` (see the
    module note); ``statistical=False`` marks exact values and rigorous enclosures."""
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {RELATIONS} (got {relation!r})")
    if not tolerance >= 0:
        raise ValueError(f"tolerance must be >= 0 (got {tolerance})")
    if resolution is not None and not resolution > 0:
        raise ValueError(f"resolution must be > 0 (got {resolution})")
    b_lo, b_hi = (bound, bound) if isinstance(bound, (int, float)) else bound
    lo, hi, b_lo, b_hi = float(lo), float(hi), float(b_lo), float(b_hi)
    if any(math.isnan(v) for v in (lo, hi, b_lo, b_hi)):
        return "inconclusive"
    if lo > hi or b_lo > b_hi:
        raise ValueError(f"intervals must satisfy lo <= hi (got [{lo}, {hi}], [{b_lo}, {b_hi}])")
    tol = float(tolerance)
    if relation == "<=":
        return "holds" if hi <= b_lo + tol else "violated" if lo > b_hi + tol else "inconclusive"
    if relation == ">=":
        return "holds" if lo >= b_hi - tol else "violated" if hi < b_lo - tol else "inconclusive"
    if lo - tol > b_hi or hi + tol < b_lo:
        return "violated"  # refuted beyond both intervals, however wide they are
    if statistical:
        half = (hi - lo) / 2 + (b_hi - b_lo) / 2
        if resolution is None or half > resolution:
            return "inconclusive"  # too wide to confirm equality at the stated resolution
    return "holds"


def percent(level: float) -> str:
    """``95%``, ``99.9%``, ``99.998%``: enough decimals to tell the level from 100 %."""
    decimals = max(0, math.ceil(-math.log10(1 - level)) - 2) if level < 1 else 0
    return f"{level * 100:.{decimals}f}%"
