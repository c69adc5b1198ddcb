"""Gauss-Legendre rules and the Beta function in numpy and mpmath, without scipy (whose
``special`` module costs a few tenths of a second to import): the quadratures of the fiber bound
(docs/derivations/fiber_bound.md, "Evaluation").
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from workbench.core.validation import check_float, check_int

__all__ = ["beta_function", "fiber_angle_rule", "gauss_legendre"]

FIBER_ANGLE_NODES = 400  # Gauss-Legendre nodes in the fiber angle (agrees with mpmath to 1e-14)


def _legendre_pair(n: int, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(P_n(x), P_n'(x))`` by ``(j+1) P_{j+1} = (2j+1) x P_j - j P_{j-1}`` and
    ``(x^2 - 1) P_n' = n (x P_n - P_{n-1})`` (|x| < 1)."""
    p_prev, p = np.ones_like(x), x.copy()
    for j in range(1, n):
        p_prev, p = p, ((2 * j + 1) * x * p - j * p_prev) / (j + 1)
    return p, n * (x * p - p_prev) / (x * x - 1)


@lru_cache(maxsize=16)
def _rule(n: int) -> tuple[np.ndarray, np.ndarray]:
    k = np.arange(1, (n + 1) // 2 + 1)
    x = np.cos(np.pi * (k - 0.25) / (n + 0.5))  # the roots >= 0, descending (Tricomi's guess)
    if n % 2:
        x[-1] = 0.0  # the middle root of an odd rule, exactly
    for _ in range(50):
        p, dp = _legendre_pair(n, x)
        step = p / dp
        x = x - step
        if np.abs(step).max() < 1e-9:  # quadratic convergence: one more step reaches the ulp
            p, dp = _legendre_pair(n, x)
            x = x - p / dp
            break
    _, dp = _legendre_pair(n, x)
    w = 2 / ((1 - x * x) * dp * dp)
    # the mirror images of the strictly positive roots, then every root >= 0, ascending
    nodes = np.concatenate([-x[: n // 2], x[::-1]])
    weights = np.concatenate([w[: n // 2], w[::-1]])
    nodes.setflags(write=False)
    weights.setflags(write=False)
    return nodes, weights


def gauss_legendre(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes (ascending) and weights on [-1, 1]: exact for polynomials of degree
    ``< 2n``. Newton's method on the Legendre recurrence from Tricomi's initial guesses; the
    weights are ``2 / ((1 - x^2) P_n'(x)^2)``. Read-only arrays (cached)."""
    return _rule(check_int("n", n, lo=1))


def beta_function(a: float, b: float) -> float:
    """``B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)`` for ``a, b > 0`` (float64, by mpmath,
    which keeps full relative precision where log-gammas would cancel)."""
    a = check_float("a", a, lo=0.0, lo_open=True)
    b = check_float("b", b, lo=0.0, lo_open=True)
    if a + b <= 170:  # no overflow in this order
        return math.gamma(a) / math.gamma(a + b) * math.gamma(b)
    import mpmath

    return float(mpmath.beta(a, b))


@lru_cache(maxsize=8)
def fiber_angle_rule(m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rule in the fiber angle of S^{m-1} that the fiber bound and its kinks share
    (docs/derivations/fiber_bound.md): nodes theta in [0, pi], weights with
    sin^{m-2} theta / B(1/2, (m-1)/2), and the three normalised Legendre polynomials of
    S^{m-1} at cos theta."""
    x, w = gauss_legendre(FIBER_ANGLE_NODES)
    th = (x + 1) * math.pi / 2
    wt = w * math.pi / 2 * np.sin(th) ** (m - 2) / beta_function(0.5, (m - 1) / 2)
    t = np.cos(th)
    P = np.stack([np.ones_like(t), t, (m * t * t - 1) / (m - 1)])
    return th, wt, P
