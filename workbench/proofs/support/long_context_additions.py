"""Numerical checks of the two unrefereed additions to the multi-level bound
(docs/derivations/long_contexts.md, "The two unrefereed additions"): their key identities by
brute force against their closed forms.

- A1, a level below the pair's midpoint: ``E[t | w, y] = tau(<y, w>)``,
  ``tau(c) = sign(c) F_W(|c|/sqrt(1 - c^2))``, F_W the law of
  ``(sqrt2 max_{j <= N-2} g_j - g_0)/|g|``, g ~ N(0, I_{d-1}) (here by an empirical CDF of
  ``cdf_draws`` draws, uniform error <= the DKW band :func:`dkw_band`).
- A2, i.i.d. keys (variant V1): ``E[<w_hat, f> | x_1, x_2, y] = s sign(c) F(a_max)^{N-2}
  + rho c K(a_max)``, F the law of one coordinate of a uniform point of S^{d-1},
  ``K(x) = E[M 1[M > x]]`` for M the largest of N - 2 such coordinates.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from workbench.proofs.support.long_context_reference import max_coordinate_cdf

__all__ = ["dkw_band", "iid_pair_target_brute", "iid_pair_target_closed",
           "midpoint_target_brute", "midpoint_target_closed"]


def dkw_band(n: int, delta: float) -> float:
    """Dvoretzky-Kiefer-Wolfowitz (Massart): ``sup |F_n - F| <= sqrt(log(2/delta)/(2n))``."""
    return math.sqrt(math.log(2 / delta) / (2 * n))


def midpoint_target_brute(X: np.ndarray, y: np.ndarray, inner: int,
                          rng: np.random.Generator) -> np.ndarray:
    """``E[t | w, y]`` by brute force: w and y kept, ``(u, x_3..x_N)`` redrawn ``inner`` times
    as a Haar frame of ``w^perp`` (so ``x_{1,2} = (u +- w)/sqrt2``)."""
    B, N, d = X.shape
    w = (X[:, 0] - X[:, 1]) / math.sqrt(2)
    G = rng.standard_normal((B, inner, N - 1, d))
    G -= np.einsum("bmj,bd->bmjd", np.einsum("bmjd,bd->bmj", G, w), w)
    for j in range(N - 1):
        v = G[:, :, j]
        for i in range(j):
            v = v - np.sum(v * G[:, :, i], -1, keepdims=True) * G[:, :, i]
        G[:, :, j] = v / np.linalg.norm(v, axis=-1, keepdims=True)
    u = G[:, :, 0]
    wy = np.einsum("bd,bd->b", w, y)[:, None]
    uy = np.einsum("bmd,bd->bm", u, y)
    scores = np.concatenate([((uy + wy) / math.sqrt(2))[..., None],
                             ((uy - wy) / math.sqrt(2))[..., None],
                             np.einsum("bmjd,bd->bmj", G[:, :, 1:], y)], -1)
    i = scores.argmax(-1)
    return ((i == 0).astype(float) - (i == 1).astype(float)).mean(1)


def midpoint_target_closed(d: int, N: int, c: np.ndarray, cdf_draws: int,
                           rng: np.random.Generator) -> np.ndarray:
    """``tau(c)`` with F_W as the empirical CDF of ``cdf_draws`` draws of W."""
    g = rng.standard_normal((cdf_draws, d - 1))
    W = (math.sqrt(2) * g[:, 1:N - 1].max(1) - g[:, 0]) / np.linalg.norm(g, axis=1)
    W.sort()
    x = np.abs(c) / np.sqrt(np.maximum(1 - c * c, 1e-300))
    return np.sign(c) * np.searchsorted(W, x, side="right") / cdf_draws


def _uniform(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    g = rng.standard_normal(shape)
    return g / np.linalg.norm(g, axis=-1, keepdims=True)


def iid_pair_target_brute(x1: np.ndarray, x2: np.ndarray, y: np.ndarray, N: int, inner: int,
                          rng: np.random.Generator) -> np.ndarray:
    """``E[<w_hat, f> | x_1, x_2, y]`` for i.i.d. uniform keys: the N - 2 competitors redrawn
    ``inner`` times, f the nearest key."""
    B, d = x1.shape
    comp = _uniform((B, inner, N - 2, d), rng)
    w_hat = (x1 - x2) / np.linalg.norm(x1 - x2, axis=1, keepdims=True)
    a_c = np.einsum("bmjd,bd->bmj", comp, y)
    a_1 = np.einsum("bd,bd->b", x1, y)[:, None]
    a_2 = np.einsum("bd,bd->b", x2, y)[:, None]
    best_c = a_c.argmax(-1)
    m = np.take_along_axis(a_c, best_c[..., None], -1)[..., 0]
    comp_w = np.take_along_axis(np.einsum("bmjd,bd->bmj", comp, w_hat), best_c[..., None],
                                -1)[..., 0]
    w1 = np.einsum("bd,bd->b", w_hat, x1)[:, None]
    w2 = np.einsum("bd,bd->b", w_hat, x2)[:, None]
    f_w = np.where((m > a_1) & (m > a_2), comp_w, np.where(a_1 > a_2, w1, w2))
    return f_w.mean(1)


def iid_pair_target_closed(x1: np.ndarray, x2: np.ndarray, y: np.ndarray, N: int) -> np.ndarray:
    """A2's V1 target ``s sign(c) F(a_max)^{N-2} + rho c K(a_max)``, with
    ``K(x) = 1 - x F(x)^{N-2} - int_x^1 F(m)^{N-2} dm`` by Gauss-Legendre."""
    d = x1.shape[1]
    t = np.einsum("bd,bd->b", x1, x2)
    s = np.sqrt((1 - t) / 2)
    u_hat = (x1 + x2) / np.linalg.norm(x1 + x2, axis=1, keepdims=True)
    w_hat = (x1 - x2) / np.linalg.norm(x1 - x2, axis=1, keepdims=True)
    py = y - np.einsum("bd,bd->b", y, u_hat)[:, None] * u_hat
    rho = np.linalg.norm(py, axis=1)
    c = np.einsum("bd,bd->b", py, w_hat) / rho
    g = np.einsum("bd,bd->b", x1 + x2, y)
    a_max = g / 2 + s * rho * np.abs(c)
    p = N - 2
    F = max_coordinate_cdf(1, d, a_max) ** p
    nodes, wts = special.roots_legendre(200)
    m = (a_max[:, None] + 1) / 2 + (1 - a_max[:, None]) / 2 * nodes
    integral = ((1 - a_max) / 2) * (max_coordinate_cdf(1, d, m) ** p @ wts)
    K = 1 - a_max * F - integral
    return s * np.sign(c) * F + rho * c * K

