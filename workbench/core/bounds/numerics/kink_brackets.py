"""Brackets for every sign change of a function on an interval, from enclosures of the
function and of its slope over cells: the kink finder of the fiber bound
(docs/derivations/fiber_bound.md, "The kinks").

A cell ``[a, b]`` is settled when the enclosure of ``f`` over it excludes 0 (no zero there) or
the enclosure of a positive multiple of ``f'`` excludes 0 (``f`` strictly monotone: at most one
zero, a sign change exactly when ``f(a) f(b) < 0``). Unsettled cells are halved. Nothing is
read off a grid: two zeros inside one cell keep both of its halves unsettled until they part.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["Enclosure", "bracket_sign_changes"]

# cells (a, b) -> (lower, upper) bounds over each cell [a_k, b_k]
Enclosure = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def _clear(lo: np.ndarray, hi: np.ndarray, margin: float) -> np.ndarray:
    return (lo > margin) | (hi < -margin)


def bracket_sign_changes(
    value: Callable[[np.ndarray], np.ndarray],
    enclose: Enclosure,
    slope: Enclosure,
    grid: np.ndarray,
    *,
    margin: float = 1e-12,
    max_halvings: int = 30,
) -> list[tuple[float, float]]:
    """Cells ``(a, b)`` of the refined ``grid``, each holding exactly one zero of ``f``, at
    which ``f(a) f(b) < 0``; every zero of ``f`` in ``[grid[0], grid[-1]]`` off them has
    ``f`` of one sign on both sides. Exact zeros met at cell ends come back as ``(x, x)``.

    ``value`` evaluates ``f`` at points; ``enclose`` and ``slope`` bound ``f`` and a positive
    multiple of ``f'`` over cells. An enclosure counts as excluding 0 only beyond ``margin``
    (rounding). Raises ``RuntimeError`` if a cell is still unsettled after ``max_halvings``
    halvings (a tangency or a bad enclosure), so a kink is never dropped silently.
    """
    grid = np.asarray(grid, dtype=np.float64)
    f = value(grid)
    a, b, fa, fb = grid[:-1], grid[1:], f[:-1], f[1:]
    found: list[tuple[float, float]] = [(float(x), float(x)) for x in grid[f == 0]]
    for _ in range(max_halvings + 1):
        settled = _clear(*enclose(a, b), margin)
        monotone = ~settled & _clear(*slope(a, b), margin)
        change = monotone & (fa * fb < 0)
        found += [(float(x), float(y)) for x, y in zip(a[change], b[change])]
        todo = ~(settled | monotone)
        if not todo.any():
            return sorted(found)
        a, b, fa, fb = a[todo], b[todo], fa[todo], fb[todo]
        mid = (a + b) / 2
        fm = value(mid)
        found += [(float(x), float(x)) for x in mid[fm == 0]]
        a, b = np.concatenate([a, mid]), np.concatenate([mid, b])
        fa, fb = np.concatenate([fa, fm]), np.concatenate([fm, fb])
    raise RuntimeError(
        f"kink bracketing left {a.size} cell(s) unsettled, first [{a[0]!r}, {b[0]!r}]"
    )
