"""The law at each level of the multi-level bound M_N (docs/derivations/long_contexts_evaluation.md,
"The law at level k"; docs/derivations/long_contexts.md): the level fiber's dimension, the law
``F_{K,D}`` of the largest of K coordinates of a uniform point of ``S^{D-1}``, the level target
``E[t | F_k]`` in closed form, and the counts (``lambda_k`` linear forms per head, ``D_l``).

``F_{K,D}`` is computed by the exact one-dimensional recursion over the first coordinate
``z_1 = sin(phi)`` (the rest, divided by ``cos(phi)``, is uniform on ``S^{D-2}``):

    F_{K,D}(theta) = c_D int_{-pi/2}^{asin(min(theta, 1))} cos(phi)^{D-2}
                                   F_{K-1,D-1}(theta/cos(phi)) dphi,

``F_{0,.} = 1``, ``F_{1,D}`` the incomplete beta (exact), ``F_{1,1} = 1/2`` on ``[-1, 1)``. Each
step is a Gauss-Legendre sum on a grid of theta with linear interpolation, the cap where the
inner law is constant taken exactly, ``F_{2,2}`` the arc length (float64, error below about
1e-4, measured against exact values and an identity in tests/core/test_multi_level_law.py): a
numerical value, never used by the rigorous part of the bound. For ``theta >= 1/sqrt2`` at most
one coordinate exceeds theta and ``F_{K,D} = 1 - K (1 - F_{1,D})`` exactly.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import special

from workbench.core.bounds import EQ2, VALUE_CLASSES
from workbench.core.validation import check_choice, check_int

__all__ = ["level_fiber_dim", "level_degree_count", "level_target", "linear_forms",
           "max_coordinate_law"]

_GRID = 4097  # theta grid on [-1, 1] for the recursion
_NODES = 160  # Gauss-Legendre nodes in phi per step


def level_fiber_dim(d: int, k: int) -> int:
    """``n_k = d - k + 1``: the dimension of ``E_k = span(u, x_3..x_k)^perp``, the space the pair
    direction w ranges over on the level-k fiber."""
    return d - k + 1


def _first_coordinate_cdf(D: int, theta: np.ndarray) -> np.ndarray:
    """``F_{1,D}``: ``P(z_1 <= theta)`` for z uniform on ``S^{D-1}`` (exact)."""
    th = np.clip(theta, -1.0, 1.0)
    if D == 1:
        return np.where(theta >= 1.0, 1.0, np.where(theta >= -1.0, 0.5, 0.0))
    half = special.betainc(0.5, (D - 1) / 2.0, th * th) / 2.0
    return np.where(th >= 0, 0.5 + half, 0.5 - half)


@lru_cache(maxsize=64)
def _table(K: int, D: int) -> tuple[np.ndarray, np.ndarray]:
    """``F_{K,D}`` on the theta grid, by the recursion (module docstring)."""
    grid = np.linspace(-1.0, 1.0, _GRID)
    if K == 1:
        return grid, _first_coordinate_cdf(D, grid)
    high = np.clip(1.0 - K * (1.0 - _first_coordinate_cdf(D, grid)), 0.0, 1.0)
    if K == 2 and D == 2:  # the circle: one arc of length pi/2 + 2 asin(theta)
        arc = 0.25 + np.arcsin(np.clip(grid, -1, 1)) / np.pi
        return grid, np.where(grid >= 1 / math.sqrt(2), high, np.clip(arc, 0.0, 1.0))
    prev_grid, prev = _table(K - 1, D - 1)
    u, w = np.polynomial.legendre.leggauss(_NODES)
    # where cos(phi) < |theta| the inner law is 1 (theta > 0) or 0 (theta < 0): that cap is
    # exact, and the quadrature runs over [-acos|theta|, asin(theta)] only
    low = -np.arccos(np.clip(np.abs(grid), 0.0, 1.0))
    top = np.arcsin(np.clip(grid, -1.0, 1.0))
    half = np.maximum(top - low, 0.0) / 2
    phi = low[:, None] + half[:, None] * (u[None, :] + 1)  # (grid, nodes)
    cos = np.cos(phi)
    arg = grid[:, None] / cos
    inner = np.interp(arg, prev_grid, prev, left=0.0, right=1.0)
    weight = cos ** (D - 2) if D > 2 else np.ones_like(cos)
    vals = (half[:, None] * w[None, :] * weight * inner).sum(axis=1)
    norm = math.sqrt(math.pi) * math.exp(special.gammaln((D - 1) / 2) - special.gammaln(D / 2))
    cap = np.where(grid > 0, _first_coordinate_cdf(D, -np.sqrt(np.clip(1 - grid ** 2, 0, 1))),
                   0.0)
    vals = vals / norm + cap
    return grid, np.where(grid >= 1 / math.sqrt(2), high, np.clip(vals, 0.0, 1.0))


def max_coordinate_law(K: int, D: int, theta: float | np.ndarray) -> float | np.ndarray:
    """``F_{K,D}(theta) = P(max_{i <= K} z_i <= theta)``, z uniform on ``S^{D-1}``
    (``0 <= K <= D``; ``F_{0,.} = 1``). Exact for ``K <= 1`` and for ``theta >= 1/sqrt2``; the
    recursion of the module docstring otherwise."""
    K = check_int("K", K, lo=0)
    D = check_int("D", D, lo=max(1, K))
    th = np.asarray(theta, dtype=float)
    if np.isnan(th).any():
        raise ValueError("theta must not be NaN")
    if K == 0:
        out = np.ones_like(th)
    else:
        one = _first_coordinate_cdf(D, th)
        if K == 1:
            out = one
        else:
            grid, vals = _table(K, D)
            out = np.interp(th, grid, vals, left=0.0, right=1.0)
            high = th >= 1 / math.sqrt(2)
            out = np.where(high, np.clip(1.0 - K * (1.0 - one), 0.0, 1.0), out)
            out = np.where(th < -1.0 / math.sqrt(K), 0.0, out)
    return float(out) if np.ndim(theta) == 0 else out


def level_target(d: int, N: int, k: int, g_u: float | np.ndarray, g_max: float | np.ndarray,
                 rho: float | np.ndarray, c: float | np.ndarray) -> np.ndarray:
    """``E[t | F_k]`` on the level-k fiber (step 3): ``sign(c) 1[a > g_max] F_{N-k,d-k}(a/tau)``
    with ``a = (g_u + rho |c|)/sqrt2`` (the better key of the pair) and ``tau = rho sqrt(1 -
    c^2)`` (the query's norm in ``span(R_k, w)^perp``); ``g_max = max_{3<=j<=k} g_j`` (``-inf``
    for k = 2), ``rho = |P_{E_k} g|``. Vectorised over the scalars (broadcast)."""
    d = check_int("d", d, lo=3)
    N = check_int("N", N, lo=2, hi=d)
    k = check_int("k", k, lo=2, hi=N)
    g_u, g_max, rho, c = (np.asarray(x, dtype=float) for x in (g_u, g_max, rho, c))
    if (rho < 0).any() or (np.abs(c) > 1).any():
        raise ValueError("rho must be >= 0 and c must lie in [-1, 1]")
    a = (g_u + rho * np.abs(c)) / math.sqrt(2)
    tau = rho * np.sqrt(np.clip(1 - c * c, 0.0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = np.where(tau > 0, a / np.where(tau > 0, tau, 1.0), np.sign(a) * np.inf)
    law = np.asarray(max_coordinate_law(N - k, d - k, np.nan_to_num(theta, nan=0.0)))
    return np.sign(c) * (a > g_max) * law


def linear_forms(d: int, r: int, N: int, k: int) -> int:
    """``lambda_k = min(r + k - 1, n_k)``: the linear forms of w on ``E_k`` one head contributes
    at level k (step 4: a basis of ``row(W_h) + span(R_k)`` restricted to E_k)."""
    d = check_int("d", d, lo=3)
    r = check_int("r", r, lo=1, hi=d)
    N = check_int("N", N, lo=2, hi=d)
    k = check_int("k", k, lo=2, hi=N)
    return min(r + k - 1, level_fiber_dim(d, k))


def _inv(r: int, j: int) -> int:
    return math.comb(j + r - 1, r - 1) if j >= 0 else 0


def level_degree_count(d: int, r: int, N: int, k: int, l: int,
                       value_class: str = EQ2) -> int:
    """``D_l`` at level k (step 5): ``I(l-2) + I(l) + I(l+2) + lambda_k (I(l-1) + I(l+1))`` for
    Eq. 2, with the degree-1 sharpening ``D_1 <= 2r + lambda_k``; for value maps that may depend
    on the query every quadratic and linear form of w on ``E_k`` is counted (``n(n+1)/2`` and
    ``n``, no sharpening)."""
    lam = linear_forms(d, r, N, k)
    l = check_int("l", l, lo=0)
    value_class = check_choice("value_class", value_class, VALUE_CLASSES)
    n = level_fiber_dim(d, k)
    a, b = (1, lam) if value_class == EQ2 else (n * (n + 1) // 2, n)
    full = a * (_inv(r, l - 2) + _inv(r, l) + _inv(r, l + 2)) + b * (_inv(r, l - 1)
                                                                     + _inv(r, l + 1))
    if value_class == EQ2 and l == 1:
        return min(full, 2 * r + lam)
    return full
