"""An independent reference for the multi-level bound M_N on D_N (docs/derivations/
long_contexts.md): brute force over real Haar frames, and a closed form of the level targets
written apart from ``workbench.core`` (only ``dim_harmonics``, ``legendre_d`` and the interval
helpers are reused).

- :func:`haar_keys`, :func:`brute_level_targets`: ``E[t | F_k]`` by averaging the nearest-key
  target over fresh Haar draws of the unseen keys ``x_{k+1..N}`` on a fixed fiber (Lemma L1-L2).
- :func:`max_coordinate_cdf` (``F_{K,D}``), :func:`closed_level_target`: Lemma L3's closed form,
  for the level's own fiber and for a coarser level seen on it.
- :func:`increments`: the orthogonal increments of Lemma L1.
- :func:`linear_form_count`, :func:`degree_one_count`, :func:`degree_count`: Lemmas L4-L5.
- :func:`level_energies`: brute-force level energies ``||Delta_j t||^2`` and degree energies
  ``Gamma_l^(j)`` with bounded-range intervals, for given (d, N, levels, degrees, samples, seed):
  the numbers the proved evaluation is confronted with.
- :func:`closed_level_energies`: the same energies from the closed form by quadrature in ``c``
  and Monte Carlo over the level's scalars.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from workbench.core.harmonics import dim_harmonics, legendre_d
from workbench.core.intervals import Estimate, mean_interval

__all__ = ["LevelEnergy", "LevelTerm", "brute_level_targets", "check_levels",
           "closed_level_energies", "closed_level_target", "conditional_head_score",
           "degree_count", "degree_one_count", "fiber_scalars", "fixed_space", "haar_keys",
           "increments", "level_energies", "level_terms", "linear_form_count",
           "max_coordinate_cdf", "partner_direction"]

GRID = 4001  # theta grid of the tabulated F_{K,D}, K >= 2
NODES = 160  # Gauss-Legendre nodes per smooth piece of F's recursion
C_NODES = 32  # Gauss-Legendre nodes per smooth piece of the c-quadrature


# ---------------------------------------------------------------- validation

def check_levels(d: int, N: int, levels: Sequence[int]) -> tuple[int, ...]:
    """``levels`` as a strictly increasing tuple in ``2..N`` with fibers of dimension
    ``n_k = d - k + 1 >= 3``; raises ``ValueError`` naming the argument."""
    if not (isinstance(d, int) and isinstance(N, int)) or not 3 <= N <= d:
        raise ValueError(f"N must be an integer with 3 <= N <= d (got d={d}, N={N})")
    lv = tuple(int(k) for k in levels)
    if not lv or any(b <= a for a, b in zip(lv, lv[1:])) or lv[0] < 2 or lv[-1] > N:
        raise ValueError(f"levels must increase strictly within 2..N={N} (got {levels})")
    if d - lv[-1] + 1 < 3:
        raise ValueError(f"levels must have fibers of dimension d - k + 1 >= 3 (got k={lv[-1]}, "
                         f"d={d})")
    return lv


# ---------------------------------------------------------------- brute force

def _orthonormalise(A: np.ndarray) -> np.ndarray:
    """Gram-Schmidt on the last axis' vectors ``A[..., j, :]`` (in order)."""
    out = np.array(A, dtype=float)
    for j in range(out.shape[-2]):
        v = out[..., j, :]
        for i in range(j):
            v = v - np.sum(v * out[..., i, :], -1, keepdims=True) * out[..., i, :]
        out[..., j, :] = v / np.linalg.norm(v, axis=-1, keepdims=True)
    return out


def haar_keys(batch: int, d: int, N: int, rng: np.random.Generator) -> tuple[np.ndarray,
                                                                                np.ndarray]:
    """``(X, y)``: ``X`` (batch, N, d) a Haar orthonormal N-frame (Gram-Schmidt of Gaussian
    vectors), ``y`` (batch, d) uniform on the sphere."""
    X = _orthonormalise(rng.standard_normal((batch, N, d)))
    y = rng.standard_normal((batch, d))
    return X, y / np.linalg.norm(y, axis=1, keepdims=True)


