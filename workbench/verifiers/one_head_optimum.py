"""Is the Bayes head with value map M = I the best single head? A numerical search.

For one head whose key row space is the first ``r`` coordinates and a FIXED value map ``M``,
Lemma F1 of docs/derivations/fiber_bound.md with the exact per-fiber minimisation gives

    err(M) >= 1/2 (1 - E_z[N_z(M) / D_z(M)]),

with equality at M = I. Here ``z = P w`` (``c = |z|^2 ~ Beta(r/2, m/2)``, ``m = d - r``,
``rho^2 = 1 - c``), and on the fiber (Lemma F3, the harmonic components of ``q = w^T M w`` in v)

    N_z = lambda_0 (z^T S z + rho^2 tau)^2 + lambda_1 4 rho^2 |S_QP z|^2 / m
          + lambda_2 2 rho^4 ||S_QQ - tau I||_F^2 / (m (m + 2)),
    D_z = |M z|^2 + (rho^2 / m) ||M Q||_F^2,

``S`` the symmetric part of ``M``, ``tau = tr S_QQ / m`` and ``lambda_k(m, c)`` the Funk-Hecke
eigenvalues of the arcsine kernel on the fiber (``workbench.core.bounds.fiber_bound.fiber``). At M
= I every
fiber gives ``lambda_0``, so the functional is ``E_c lambda_0`` (``one_head_captured``).

:func:`captured_functional` evaluates ``E_z[N_z / D_z]``: Gauss-Legendre in ``phi`` with
``c = sin^2 phi`` (which removes the Beta endpoint singularities) and, for the direction of
``z``, a product rule on ``S^{r-1}`` (Gauss-Jacobi in each polar coordinate, equispaced on the
circle) folded over ``z -> -z`` (N and D are even in z), exact for ``r = 1``.
:func:`search_value_maps` maximises it over all ``d x d`` matrices from several seeded starts
(BFGS with the analytic gradient). A gap ``best - captured(I) <= 0`` is evidence, not proof,
that M = I is the exact one-head optimum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize
from scipy.special import beta as beta_fn
from scipy.special import roots_jacobi, roots_legendre

from workbench.core.bounds.fiber_bound.fiber import _eigen
from workbench.core.validation import check_dim, check_float, check_int

__all__ = ["OptimumSearch", "captured_functional", "search_value_maps"]

_NODES = 64  # Gauss-Legendre nodes in phi (c = sin^2 phi): E_c lambda_0 to ~1e-11
_MAX_DIRECTIONS = 8192  # the automatic direction rule stays at or below this many nodes
_MAX_NODES = 10**6  # an explicit direction rule may have at most this many folded nodes
_PENALTY = 1.0  # weight of (|M|_F^2 / d - 1)^2: fixes the scale the functional ignores


@dataclass(frozen=True)
class OptimumSearch:
    """Result of :func:`search_value_maps`. ``gap = best - captured_identity``: a gap above the
    quadrature resolution would be an M beating the Bayes head's value map I."""

    d: int
    r: int
    captured_identity: float
    best: float
    best_matrix: np.ndarray = field(compare=False, repr=False)  # Frobenius norm sqrt(d)
    starts: int
    evaluations: int
    gap: float
    start_values: tuple[float, ...]  # the value each start converged to
    stationarity: float  # max over starts of |grad| |M|_F at the end (scale free)
    seed: int
    nodes: int
    directions: int  # nodes per polar coordinate of S^{r-1}
    direction_nodes: int  # number of directions of z after folding z -> -z


@dataclass(frozen=True)
class _Rule:
    """Quadrature for E_z: c-nodes with weights (Beta density included) and the Funk-Hecke
    eigenvalues there, and unit directions of z with weights."""

    d: int
    r: int
    c: np.ndarray  # (J,)
    wc: np.ndarray  # (J,)
    lam: np.ndarray  # (3, J)
    u: np.ndarray  # (K, r)
    wu: np.ndarray  # (K,)


