"""Numerical witnesses of Lemma 5 of the certified bound (docs/derivations/lower_bound.md).

Pure mathematics, shared by the ``thm2.*`` claims and the tests: the dimension of the
O(d-r)-invariant degree-k harmonics, and the degree-l reach of one head's function space.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.special import roots_jacobi

from workbench.core.harmonics import dim_harmonics, legendre_d


def invariant_harmonic_rank(d: int, r: int, k: int, seed: int) -> int:
    """Numerical rank of O(d-r)-averaged zonal harmonics of degree k, sampled on the sphere.

    The orbit average over the kernel sphere is exact (Gauss-Jacobi in the cosine to the
    kernel component of ``a``); the averaged functions span the invariant harmonics of degree k.
    """
    rng = np.random.default_rng(seed)
    m = d - r
    expected = math.comb(k + r - 1, r - 1)
    n_feat, n_pts = 3 * expected + 12, 4 * dim_harmonics(d, k) + 20
    a = rng.standard_normal((n_feat, d))
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    w = rng.standard_normal((n_pts, d))
    w /= np.linalg.norm(w, axis=1, keepdims=True)
    if m >= 2:
        tau, om = roots_jacobi(k + 2, (m - 3) / 2, (m - 3) / 2)
        om = om / om.sum()
    else:
        tau, om = np.array([-1.0, 1.0]), np.array([0.5, 0.5])
    base = w[:, :r] @ a[:, :r].T
    rad = np.linalg.norm(w[:, r:], axis=1)[:, None] * np.linalg.norm(a[:, r:], axis=1)[None, :]
    arg = base[None] + rad[None] * tau[:, None, None]
    F = np.tensordot(om, legendre_d(d, k, np.clip(arg, -1, 1))[k], axes=(0, 0))
    s = np.linalg.svd(F, compute_uv=False)
    return int((s > 1e-9 * s[0]).sum())


def sphere_cubature(d: int, n: int, n_circle: int) -> tuple[np.ndarray, np.ndarray]:
    """Product cubature on S^{d-1}, exact for polynomials of degree <= min(2n-1, n_circle-1):
    equispaced points on S^1, then Gauss-Jacobi in the first coordinate of each S^{k-1}."""
    ang = 2 * np.pi * np.arange(n_circle) / n_circle
    pts = np.stack([np.cos(ang), np.sin(ang)], 1)
    wts = np.full(n_circle, 1.0 / n_circle)
    for k in range(3, d + 1):
        t, wt = roots_jacobi(n, (k - 3) / 2, (k - 3) / 2)
        wt = wt / wt.sum()
        s = np.sqrt(1 - t * t)
        rest = (s[:, None, None] * pts[None]).reshape(-1, k - 1)
        pts = np.concatenate([np.repeat(t, len(pts))[:, None], rest], 1)
        wts = (wt[:, None] * wts[None]).reshape(-1)
    return pts, wts


def head_degree_dimension(d: int, r: int, l: int, seed: int) -> int:
    """``dim Pi_l V_h`` for one head of key-rank r, ``V_h = span{F(P_h w) q(w)}``.

    Only the invariant harmonics of degree ``<= l+2`` reach degree l after multiplying by a
    quadratic, so F ranges over the monomials of degree ``<= l+2`` in the row-space coordinates
    and q over the ``d(d+1)/2`` monomials ``w_i w_j``. Each feature is projected on H_l through
    ``N(d,l)``-spanning zonal harmonics; every inner product is exact (product cubature of
    degree ``2l+4``). Returns the numerical rank of the projected features.
    """
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((r, d))
    B = np.linalg.qr(W.T)[0].T  # orthonormal basis of the row space
    x, wts = sphere_cubature(d, l + 3, 2 * l + 5)
    v = x @ B.T
    mons = [np.ones(len(x))]
    for deg in range(1, l + 3):
        for c in itertools.combinations_with_replacement(range(r), deg):
            mons.append(np.prod(v[:, list(c)], axis=1))
    quads = [x[:, i] * x[:, j] for i in range(d) for j in range(i, d)]
    F = np.stack([mo * q for mo in mons for q in quads], 1)
    N = dim_harmonics(d, l)
    A = rng.standard_normal((2 * N + 5, d))
    A /= np.linalg.norm(A, axis=1, keepdims=True)
    coef = (F * wts[:, None]).T @ legendre_d(d, l, x @ A.T)[l] * math.sqrt(N)  # <f_j, Zbar_a>
    ev, U = np.linalg.eigh(legendre_d(d, l, A @ A.T)[l])  # Gram of the Zbar_a
    keep = ev > ev.max() * 1e-10
    if int(keep.sum()) != N:
        raise ValueError(f"zonal harmonics span {int(keep.sum())} dims, expected N = {N}")
    ortho = coef @ U[:, keep] / np.sqrt(ev[keep])  # coordinates in an orthonormal basis of H_l
    s = np.linalg.svd(ortho, compute_uv=False)
    return int((s > 1e-9 * s[0]).sum())