def _target(scores: np.ndarray) -> np.ndarray:
    """``t = 1[i* = 1] - 1[i* = 2]`` from scores ``<y, x_i>`` on the last axis."""
    i = scores.argmax(-1)
    return (i == 0).astype(float) - (i == 1).astype(float)


def brute_level_targets(X: np.ndarray, y: np.ndarray, levels: Sequence[int], inner: int,
                        rng: np.random.Generator) -> np.ndarray:
    """``(len(levels), batch)``: ``E[t | F_k]`` for each level k, each the mean of t over
    ``inner`` fresh draws of the unseen keys ``x_{k+1..N}``: a Haar frame of
    ``span(x_1..x_k)^perp`` (= ``span(u, x_3..x_k, w)^perp``), everything else kept."""
    B, N, d = X.shape
    out = np.empty((len(levels), B))
    seen_scores = np.einsum("bnd,bd->bn", X, y)
    for i, k in enumerate(levels):
        if k == N:
            out[i] = _target(seen_scores)
            continue
        G = rng.standard_normal((B, inner, N - k, d))
        G -= np.einsum("bmjs,bsd->bmjd", np.einsum("bmjd,bsd->bmjs", G, X[:, :k]), X[:, :k])
        frame = _orthonormalise(G)  # Haar in span(x_1..x_k)^perp
        unseen = np.einsum("bmjd,bd->bmj", frame, y)
        both = np.concatenate([np.broadcast_to(seen_scores[:, None, :k], (B, inner, k)),
                               unseen], axis=2)
        out[i] = _target(both).mean(1)
    return out


def increments(targets: np.ndarray) -> np.ndarray:
    """Lemma L1: ``Delta_0 = T_0``, ``Delta_j = T_j - T_{j-1}`` over the first axis (levels)."""
    out = np.array(targets, dtype=float)
    out[1:] = targets[1:] - targets[:-1]
    return out


# ---------------------------------------------------------------- the closed form

def _one_coordinate_cdf(D: int, theta: np.ndarray) -> np.ndarray:
    """``P(z_1 <= theta)`` for z uniform on S^{D-1} (``z_1^2 ~ Beta(1/2, (D-1)/2)``)."""
    from scipy import special
    th = np.clip(theta, -1.0, 1.0)
    if D == 1:
        return np.where(theta >= 1, 1.0, np.where(theta >= -1, 0.5, 0.0))
    return 0.5 + 0.5 * np.sign(th) * special.betainc(0.5, (D - 1) / 2, th * th)


@functools.lru_cache(maxsize=64)
def _cdf_table(K: int, D: int) -> np.ndarray:
    """``F_{K,D}`` on ``linspace(-1, 1, GRID)`` by the recursion over the first coordinate:
    given ``z_1 = sin(phi)`` the others are ``cos(phi)`` times a uniform point of S^{D-2}, so
    ``F_{K,D}(th) = int_{-pi/2}^{asin th} c_D cos^{D-2}(phi) F_{K-1,D-1}(th/cos phi) dphi``,
    split where the inner argument leaves (-1, 1)."""
    from scipy import special
    theta = np.linspace(-1.0, 1.0, GRID)
    if K == 1:
        return _one_coordinate_cdf(D, theta)
    prev = _cdf_table(K - 1, D - 1)
    x, wx = special.roots_legendre(NODES)
    norm = math.sqrt(math.pi) * special.gamma((D - 1) / 2) / special.gamma(D / 2)
    out = np.zeros(GRID)
    for i, th in enumerate(theta):
        top = math.asin(th)
        cuts = sorted({-math.pi / 2, top, *[s * math.acos(abs(th)) for s in (-1, 1)]})
        total = 0.0
        for a, b in zip(cuts, cuts[1:]):
            if b <= a or a >= top:
                continue
            b = min(b, top)
            phi = (a + b) / 2 + (b - a) / 2 * x
            cos = np.cos(phi)
            inner = np.interp(th / np.maximum(cos, 1e-300), theta, prev, left=0.0, right=1.0)
            total += (b - a) / 2 * float(wx @ (cos ** (D - 2) * inner))
        out[i] = total / norm
    return np.clip(out, 0.0, 1.0)


