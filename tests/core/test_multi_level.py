"""The multi-level bound M_N (docs/derivations/long_contexts_evaluation.md): its energies against
brute force over real Haar frames at d = 8, N = 4, its rigorous number against hand arithmetic,
and its contract (parts, coverage, bad input)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from workbench.core.bounds.sequence_length.multi_level import (
    covered,
    levels,
    multi_level_bound,
    rigorous_value,
)
from workbench.core.bounds.sequence_length.multi_level_energy import (
    cumulative_energy_lower,
    degree_one_estimate,
)
from workbench.core.bounds.value import MULTI_LEVEL, MULTI_LEVEL_ESTIMATE

D, N = 8, 4
DELTA = 1e-3


def _eb_half(x: np.ndarray, span: float) -> float:
    """Two-sided empirical Bernstein half-width (Maurer-Pontil) for values in a range ``span``."""
    m, L = x.size, math.log(4 / DELTA)
    return math.sqrt(2 * x.var(ddof=1) * L / m) + 7 * span * L / (3 * (m - 1))


def _complement_frames(rng: np.random.Generator, basis: np.ndarray, m: int) -> np.ndarray:
    """Per draw a Haar m-frame in the complement of ``basis`` (draws x d x b)."""
    g = rng.standard_normal((basis.shape[0], basis.shape[1], m))
    g -= basis @ np.einsum("bji,bjm->bim", basis, g)
    q, r = np.linalg.qr(g)
    return q * np.sign(np.diagonal(r, axis1=1, axis2=2))[:, None, :]


def _t(g: np.ndarray, u: np.ndarray, w: np.ndarray, seen: np.ndarray,
       unseen: np.ndarray) -> np.ndarray:
    """``t = 1[key 1 wins] - 1[key 2 wins]`` per draw."""
    s = np.einsum("bj,bjm->bm", g, np.concatenate([seen, unseen], axis=2))
    a1 = np.einsum("bj,bj->b", g, (u + w) / math.sqrt(2))
    a2 = np.einsum("bj,bj->b", g, (u - w) / math.sqrt(2))
    other = s.max(axis=1) if s.shape[1] else np.full(a1.shape, -np.inf)
    return (a1 > np.maximum(a2, other)).astype(float) - (a2 > np.maximum(a1, other))


def _draw_level(rng: np.random.Generator, k: int, m: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Haar frames: ``u``, the seen keys ``x_3..x_k``, a basis of ``E_k``, and g."""
    q = np.linalg.qr(rng.standard_normal((m, D, D)))[0]
    return q[:, :, 0], q[:, :, 1:k - 1], q[:, :, k - 1:], rng.standard_normal((m, D))


def _pole(rng: np.random.Generator, rest: np.ndarray) -> np.ndarray:
    w = np.einsum("bjn,bn->bj", rest, rng.standard_normal(rest.shape[::2]))
    return w / np.linalg.norm(w, axis=1, keepdims=True)


def _increment(rng: np.random.Generator, k: int, k_prev: int | None, u: np.ndarray,
               seen: np.ndarray, w: np.ndarray, g: np.ndarray) -> np.ndarray:
    """One unbiased draw of ``E[t|F_k] - E[t|F_k']`` at w: fresh unseen keys for each level
    (the coarser level forgets ``x_{k'+1..k}`` and completes its own frame)."""
    fine_basis = np.concatenate([u[:, :, None], seen, w[:, :, None]], axis=2)
    fine = _t(g, u, w, seen, _complement_frames(rng, fine_basis, N - k))
    if k_prev is None:
        return fine
    kept = seen[:, :, :k_prev - 2]
    coarse_basis = np.concatenate([u[:, :, None], kept, w[:, :, None]], axis=2)
    return fine - _t(g, u, w, kept, _complement_frames(rng, coarse_basis, N - k_prev))


def test_cumulative_energy_lower_bound_against_haar_frames() -> None:
    """``A_k = E[E[t|F_k]^2] >= 2/(2N - k)``: the product of two independent completions of the
    unseen keys at the same ``(R_k, w, y)`` is an unbiased draw of ``E[t|F_k]^2``."""
    rng = np.random.default_rng(3)
    m = 60000
    for k in (2, 3):
        u, seen, rest, g = _draw_level(rng, k, m)
        w = _pole(rng, rest)
        x = _increment(rng, k, None, u, seen, w, g) * _increment(rng, k, None, u, seen, w, g)
        assert float(cumulative_energy_lower(D, N, k)) <= x.mean() + _eb_half(x, 2.0)
    assert cumulative_energy_lower(D, N, N) == Fraction(2, N)  # E t^2 = P(the pair wins)