def _c_rule(r: int, m: int, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """``c = sin^2 phi``: the Beta(r/2, m/2) density becomes
    ``2 sin^{r-1} phi cos^{m-1} phi / B(r/2, m/2)`` on [0, pi/2], smooth at both ends."""
    x, w = roots_legendre(nodes)
    phi = (x + 1) * math.pi / 4
    wc = w * (math.pi / 4) * 2 * np.sin(phi) ** (r - 1) * np.cos(phi) ** (m - 1)
    return np.sin(phi) ** 2, wc / beta_fn(r / 2, m / 2)


def _sphere_rule(r: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Product rule on ``S^{r-1}``: ``u = (t, sqrt(1 - t^2) u')`` with ``t`` Gauss-Jacobi for the
    density ``(1 - t^2)^{(r-3)/2}`` and ``u'`` the rule on ``S^{r-2}``; ``2n`` equispaced points
    on the circle; ``+-1`` on ``S^0``. Symmetric under ``u -> -u``."""
    if r == 1:
        return np.array([[1.0], [-1.0]]), np.array([0.5, 0.5])
    if r == 2:
        ang = np.pi * np.arange(2 * n) / n
        return np.stack([np.cos(ang), np.sin(ang)], axis=1), np.full(2 * n, 1 / (2 * n))
    t, wt = roots_jacobi(n, (r - 3) / 2, (r - 3) / 2)
    wt = wt / wt.sum()
    sub, wsub = _sphere_rule(r - 1, n)
    u = np.concatenate(
        [np.concatenate([np.full((len(sub), 1), ti), math.sqrt(1 - ti * ti) * sub], 1) for ti in t]
    )
    return u, np.outer(wt, wsub).ravel()


def _fold(u: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Keep one node of each antipodal pair with twice the weight (the integrand is even)."""
    lead = np.argmax(np.abs(u) > 1e-12, axis=1)
    keep = u[np.arange(len(u)), lead] > 0
    if not np.isclose(w[keep].sum(), 0.5, atol=1e-12):  # the rule was not symmetric
        raise AssertionError("direction rule is not symmetric under u -> -u")
    return u[keep], 2 * w[keep]


def _auto_directions(r: int) -> int:
    """Largest n <= 32 whose folded rule (n^{r-1} nodes) has at most _MAX_DIRECTIONS; >= 2."""
    n = 2
    while n < 32 and (n + 1) ** (r - 1) <= _MAX_DIRECTIONS:
        n += 1
    return n


def _check_directions(directions: object, r: int) -> int:
    if directions is None:
        if 2 ** (r - 1) > _MAX_NODES:
            raise ValueError(f"directions must be given (1 for one node) when r > 20 (got r = {r})")
        return _auto_directions(r)
    hi = 64 if r <= 2 else max(1, int(round(_MAX_NODES ** (1 / (r - 1)))))
    while hi > 1 and hi ** (r - 1) > _MAX_NODES:  # at most _MAX_NODES folded directions
        hi -= 1
    return check_int("directions", directions, lo=1, hi=hi)


def _rule(d: int, r: int, nodes: int, directions: int) -> _Rule:
    m = d - r
    c, wc = _c_rule(r, m, nodes)
    lam = _eigen(m, c)  # looked up at call time (tests plant faults here)
    u, wu = _fold(*_sphere_rule(r, directions))
    return _Rule(d, r, c, wc, np.asarray(lam, dtype=np.float64), u, wu)


def _invariants(M: np.ndarray, u: np.ndarray, r: int) -> dict[str, np.ndarray]:
    """What N_z and D_z depend on: per direction u (rows, shape (1, K)) ``a = u^T S_PP u``,
    ``b = |S_QP u|^2``, ``e = |M_P u|^2``; per matrix ``tau = tr S_QQ / m``,
    ``B2 = ||S_QQ - tau I||_F^2``, ``mu = ||M Q||_F^2``."""
    m = M.shape[0] - r
    S = (M + M.T) / 2
    Sqq, Mq = S[r:, r:], M[:, r:]
    tau = np.trace(Sqq) / m
    Sqp_u = u @ S[r:, :r].T  # (K, m)
    Mp_u = u @ M[:, :r].T  # (K, d)
    return {
        "a": np.einsum("ki,ij,kj->k", u, S[:r, :r], u)[None, :],
        "b": np.sum(Sqp_u * Sqp_u, axis=1)[None, :],
        "e": np.sum(Mp_u * Mp_u, axis=1)[None, :],
        "tau": np.asarray(tau),
        "B2": np.asarray(np.sum(Sqq * Sqq) - m * tau * tau),
        "mu": np.asarray(np.sum(Mq * Mq)),
    }


_Terms = tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray]]


def _fiber_terms(inv: dict[str, np.ndarray], c: np.ndarray, lam: np.ndarray, m: int) -> _Terms:
    """Lemma F3 on the grid (c as a column, directions along rows): ``N_z``, ``D_z`` and their
    partial derivatives in the invariants. With ``|z|^2 = c``, ``rho^2 = 1 - c``:
    degree 0 of q is ``s0 = c a + rho^2 tau`` (norm^2 s0^2), degree 1 has norm^2
    ``4 rho^2 c b / m``, degree 2 ``2 rho^4 B2 / (m (m + 2))``; ``D = c e + rho^2 mu / m``."""
    rho2 = 1.0 - c
    l0, l1, l2 = lam[0], lam[1], lam[2]
    s0 = c * inv["a"] + rho2 * inv["tau"]
    k1 = 4 * rho2 * c / m
    k2 = 2 * rho2 * rho2 / (m * (m + 2))
    N = l0 * s0 * s0 + l1 * k1 * inv["b"] + l2 * k2 * inv["B2"]
    D = c * inv["e"] + rho2 * inv["mu"] / m
    dN = {"a": 2 * l0 * s0 * c, "tau": 2 * l0 * s0 * rho2, "b": l1 * k1, "B2": l2 * k2}
    dD = {"e": c, "mu": rho2 / m}
    return N, D, dN, dD


def _value_and_grad(M: np.ndarray, q: _Rule, grad: bool) -> tuple[float, np.ndarray | None]:
    """``E_z[N_z / D_z]`` on the rule ``q`` and, with ``grad``, its gradient in M (d x d)."""
    r, m = q.r, q.d - q.r
    inv = _invariants(M, q.u, r)
    N, D, dN, dD = _fiber_terms(inv, q.c[:, None], q.lam[:, :, None], m)
    N, D = np.broadcast_arrays(N, D)
    ok = D > 0  # D = 0 forces N = 0 (M z = 0 and M Q = 0): such a fiber contributes 0
    Dsafe = np.where(ok, D, 1.0)
    W = q.wc[:, None] * q.wu[None, :]
    value = float(np.sum(W * np.where(ok, N / Dsafe, 0.0)))
    if not grad:
        return value, None
    gN = np.where(ok, W / Dsafe, 0.0)  # dF/dN on the grid
    gD = -gN * N / Dsafe  # dF/dD
    g: dict[str, np.ndarray] = {}
    for key in inv:
        gk = gN * dN.get(key, 0.0) + gD * dD.get(key, 0.0)
        g[key] = np.sum(gk, axis=0) if key in ("a", "b", "e") else np.asarray(np.sum(gk))
    S = (M + M.T) / 2
    Sqq, Mq, u = S[r:, r:], M[:, r:], q.u
    G = np.zeros_like(M)
    G[:r, :r] += np.einsum("k,ki,kj->ij", g["a"], u, u)  # d(u^T M u)/dM = u u^T
    Gb = np.einsum("k,ka,ki->ai", g["b"], u @ S[r:, :r].T, u)  # S_QP = (M_QP + M_PQ^T) / 2
    G[r:, :r] += Gb
    G[:r, r:] += Gb.T
    G[:, :r] += 2 * np.einsum("k,ka,ki->ai", g["e"], u @ M[:, :r].T, u)
    tau = np.trace(Sqq) / m
    G[r:, r:] += g["tau"] * np.eye(m) / m + g["B2"] * 2 * (Sqq - tau * np.eye(m))
    G[:, r:] += g["mu"] * 2 * Mq
    return value, G


def _fiber_nd(M: np.ndarray, z: np.ndarray, r: int) -> tuple[float, float]:
    """``(N_z(M), D_z(M))`` on the single fiber over ``z`` in R^r (``0 < |z| < 1``)."""
    c = float(z @ z)
    lam = _eigen(M.shape[0] - r, np.array([c]))
    inv = _invariants(M, (z / math.sqrt(c))[None, :], r)
    N, D, _, _ = _fiber_terms(inv, np.array([[c]]), np.asarray(lam)[:, :, None], M.shape[0] - r)
    return float(np.squeeze(N)), float(np.squeeze(D))


def _check_dr(d: object, r: object) -> tuple[int, int]:
    dd = check_dim(d)
    return dd, check_int("r", r, lo=1, hi=dd - 1)


def _check_matrix(M: object, d: int) -> np.ndarray:
    A = np.asarray(M, dtype=np.float64)
    if A.shape != (d, d):
        raise ValueError(f"M must be a {d} x {d} matrix (got shape {A.shape})")
    if not np.all(np.isfinite(A)) or not np.any(A):
        raise ValueError("M must be finite and nonzero")
    return A


def captured_functional(
    M: object, d: int, r: int, *, nodes: int = _NODES, directions: int | None = None
) -> float:
    """``E_z[N_z(M) / D_z(M)]`` for one head with key row space ``span(e_1..e_r)`` and the fixed
    value map ``M`` (Lemmas F1-F3): ``1/2 (1 - value)`` lower-bounds its D_2 error (N = 2).

    ``nodes``: Gauss-Legendre nodes in ``phi`` (``c = sin^2 phi``); ``directions``: nodes per
    polar coordinate of the direction of z (ignored for ``r = 1``, where ``+-1`` is exact;
    ``None``: the largest n <= 32 with at most 8192 folded directions, n^{r-1}, at least 2).
    Invariant under ``M -> a M`` (``a != 0``); equals ``E_c lambda_0`` at ``M = I``.
    """
    d, r = _check_dr(d, r)
    A = _check_matrix(M, d)
    nodes = check_int("nodes", nodes, lo=2, hi=4096)
    directions = _check_directions(directions, r)
    return _value_and_grad(A, _rule(d, r, nodes, directions), grad=False)[0]


def search_value_maps(
    d: int,
    r: int,
    *,
    starts: int = 8,
    seed: int = 0,
    spread: float = 0.5,
    nodes: int = _NODES,
    directions: int | None = None,
    gtol: float = 1e-10,
    maxiter: int = 2000,
) -> OptimumSearch:
    """Multi-start maximisation of :func:`captured_functional` over all ``d x d`` value maps.

    Even-numbered starts are ``I + spread G``, odd ones ``G`` (``G`` standard normal, from
    ``numpy.random.default_rng(seed)``), scaled to ``|M|_F = sqrt(d)``; each runs BFGS with the
    analytic gradient on ``-F(M) + (|M|_F^2 / d - 1)^2`` (the penalty pins the scale F ignores;
    without it BFGS stalls on the flat radial direction). Deterministic under ``seed``.
    ``gap = best - captured(I)``; ``best`` is over the starts only (I itself is not a start).
    """
    d, r = _check_dr(d, r)
    starts = check_int("starts", starts, lo=1, hi=10_000)
    seed = check_int("seed", seed, lo=0)
    spread = check_float("spread", spread, lo=0.0, lo_open=True)
    nodes = check_int("nodes", nodes, lo=2, hi=4096)
    directions = _check_directions(directions, r)
    gtol = check_float("gtol", gtol, lo=0.0, lo_open=True)
    maxiter = check_int("maxiter", maxiter, lo=1)
    q = _rule(d, r, nodes, directions)
    at_identity = _value_and_grad(np.eye(d), q, grad=False)[0]
    rng = np.random.default_rng(seed)

    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        v, g = _value_and_grad(x.reshape(d, d), q, grad=True)
        assert g is not None
        s = x @ x / d - 1
        return -v + _PENALTY * s * s, -g.ravel() + _PENALTY * 4 * s * x / d

    evaluations, values, stationarity = 0, [], 0.0
    best, best_M = -math.inf, np.eye(d)
    for k in range(starts):
        G = rng.standard_normal((d, d))
        x0 = np.eye(d) + spread * G if k % 2 == 0 else G
        x0 *= math.sqrt(d) / np.linalg.norm(x0)  # the functional is scale invariant
        res = optimize.minimize(
            objective,
            x0.ravel(),
            jac=True,
            method="BFGS",
            options={"gtol": gtol, "maxiter": maxiter},
        )
        evaluations += int(res.nfev)
        Mk = res.x.reshape(d, d)
        vk, gk = _value_and_grad(Mk, q, grad=True)
        assert gk is not None
        stationarity = max(stationarity, float(np.linalg.norm(gk) * np.linalg.norm(Mk)))
        values.append(vk)
        if vk > best:
            best, best_M = vk, Mk
    best_M = best_M * math.sqrt(d) / np.linalg.norm(best_M)
    if np.trace(best_M) < 0:
        best_M = -best_M
    return OptimumSearch(
        d=d,
        r=r,
        captured_identity=at_identity,
        best=best,
        best_matrix=best_M,
        starts=starts,
        evaluations=evaluations,
        gap=best - at_identity,
        start_values=tuple(values),
        stationarity=stationarity,
        seed=seed,
        nodes=nodes,
        directions=directions,
        direction_nodes=len(q.u),
    )