def max_coordinate_cdf(K: int, D: int, theta: np.ndarray) -> np.ndarray:
    """``F_{K,D}(theta)``: the law (CDF) of the largest of K coordinates of a uniform point of
    S^{D-1} (``F_{0,D} = 1``). Exact for K = 1 (incomplete beta), tabulated by quadrature for
    K >= 2 (linear interpolation on a 4001-point grid)."""
    if not (0 <= K <= D):
        raise ValueError(f"K must satisfy 0 <= K <= D (got K={K}, D={D})")
    th = np.asarray(theta, dtype=float)
    if K == 0:
        return np.ones_like(th)
    if K == 1:
        return _one_coordinate_cdf(D, th)
    return np.interp(th, np.linspace(-1.0, 1.0, GRID), _cdf_table(K, D), left=0.0, right=1.0)


def closed_level_target(d: int, N: int, k: int, g_u: np.ndarray, g_seen: np.ndarray,
                        rho: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Lemma L3: ``E[t | F_k]`` from the scalars of a level-m fiber, ``m = 2 + g_seen.shape[-1]
    >= k``: ``g_u``, ``g_seen = (g_3..g_m)``, ``rho = rho_m`` and ``c = <pole_m, w>``.
    ``a = (g_u + rho|c|)/sqrt2``, ``tau^2 = rho^2 (1 - c^2) + sum_{k<j<=m} g_j^2`` and the
    target ``sign(c) 1[a > max_{3<=j<=k} g_j] F_{N-k, d-k}(a/tau)``."""
    m = 2 + g_seen.shape[-1]
    if not 2 <= k <= min(m, N):
        raise ValueError(f"k must satisfy 2 <= k <= min(m, N) (got k={k}, m={m}, N={N})")
    a = (g_u + rho * np.abs(c)) / math.sqrt(2)
    beats = (a > g_seen[..., :k - 2].max(-1)) if k > 2 else np.ones_like(a, dtype=bool)
    tau = np.sqrt(rho**2 * (1 - c**2) + (g_seen[..., k - 2:] ** 2).sum(-1))
    F = max_coordinate_cdf(N - k, d - k, a / np.maximum(tau, 1e-300))
    return np.sign(c) * beats * F


def fiber_scalars(X: np.ndarray, y: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray,
                                                                   np.ndarray, np.ndarray]:
    """``(g_u, g_seen, rho, c)`` of the level-m fiber read off keys and queries (y taken as
    ``g/|g|``: the target is scale-free, so ``|g| = 1`` here)."""
    u = (X[:, 0] + X[:, 1]) / math.sqrt(2)
    w = (X[:, 0] - X[:, 1]) / math.sqrt(2)
    g_u = np.einsum("bd,bd->b", u, y)
    g_seen = np.einsum("bjd,bd->bj", X[:, 2:m], y)
    rho = np.sqrt(np.maximum(1 - g_u**2 - (g_seen**2).sum(1), 0.0))
    c = np.einsum("bd,bd->b", w, y) / np.maximum(rho, 1e-300)
    return g_u, g_seen, rho, c


# ---------------------------------------------------------------- the model's space (L4-L5)

def linear_form_count(d: int, r: int, k: int) -> int:
    """Lemma L4: ``lambda_k = min(r + k - 1, n_k)`` linear forms per head at level k."""
    return min(r + k - 1, d - k + 1)


def degree_one_count(r: int, lam: int) -> int:
    """Lemma L5: one head's degree-1 space has dimension at most ``2r + lambda``."""
    return 2 * r + lam


def degree_count(r: int, lam: int, l: int) -> int:
    """Lemma L5: ``D_l = I(l-2) + I(l) + I(l+2) + lambda (I(l-1) + I(l+1))``,
    ``I(j) = C(j + r - 1, r - 1)`` (0 for j < 0); at l = 1 the sharper ``2r + lambda``."""
    def inv(j: int) -> int:
        return math.comb(j + r - 1, r - 1) if j >= 0 else 0
    general = inv(l - 2) + inv(l) + inv(l + 2) + lam * (inv(l - 1) + inv(l + 1))
    return min(general, degree_one_count(r, lam)) if l == 1 else general


def fixed_space(W: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """Orthonormal rows spanning ``S_h = row(W_h) + span(R_k)`` (Lemma L4's rotations fix it)."""
    q, _ = np.linalg.qr(np.concatenate([W, seen], 0).T)
    return q.T


def partner_direction(w: np.ndarray, S: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``Q w`` for a random rotation Q fixing ``span(S)`` pointwise: ``P_S w`` kept, the rest
    turned to a uniform direction of ``span(S)^perp`` of the same length."""
    ps = S.T @ (S @ w)
    v = rng.standard_normal(w.shape)
    v -= S.T @ (S @ v)
    return ps + np.linalg.norm(w - ps) * v / np.linalg.norm(v)


def conditional_head_score(X: np.ndarray, y: np.ndarray, W: np.ndarray, b: np.ndarray, k: int,
                       inner: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Lemma L4's test head, on one draw ``X`` (N, d), ``y`` (d,) with rank-1 ``W`` (1, d): per
    draw of the unseen keys ``x_{k+1..N}`` (``inner`` Haar frames of ``span(x_1..x_k)^perp``),
    the score ``phi_1`` of a nonlinear Eq. 2 head (softmax over j of ``2 sin(3 W x_j + <b, y>)
    + (W x_j)^2 + 0.3 j``: a function of ``(W X, y)`` only) and the row-space part
    ``<W/|W|, sum_{j>k} phi_j x_j>``. Returns two arrays of length ``inner``."""
    Xi = np.repeat(X[None], inner, 0)
    N, d = X.shape
    G = rng.standard_normal((inner, N - k, d))
    G -= np.einsum("mjs,sd->mjd", np.einsum("mjd,sd->mjs", G, X[:k]), X[:k])
    for j in range(N - k):
        v = G[:, j]
        for i in range(j):
            v = v - np.sum(v * G[:, i], -1, keepdims=True) * G[:, i]
        G[:, j] = v / np.linalg.norm(v, axis=-1, keepdims=True)
    Xi[:, k:] = G
    z = np.einsum("rd,mjd->mjr", W, Xi)[..., 0]
    s = 2 * np.sin(3 * z + float(b @ y)) + z**2 + 0.3 * np.arange(N)
    phi = np.exp(s - s.max(1, keepdims=True))
    phi /= phi.sum(1, keepdims=True)
    vec = np.einsum("mj,mjd->md", phi[:, k:], Xi[:, k:]) @ W[0] / np.linalg.norm(W[0])
    return phi[:, 0], vec


# ---------------------------------------------------------------- energies

@dataclass(frozen=True)
class LevelEnergy:
    """One level ``k``: fiber dimension ``n = d - k + 1``, ``||Delta t||^2`` and
    ``Gamma_l`` per degree, each an :class:`Estimate` (or a float from quadrature)."""

    level: int
    n: int
    energy: Estimate
    degrees: dict[int, Estimate]


def _estimate(values: np.ndarray, half_range: float, level: float,
              nonnegative: bool = False) -> Estimate:
    """The ``bounded`` interval for values in ``[-half_range, half_range]``; for values in
    ``[0, half_range]`` (``nonnegative``: squares and energies) the empirical Bernstein one
    alone (the Chernoff root search of ``chernoff_interval`` fails to converge at some small
    means, e.g. 2.6e-4 from 500 values at level 0.9997)."""
    v = np.asarray(values, dtype=float)
    var = float(v.var(ddof=1)) if v.size > 1 else 0.0
    if nonnegative:
        return mean_interval(float(v.mean()), var, v.size, level, "bernstein", (0.0, half_range))
    return mean_interval(float(v.mean()), var, v.size, level, "bounded",
                         (-half_range, half_range))


def _check_common(d: int, N: int, levels: Sequence[int], degrees: Sequence[int], samples: int,
                  seed: int, inner: int) -> tuple[int, ...]:
    lv = check_levels(d, N, levels)
    if any((not isinstance(l, int)) or l < 1 or l % 2 == 0 for l in degrees):
        raise ValueError(f"degrees must be odd integers >= 1 (got {degrees})")
    if not isinstance(samples, int) or samples < 2:
        raise ValueError(f"samples must be an integer >= 2 (got {samples})")
    if not isinstance(inner, int) or inner < 1:
        raise ValueError(f"inner must be an integer >= 1 (got {inner})")
    if not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0 (got {seed})")
    return lv


def level_energies(d: int, N: int, levels: Sequence[int], degrees: Sequence[int] = (1,),
                   samples: int = 4000, seed: int = 0, *, inner: int = 32, draws: int = 4,
                   level: float = 0.999) -> list[LevelEnergy]:
    """Brute-force energies of the increments over ``levels`` (``k_0 = levels[0]``, which the
    bound takes as 2), each from ``samples`` real D_N draws:

    - ``||Delta_j t||^2`` as the mean of ``Delta^a Delta^b``, two brute-force increments with
      independent inner draws (unbiased; values in [-1, 1]: on ``F_2`` and above t is 0 or
      ``sign<y, w>``);
    - ``Gamma_l^(j) = E gamma_l^2`` on the level-k_j fiber: ``draws`` directions w on that fiber
      (same ``R_k``, y), each with its own brute-force increment, and the U-statistic of
      ``Delta(w) Z_l(c) Delta(w') Z_l(c')`` over pairs, ``Z_l = sqrt(N(n,l)) P_l`` the unit zonal
      harmonic about the pole (values in ``[-N(n,l), N(n,l)]``).

    Intervals: the ``bounded`` interval of ``workbench.core.intervals`` at ``level`` each."""
    lv = _check_common(d, N, levels, degrees, samples, seed, inner)
    if not isinstance(draws, int) or draws < 2:
        raise ValueError(f"draws must be an integer >= 2 (got {draws})")
    rng = np.random.default_rng(seed)
    X, y = haar_keys(samples, d, N, rng)
    pa = increments(brute_level_targets(X, y, lv, inner, rng))
    pb = increments(brute_level_targets(X, y, lv, inner, rng))
    out = []
    for j, k in enumerate(lv):
        n = d - k + 1
        energy = _estimate(pa[j] * pb[j], 1.0, level)
        per_degree: dict[int, Estimate] = {}
        if degrees:
            deltas, cs = _fiber_increments(X, y, lv[:j + 1], draws, inner, rng)
            for l in degrees:
                z = math.sqrt(dim_harmonics(n, l)) * legendre_d(n, l, cs)[l] * deltas
                s = z.sum(0)
                u = (s * s - (z * z).sum(0)) / (draws * (draws - 1))
                per_degree[l] = _estimate(u, float(dim_harmonics(n, l)), level)
        out.append(LevelEnergy(k, n, energy, per_degree))
    return out


def _fiber_increments(X: np.ndarray, y: np.ndarray, lv: Sequence[int], draws: int, inner: int,
                      rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``(draws, batch)`` increments of the last level of ``lv`` and the coordinates ``c`` of
    ``draws`` fresh directions w on the level-k fiber (u, x_3..x_k and y kept)."""
    B, N, d = X.shape
    k = lv[-1]
    u = (X[:, 0] + X[:, 1]) / math.sqrt(2)
    R = np.concatenate([u[:, None], X[:, 2:k]], 1)
    pe_y = y - np.einsum("bk,bkd->bd", np.einsum("bkd,bd->bk", R, y), R)
    pole = pe_y / np.linalg.norm(pe_y, axis=1, keepdims=True)
    deltas, cs = np.empty((draws, B)), np.empty((draws, B))
    for i in range(draws):
        v = rng.standard_normal((B, d))
        v -= np.einsum("bk,bkd->bd", np.einsum("bkd,bd->bk", R, v), R)
        w = v / np.linalg.norm(v, axis=1, keepdims=True)
        Xw = np.concatenate([((u + w) / math.sqrt(2))[:, None], ((u - w) / math.sqrt(2))[:, None],
                             X[:, 2:]], 1)
        deltas[i] = increments(brute_level_targets(Xw, y, lv, inner, rng))[-1]
        cs[i] = np.einsum("bd,bd->b", pole, w)
    return deltas, cs


def _draw_fiber(d: int, m: int, samples: int,
                rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scalars of the level-m fiber in Gaussian form: ``g_u``, ``g_3..g_m`` i.i.d. N(0,1) and
    ``rho ~ chi_{n_m}`` (the pole's coordinate c is integrated by quadrature)."""
    g_u = rng.standard_normal(samples)
    g_seen = rng.standard_normal((samples, m - 2))
    rho = np.sqrt(rng.chisquare(d - m + 1, samples))
    return g_u, g_seen, rho


def _c_nodes(n: int, jumps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes on (0, 1) split at each row's ``jumps`` (B, J) with the density of
    ``c`` on S^{n-1}, ``(1 - c^2)^{(n-3)/2}/B(1/2, (n-1)/2)``, folded onto c > 0 (factor 2)."""
    from scipy import special
    x, wx = special.roots_legendre(C_NODES)
    cuts = np.sort(np.concatenate([np.zeros((len(jumps), 1)), np.clip(jumps, 0, 1),
                                   np.ones((len(jumps), 1))], 1), 1)
    a, b = cuts[:, :-1, None], cuts[:, 1:, None]
    c = ((a + b) / 2 + (b - a) / 2 * x).reshape(len(jumps), -1)
    wts = ((b - a) / 2 * wx).reshape(len(jumps), -1)
    dens = 2 * (1 - c * c) ** ((n - 3) / 2) / special.beta(0.5, (n - 1) / 2)
    return c, wts * dens


def _closed_level(d: int, N: int, lv: tuple[int, ...], j: int, samples: int,
                  rng: np.random.Generator) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """``(n, c, weights, Delta)`` on the level-``lv[j]`` fiber: ``samples`` draws of its
    scalars, the c-quadrature split at the jumps of the level's and the coarser level's target,
    and the increment (the coarser level seen on this fiber) at the nodes."""
    k = lv[j]
    n = d - k + 1
    g_u, g_seen, rho = _draw_fiber(d, k, samples, rng)
    pair = lv[max(j - 1, 0):j + 1]
    jumps = [((math.sqrt(2) * g_seen[:, :kk - 2].max(1) if kk > 2 else -np.inf) - g_u) / rho
             for kk in pair]
    c, wts = _c_nodes(n, np.stack(jumps, 1))
    targets = [closed_level_target(d, N, kk, g_u[:, None], g_seen[:, None, :], rho[:, None], c)
               for kk in pair]
    return n, c, wts, increments(np.stack(targets))[-1]


def closed_level_energies(d: int, N: int, levels: Sequence[int], degrees: Sequence[int] = (1,),
                          samples: int = 4000, seed: int = 0, *,
                          level: float = 0.999) -> list[LevelEnergy]:
    """The energies of :func:`level_energies` from the closed form: on the level-k_j fiber,
    ``Delta_j t`` (Lemma L3, the coarser level seen on the finer fiber) is integrated in c by
    Gauss-Legendre split at its jumps, giving ``||Delta_j t||^2_c`` and ``gamma_l^2`` exactly
    per scalar draw; their means over ``samples`` draws of the scalars carry ``bounded``
    intervals (values in [0, 1])."""
    lv = _check_common(d, N, levels, degrees, samples, seed, 1)
    rng = np.random.default_rng(seed)
    out = []
    for j, k in enumerate(lv):
        n, c, wts, delta = _closed_level(d, N, lv, j, samples, rng)
        energy = _estimate(np.minimum((wts * delta**2).sum(1), 1.0), 1.0, level, True)
        per_degree = {}
        for l in degrees:
            z = math.sqrt(dim_harmonics(n, l)) * legendre_d(n, l, c)[l]
            per_degree[l] = _estimate(np.minimum((wts * z * delta).sum(1) ** 2, 1.0), 1.0,
                                      level, True)
        out.append(LevelEnergy(k, n, energy, per_degree))
    return out


@dataclass(frozen=True)
class LevelTerm:
    """One level's share of the Result's sum (before the factor ``(N - 1)/2``): ``kept``
    estimates ``sum_{l <= L} Gamma_l (1 - min(1, H D_l / N(n, l)))`` and ``tail`` the energy
    above L, ``||Delta t||^2 - sum_{l <= L} Gamma_l`` (at most all of it lost), both from the
    same draws."""

    level: int
    lam: int
    kept: Estimate
    tail: Estimate


def level_terms(d: int, r: int, H: int, N: int, levels: Sequence[int], lams: Sequence[int],
                max_degree: int = 41, samples: int = 2000, seed: int = 0, *,
                sharp_degree_one: bool = True, level: float = 0.999) -> list[LevelTerm]:
    """The Result level by level from the closed form, with ``lams[j]`` linear forms per head
    at level ``levels[j]`` (Lemma L4's ``linear_form_count``; at the single level k = N there
    are no unseen keys and ``min(N - 1, n)`` suffice, the count of the bound beyond two keys).
    ``sharp_degree_one``: ``D_1 = 2r + lambda`` (Lemma L5), else the general formula. The bound
    lies in ``(N - 1)/2 [sum kept, sum kept + sum tail]``, up to the intervals."""
    lv = _check_common(d, N, levels, (), samples, seed, 1)
    if len(lams) != len(lv) or any(int(x) < 0 for x in lams):
        raise ValueError(f"lams must give one count >= 0 per level (got {lams})")
    if not (isinstance(H, int) and H >= 1 and isinstance(r, int) and 1 <= r <= d):
        raise ValueError(f"H must be an integer >= 1 and r in 1..d (got H={H}, r={r})")
    if not isinstance(max_degree, int) or max_degree < 1:
        raise ValueError(f"max_degree must be an integer >= 1 (got {max_degree})")

    def inv(j: int) -> int:
        return math.comb(j + r - 1, r - 1) if j >= 0 else 0

    degrees = range(1, max_degree + 1, 2)
    rng = np.random.default_rng(seed)
    out = []
    for j, lam in enumerate(int(x) for x in lams):
        n, c, wts, delta = _closed_level(d, N, lv, j, samples, rng)
        kept = np.zeros(samples)
        gam_total = np.zeros(samples)
        for l in degrees:
            count = (degree_count(r, lam, l) if sharp_degree_one else
                     inv(l - 2) + inv(l) + inv(l + 2) + lam * (inv(l - 1) + inv(l + 1)))
            z = math.sqrt(dim_harmonics(n, l)) * legendre_d(n, l, c)[l]
            g2 = (wts * z * delta).sum(1) ** 2
            kept += g2 * (1 - min(1.0, H * count / dim_harmonics(n, l)))
            gam_total += g2
        tail = np.maximum((wts * delta**2).sum(1) - gam_total, 0.0)
        out.append(LevelTerm(lv[j], lam, _estimate(np.minimum(kept, 1.0), 1.0, level, True),
                             _estimate(np.minimum(tail, 1.0), 1.0, level, True)))
    return out