@pytest.mark.parametrize("k,k_prev", [(2, None), (3, 2), (4, 3)])
def test_degree_one_energy_against_haar_frames(k: int, k_prev: int | None) -> None:
    """``Gamma_1`` of the increment: the quadrature Monte Carlo against the U-statistic
    ``n <w, w'> Delta(w) Delta(w')`` over two independent poles on real Haar frames (no pole, no
    closed form, no ``F_{K,D}``), both within their empirical Bernstein intervals."""
    rng = np.random.default_rng(5 + k)
    m = 60000
    u, seen, rest, g = _draw_level(rng, k, m)
    n = rest.shape[2]
    w1, w2 = _pole(rng, rest), _pole(rng, rest)
    x = (n * np.einsum("bj,bj->b", w1, w2) * _increment(rng, k, k_prev, u, seen, w1, g)
         * _increment(rng, k, k_prev, u, seen, w2, g))
    est = degree_one_estimate(D, N, k, k_prev, 20000, seed=k)
    est_half = est.upper(DELTA / 2) - est.mean
    assert abs(est.mean - x.mean()) <= _eb_half(x, 8.0 * n) + est_half


def test_rigorous_value_by_hand() -> None:
    """(d, r, H, N) = (8, 1, 1, 4): levels 2, 3, 4 with n = 7, 6, 5 and lambda = 2, 3, 4, so
    ``m_1 = 4/7, 5/6, 1`` (``D_1 = 2 + lambda``) and every ``m_l`` for l >= 3 is smaller; weights
    3/7, 1/6, 0; Abel with ``A_2 >= 1/3``, ``A_3 >= 2/5``: ``3/2 [(3/7 - 1/6)/3 + (1/6)(2/5)] =
    97/420``."""
    assert rigorous_value(8, 1, 1, 4) == Fraction(97, 420)
    b = multi_level_bound(8, 1, 1, 4)
    lo, hi = b.part(MULTI_LEVEL.name).enclosure
    assert lo <= 97 / 420 <= hi and hi - lo < 1e-15


def test_parts_and_labels() -> None:
    b = multi_level_bound(8, 1, 1, 4)
    assert b.part(MULTI_LEVEL.name).rigorous
    est = b.part(MULTI_LEVEL_ESTIMATE.name)
    assert not est.rigorous and "levels 2..4" in est.method and "not certified" in est.method
    assert b.certified == b.part(MULTI_LEVEL.name).lower  # the estimate never decides
    assert multi_level_bound(16, 1, 1, 8).part(MULTI_LEVEL.name).truncation is not None


def test_every_n_up_to_d_has_a_bound_and_heads_lower_it() -> None:
    for n_keys in (3, 8, 14, 15, 16):
        vals = [rigorous_value(16, 1, h, n_keys) for h in (1, 2, 4)]
        assert vals[0] > 0 and vals[0] >= vals[1] >= vals[2]
        assert vals[0] <= Fraction(n_keys - 1, n_keys)  # uniform attention's error
    assert levels(16, 1, 1, 16) == tuple(range(2, 15))  # n_k <= 2 dropped
    query = rigorous_value(16, 1, 1, 8, "query-dependent-values")
    assert 0 <= query <= rigorous_value(16, 1, 1, 8)


def test_coverage_and_bad_input() -> None:
    assert covered(16, 2) is not None and covered(16, 17) is not None
    assert covered(16, 16) is None and covered(16, 3) is None
    with pytest.raises(ValueError, match="N must lie in"):
        multi_level_bound(16, 1, 1, 17)
    with pytest.raises(ValueError, match="value_class"):
        multi_level_bound(16, 1, 1, 8, "other")
    with pytest.raises(ValueError, match="max_degree"):
        multi_level_bound(16, 1, 1, 8, max_degree=0)
    with pytest.raises(ValueError, match="H"):
        multi_level_bound(16, 1, 0, 8)
