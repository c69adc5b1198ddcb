"""The kinks of the fiber bound's Ky Fan sum, bracketed exactly: the angles phi (c = sin^2 phi)
where two of the three fiber values cross (docs/derivations/fiber_bound.md, "The kinks").

For ``m >= 2`` each difference ``f = v_i - v_j`` is ``sum_t wt_t k(phi, theta_t) W_phi(theta_t)``
with the kernel ``k = 1 - (4/pi) arcsin(s cos phi)``, ``s = sin(theta/2)``, increasing in phi,
and ``W = sum sigma_i a_i(c) P_i(theta)``, the value factors ``a_i`` monotone in c. Its slope is
``f' = sin(phi) g`` with ``g = sum_t wt_t [(4/pi) q W + 2 cos(phi) k V]``, where
``q = s / sqrt(1 - s^2 cos^2 phi)`` decreases in phi and ``V = sum sigma_i a_i'(c) P_i`` is
constant. Bounding every factor by its values at the cell's ends, pointwise in theta, and
summing with the positive weights encloses f and g over a cell, for the very sums the outer
quadrature integrates. g, not f', is what settles the cells at phi = 0, where f' vanishes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from workbench.core.bounds.numerics.kink_brackets import Enclosure, bracket_sign_changes
from workbench.core.quadrature import fiber_angle_rule

__all__ = ["crossing_brackets"]

Rule = tuple[np.ndarray, np.ndarray, np.ndarray]  # theta nodes, weights, P_0..P_2 at cos theta


def _times(
    lo1: np.ndarray, hi1: np.ndarray, lo2: np.ndarray, hi2: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Interval product, elementwise."""
    a, b, c, d = lo1 * lo2, lo1 * hi2, hi1 * lo2, hi1 * hi2
    return (np.minimum(np.minimum(a, b), np.minimum(c, d)),
            np.maximum(np.maximum(a, b), np.maximum(c, d)))


def _factors(m: int, c: np.ndarray) -> np.ndarray:
    """``(3, len(c))``: the value factors a_0 = 1, a_1 = c + (1-c)/m, a_2 = 2(1-c)/(m+2)."""
    return np.stack([np.ones_like(c), c + (1 - c) / m, 2 * (1 - c) / (m + 2)])


def _pair_enclosures(
    m: int, rule: Rule, i: int, j: int
) -> tuple[Callable[[np.ndarray], np.ndarray], Enclosure, Enclosure]:
    """Point values of ``f = v_i - v_j`` and enclosures of f and of ``g = f'/sin(phi)``."""
    th, wt, P = rule
    s = np.sin(th / 2)
    sigma = np.zeros(3)
    sigma[i], sigma[j] = 1.0, -1.0
    slopes = np.array([0.0, 1 - 1 / m, -2 / (m + 2)])  # d a_i / dc
    V = (sigma * slopes) @ P  # constant in phi

    def kern(phi: np.ndarray) -> np.ndarray:
        return 1 - (4 / math.pi) * np.arcsin(np.clip(np.cos(phi)[:, None] * s, 0.0, 1.0))

    def q(phi: np.ndarray) -> np.ndarray:
        return s / np.sqrt(1 - (np.cos(phi)[:, None] * s) ** 2)

    def W_range(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        fa, fb = _factors(m, np.sin(a) ** 2), _factors(m, np.sin(b) ** 2)
        lo = np.zeros((a.size, th.size))
        hi = np.zeros((a.size, th.size))
        for k in (i, j):
            at_a, at_b = np.outer(fa[k], sigma[k] * P[k]), np.outer(fb[k], sigma[k] * P[k])
            lo += np.minimum(at_a, at_b)
            hi += np.maximum(at_a, at_b)
        return lo, hi

    def value(phi: np.ndarray) -> np.ndarray:
        W = sum(sigma[k] * np.outer(_factors(m, np.sin(phi) ** 2)[k], P[k]) for k in (i, j))
        return (kern(phi) * W) @ wt  # type: ignore[no-any-return]

    def enclose(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = _times(kern(a), kern(b), *W_range(a, b))
        return lo @ wt, hi @ wt

    def slope(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lo1, hi1 = _times(q(b), q(a), *W_range(a, b))
        kv_a, kv_b = kern(a) * V, kern(b) * V
        lo2, hi2 = _times(
            np.cos(b)[:, None], np.cos(a)[:, None], np.minimum(kv_a, kv_b), np.maximum(kv_a, kv_b)
        )
        return (4 / math.pi * lo1 + 2 * lo2) @ wt, (4 / math.pi * hi1 + 2 * hi2) @ wt

    return value, enclose, slope


@lru_cache(maxsize=64)
def _brackets(m: int, cells: int) -> tuple[tuple[int, int, float, float], ...]:
    rule = fiber_angle_rule(m)  # the rule the fiber bound's quadrature uses
    grid = np.linspace(0.0, math.pi / 2, cells + 1)
    out = []
    for i, j in ((0, 1), (0, 2), (1, 2)):
        found = bracket_sign_changes(*_pair_enclosures(m, rule, i, j), grid)
        out += [(i, j, a, b) for a, b in found]
    return tuple(out)


def crossing_brackets(m: int, cells: int = 64) -> tuple[tuple[int, int, float, float], ...]:
    """``(i, j, a, b)``: the cell ``[a, b]`` in phi holds exactly one crossing of the values
    v_i and v_j (a sign change of v_i - v_j); they cross nowhere else in ``[0, pi/2]``. The values
    are never negative (the kernel is positive semi-definite), so these are all the kinks.
    ``m = 1``: the one difference ``(2/pi) arcsin(2c - 1) = 4 phi/pi - 1`` vanishes at pi/4."""
    if m == 1:
        return ((0, 1, math.pi / 4, math.pi / 4),)
    return _brackets(m, cells)
