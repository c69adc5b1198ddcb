"""Numerical witnesses of Lemma 5 of the certified bound (docs/derivations/lower_bound.md).

Pure mathematics, shared by the ``thm2.*`` claims and the tests: the dimension of the
O(d-r)-invariant degree-k harmonics, and the degree-l reach of one head's function space.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from workbench.core.harmonics import dim_harmonics, legendre_d


def invariant_harmonic_rank(d: int, r: int, k: int, seed: int) -> int:
    """Numerical rank of O(d-r)-averaged zonal harmonics of degree k, sampled on the sphere.

    The orbit average over the kernel sphere is exact (Gauss-Jacobi in the cosine to the
    kernel component of ``a``); the averaged functions span the invariant harmonics of degree k.
    """
    from scipy.special import roots_jacobi
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
    from scipy.special import roots_jacobi
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


def _row_space_monomials(x: np.ndarray, B: np.ndarray, l: int) -> list[np.ndarray]:
    """The monomials of degree ``<= l+2`` (the constant first) in the row-space coordinates
    ``x B^T`` at the nodes ``x``: every invariant harmonic that can reach degree l after
    multiplying by a quadratic."""
    v = x @ B.T
    mons = [np.ones(len(x))]
    for deg in range(1, l + 3):
        for c in itertools.combinations_with_replacement(range(B.shape[0]), deg):
            mons.append(np.prod(v[:, list(c)], axis=1))
    return mons


def head_degree_dimension(d: int, r: int, l: int, seed: int, fixed_form: bool = False) -> int:
    """``dim Pi_l V_h`` for one head of key-rank r, ``V_h = span{F(P_h w) q(w)}``.

    ``fixed_form=False``: q ranges over all quadratic forms (query-dependent value maps, count
    ``d(d+1)/2 D'_l``); ``True``: q is one random form ``w^T M w`` (Eq. 2, count ``D'_l``).

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
    mons = _row_space_monomials(x, B, l)
    if fixed_form:
        M = rng.standard_normal((d, d))
        quads = [np.einsum("ni,ij,nj->n", x, M + M.T, x)]
    else:
        quads = [x[:, i] * x[:, j] for i in range(d) for j in range(i, d)]
    F = np.stack([mo * q for mo in mons for q in quads], 1)
    return _degree_rank(x, wts, F, d, l, rng)


def _degree_rank(x: np.ndarray, wts: np.ndarray, F: np.ndarray, d: int, l: int,
                 rng: np.random.Generator) -> int:
    """Numerical rank of the degree-l parts of the feature columns ``F`` (values at the
    cubature points ``x`` of S^{d-1}): each is projected on H_l through ``N(d,l)``-spanning
    zonal harmonics with exact inner products."""
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


def fiber_head_rank(n: int, r: int, l: int, n_linear: int, seed: int) -> int:
    """``dim Pi_l V_h`` on the fiber S^{n-1} for one head beyond two keys
    (docs/derivations/beyond_two_keys.md, steps 6 and 8): ``V_h = {F_0(P w) q(w) +
    sum_k F_k(P w) l_k(w)}`` with one fixed random quadratic form q and ``n_linear`` fixed
    random linear forms, F ranging over the monomials of degree ``<= l+2`` in the r row-space
    coordinates (every invariant harmonic that can reach degree l). Exact cubature of degree
    ``2l+4``; the count of step 8 is ``D'_l + n_linear (I(l-1) + I(l+1))``."""
    rng = np.random.default_rng(seed)
    B = np.linalg.qr(rng.standard_normal((n, r)))[0].T
    x, wts = sphere_cubature(n, l + 3, 2 * l + 5)
    mons = _row_space_monomials(x, B, l)
    M = rng.standard_normal((n, n))
    forms = [np.einsum("ni,ij,nj->n", x, M + M.T, x)]
    forms += [x @ rng.standard_normal(n) for _ in range(n_linear)]
    F = np.stack([mo * q for mo in mons for q in forms], 1)
    return _degree_rank(x, wts, F, n, l, rng)


def marginal_cubature(d: int, p: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Cubature for the first ``p <= d-1`` coordinates of a uniform point of S^{d-1}, exact for
    polynomials of degree <= 2n-1 in those coordinates (Gauss-Jacobi, one coordinate at a time,
    each scaled by the radius left over)."""
    from scipy.special import roots_jacobi
    pts = np.zeros((1, 0))
    rad = np.ones(1)
    wts = np.ones(1)
    for k in range(1, p + 1):  # coordinate k of a uniform point on S^{d-k} of radius rad
        a = (d - k - 2) / 2
        t, wt = roots_jacobi(n, a, a)
        wt = wt / wt.sum()
        pts = np.concatenate([np.repeat(pts, n, 0), (rad[:, None] * t[None, :]).reshape(-1, 1)], 1)
        rad = (rad[:, None] * np.sqrt(1 - t * t)[None, :]).reshape(-1)
        wts = (wts[:, None] * wt[None, :]).reshape(-1)
    return pts, wts


def _monomials(x: np.ndarray, max_deg: int, min_deg: int = 0) -> list[np.ndarray]:
    cols = []
    for deg in range(min_deg, max_deg + 1):
        for c in itertools.combinations_with_replacement(range(x.shape[1]), deg):
            cols.append(np.prod(x[:, list(c)], axis=1) if c else np.ones(len(x)))
    return cols


def fixed_form_degree_rank(d: int, r: int, l: int, p: int, seed: int) -> tuple[int, int]:
    """Rank of ``Y -> Pi_l(q Y)`` over the O(d-r)-invariant Y, for one fixed quadratic form
    ``q(w) = a^T M a`` (M random symmetric) in the first ``p`` coordinates ``a`` (row space =
    the first r). Lemma 5' (docs/derivations/lower_bound.md): the rank is at most ``D'_l``.

    Everything is O(d-p)-invariant, so Pi_l is the projection onto the polynomials of degree
    <= l in ``a`` orthogonal to those of degree <= l-1, in L^2 of the exact marginal cubature
    (exact for every inner product used). Returns ``(rank, cap)`` with ``cap`` = the dimension
    of that degree-l block, ``C(l+p-1, p-1)``, which also bounds the rank.
    """
    if not 1 <= r < p <= d - 1:
        raise ValueError(f"need 1 <= r < p <= d-1 (got d={d}, r={r}, p={p})")
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((p, p))
    M = M + M.T
    a, wts = marginal_cubature(d, p, l + 4)  # degree <= 2l + 4 integrated exactly
    sw = np.sqrt(wts)[:, None]
    basis = np.stack(_monomials(a, l), 1) * sw
    Q = np.linalg.qr(basis)[0]
    cap = math.comb(l + p - 1, p - 1)
    block = Q[:, -cap:]  # Gram-Schmidt in degree order: the new degree-l directions
    q = np.einsum("ni,ij,nj->n", a, M, a)
    Y = np.stack(_monomials(a[:, :r], l + 2), 1)
    coef = (Y * q[:, None] * sw).T @ block
    s = np.linalg.svd(coef, compute_uv=False)
    return int((s > 1e-9 * s[0]).sum()), cap
