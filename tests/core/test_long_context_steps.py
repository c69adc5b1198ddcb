"""The long-context derivation step by step (docs/derivations/long_contexts.md, Lemmas L1-L6
and the two additions): each lemma against a computation that does not use it, with the
reference ``workbench.proofs.support.long_context_reference`` (real Haar frames)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.core.intervals import mean_interval
from workbench.core.invariant_harmonics import fiber_head_rank
from workbench.proofs.support import long_context_additions as adds
from workbench.proofs.support import long_context_reference as ref


def _interval(v: np.ndarray, half_range: float = 1.0, level: float = 0.999) -> tuple[float, float]:
    est = mean_interval(float(v.mean()), float(v.var(ddof=1)), v.size, level, "bounded",
                        (-half_range, half_range))
    return est.lo, est.hi


def _brute(d: int, N: int, lv: tuple[int, ...], samples: int, seed: int, inner: int = 8):
    rng = np.random.default_rng(seed)
    X, y = ref.haar_keys(samples, d, N, rng)
    return (X, y, ref.brute_level_targets(X, y, lv, inner, rng),
            ref.brute_level_targets(X, y, lv, inner, rng))


# ---------------------------------------------------------------- L1

def test_l1_increments_are_orthogonal_and_add_up_to_two_over_n() -> None:
    lv = (2, 3, 5)
    _, _, ta, tb = _brute(9, 5, lv, 8000, seed=3)
    a, b = ref.increments(ta), ref.increments(tb)
    for i, j in ((0, 1), (0, 2), (1, 2)):
        lo, hi = _interval(a[i] * b[j])
        assert lo <= 0.0 <= hi and hi - lo < 0.06, (i, j, lo, hi)
    lo = sum(_interval(a[j] * b[j], level=1 - 1e-3 / 3)[0] for j in range(3))
    hi = sum(_interval(a[j] * b[j], level=1 - 1e-3 / 3)[1] for j in range(3))
    assert lo <= 2 / 5 <= hi, (lo, hi)
    # not subtracting the coarser level breaks both: E[T_i T_j] = E[T_i^2] > 0
    lo_ns, _ = _interval(ta[0] * tb[1])
    assert lo_ns > 0.1


def test_l1_dropped_levels_hold_the_rest() -> None:
    """N = d: the levels with n_k <= 2 (k = d - 1, d) are not used by the bound; the energy of
    the levels kept falls short of 2/N by what the dropped increments hold."""
    d = N = 6
    _, _, ta, tb = _brute(d, N, (2, 3, 4, 6), 8000, seed=5)
    a, b = ref.increments(ta), ref.increments(tb)
    lv = 1 - 1e-3 / 4
    kept = [_interval(a[j] * b[j], level=lv) for j in range(3)]
    dropped = _interval(a[3] * b[3], level=lv)
    assert sum(hi for _, hi in kept) < 2 / N  # short of 2/N beyond the intervals
    assert sum(lo for lo, _ in kept) + dropped[0] <= 2 / N <= sum(hi for _, hi in kept) + dropped[1]
    assert dropped[0] > 0  # the dropped levels hold a positive share


def test_l1_levels_with_small_fibers_are_refused() -> None:
    assert ref.check_levels(8, 8, (2, 4, 6)) == (2, 4, 6)
    for levels in ((2, 7), (3, 2), (1, 3), (2, 9), ()):
        with pytest.raises(ValueError, match="levels"):
            ref.check_levels(8, 8, levels)
    with pytest.raises(ValueError, match="N must"):
        ref.check_levels(8, 9, (2, 3))
    with pytest.raises(ValueError, match="samples"):
        ref.level_energies(8, 4, (2, 3), (1,), samples=1)
    with pytest.raises(ValueError, match="degrees"):
        ref.closed_level_energies(8, 4, (2, 3), (2,), samples=10)


# ---------------------------------------------------------------- L2-L3

@pytest.mark.parametrize("K,D", [(1, 5), (2, 2), (2, 6), (3, 7), (4, 5)])
def test_l3_max_coordinate_law_against_draws(K: int, D: int) -> None:
    rng = np.random.default_rng(K * 10 + D)
    n = 200_000
    g = rng.standard_normal((n, D))
    m = (g[:, :K] / np.linalg.norm(g, axis=1, keepdims=True)).max(1)
    th = np.linspace(-0.9, 0.95, 38)
    emp = (m[:, None] <= th).mean(0)
    band = adds.dkw_band(n, 1e-4)
    assert np.abs(ref.max_coordinate_cdf(K, D, th) - emp).max() < band + 2e-4


def test_l3_f_two_above_one_over_root_two_is_exact() -> None:
    th = np.linspace(0.72, 0.99, 10)  # two coordinates cannot both exceed 1/sqrt2
    for D in (3, 6, 11):
        exact = 1 - 2 * (1 - ref.max_coordinate_cdf(1, D, th))
        assert np.abs(ref.max_coordinate_cdf(2, D, th) - exact).max() < 2e-5


@pytest.mark.parametrize("d,N,lv", [(8, 4, (2, 3, 4)), (10, 6, (2, 4, 6))])
def test_l3_closed_target_against_brute_force(d: int, N: int, lv: tuple[int, ...]) -> None:
    X, y, a, b = _brute(d, N, lv, 10_000, seed=d + N)
    for k in lv[:-1]:
        for m in (k, lv[-1]):  # the level's own fiber, then a finer one
            g_u, g_seen, rho, c = ref.fiber_scalars(X, y, m)
            T = ref.closed_level_target(d, N, k, g_u, g_seen, rho, c)
            i = lv.index(k)
            lo, hi = _interval(np.sign(c) * (a[i] - T))
            assert lo <= 0 <= hi and hi - lo < 0.03, (k, m, lo, hi)
            lo, hi = _interval((a[i] - T) * (b[i] - T))
            assert lo <= 0 <= hi, (k, m, lo, hi)
    # the coarser level read on the finer fiber without its unseen Gaussians: visibly wrong
    g_u, g_seen, rho, c = ref.fiber_scalars(X, y, lv[-1])
    tau_wrong = ref.closed_level_target(d, N, lv[0], g_u, g_seen[:, :0], rho, c)
    lo, hi = _interval(np.sign(c) * (a[0] - tau_wrong))
    assert not lo <= 0 <= hi


def test_l3_energies_match_the_referees_numbers() -> None:
    """docs/paper.md: referee's brute force at d = 8, N = 4 (10^6 draws a level): ||Delta t||^2
    = 0.3405, 0.0622, 0.0973 and Gamma_1 = 0.2928, 0.0328, 0.0447 at levels 2, 3, 4."""
    closed = ref.closed_level_energies(8, 4, (2, 3, 4), (1,), samples=6000, seed=5)
    for e, energy, g1 in zip(closed, (0.3405, 0.0622, 0.0973), (0.2928, 0.0328, 0.0447)):
        assert e.energy.lo - 0.002 <= energy <= e.energy.hi + 0.002, (e.level, e.energy)
        assert e.degrees[1].lo - 0.002 <= g1 <= e.degrees[1].hi + 0.002, (e.level, e.degrees)


def test_brute_degree_one_energies_cover_the_closed_ones() -> None:
    brute = ref.level_energies(8, 4, (2, 3, 4), (1,), samples=3000, seed=7, inner=8)
    closed = ref.closed_level_energies(8, 4, (2, 3, 4), (1,), samples=3000, seed=8)
    for b, c in zip(brute, closed):
        assert b.energy.lo <= c.energy.hi and c.energy.lo <= b.energy.hi, b.level
        assert b.degrees[1].lo <= c.degrees[1].hi and c.degrees[1].lo <= b.degrees[1].hi


# ---------------------------------------------------------------- L4

def _fiber(rng: np.random.Generator, d: int = 8, N: int = 4, k: int = 3):
    X, y = ref.haar_keys(1, d, N, rng)
    X, y = X[0], y[0]
    u = (X[0] + X[1]) / math.sqrt(2)
    w = (X[0] - X[1]) / math.sqrt(2)
    return X, y, u, w, np.stack([u, *X[2:k]])


def _with_w(X: np.ndarray, u: np.ndarray, w: np.ndarray) -> np.ndarray:
    X2 = X.copy()
    X2[0], X2[1] = (u + w) / math.sqrt(2), (u - w) / math.sqrt(2)
    return X2


def test_l4_equal_row_projection_gives_equal_conditional_score() -> None:
    rng = np.random.default_rng(11)
    X, y, u, w, R = _fiber(rng)
    W, b = rng.standard_normal((1, 8)), rng.standard_normal(8)
    S = ref.fixed_space(W, R)
    w2 = ref.partner_direction(w, S, rng)
    assert np.abs(W @ w2 - W @ w).max() < 1e-12 and abs(np.linalg.norm(w2) - 1) < 1e-12
    assert np.abs(R @ w2).max() < 1e-12  # still on the fiber
    v = rng.standard_normal(8)
    v -= R.T @ (R @ v)
    w3 = v / np.linalg.norm(v)  # another point of the fiber, another W w
    s1, r1 = ref.conditional_head_score(X, y, W, b, 3, 40_000, rng)
    s2, r2 = ref.conditional_head_score(_with_w(X, u, w2), y, W, b, 3, 40_000, rng)
    s3, _ = ref.conditional_head_score(_with_w(X, u, w3), y, W, b, 3, 40_000, rng)
    lv = 1 - 1e-3 / 4
    for x1, x2 in ((s1, s2), (r1, r2)):
        lo1, hi1 = _interval(x1, level=lv)
        lo2, hi2 = _interval(x2, level=lv)
        assert lo1 <= hi2 and lo2 <= hi1
    lo1, hi1 = _interval(s1, level=lv)
    lo3, hi3 = _interval(s3, level=lv)
    assert hi3 < lo1 or hi1 < lo3, "the control must differ: the check has power on this fiber"


# ---------------------------------------------------------------- L5

def test_l5_linear_forms_and_degree_one_rank() -> None:
    rng = np.random.default_rng(13)
    for d, r, k in ((8, 1, 2), (10, 2, 3), (7, 2, 4), (6, 1, 4)):
        X, _ = ref.haar_keys(1, d, k + 1, rng)
        u = (X[0, 0] + X[0, 1]) / math.sqrt(2)
        R = np.stack([u, *X[0, 2:k]])
        S = ref.fixed_space(rng.standard_normal((r, d)), R)
        E = np.linalg.svd(np.eye(d) - R.T @ R)[0][:, :d - k + 1]
        forms = E.T @ rng.standard_normal((d, d)) @ S.T
        assert np.linalg.matrix_rank(forms) == ref.linear_form_count(d, r, k), (d, r, k)
    assert ref.linear_form_count(6, 1, 4) == 3  # n_k = 3 caps r + k - 1 = 4
    for n, r, lam in ((7, 1, 2), (9, 2, 3)):
        rank = fiber_head_rank(n, r, 1, lam, seed=17)
        assert rank == ref.degree_one_count(r, lam), (n, r, lam, rank)
    # A1's level 1 (nothing seen but w, y): r linear forms per head on S^{d-1}, D_1 = 3r
    assert fiber_head_rank(8, 1, 1, 1, seed=19) == ref.degree_one_count(1, 1) == 3
    # the general formula at l = 1 would say 2 + 2 lambda for r = 1: the sharper count is 2 + lambda
    assert ref.degree_count(1, 2, 1) == 4 and ref.degree_count(1, 2, 3) == 7


# ---------------------------------------------------------------- L6

def test_l6_parseval_per_level_and_total() -> None:
    lv = (2, 3, 4)
    closed = ref.closed_level_energies(8, 4, lv, tuple(range(1, 60, 2)), samples=500, seed=19)
    for e in closed:
        kept = sum(g.mean for g in e.degrees.values())
        assert kept <= e.energy.mean + 1e-9  # Bessel
        assert e.energy.mean - kept < 0.05 * e.energy.mean  # the tail above l = 59
    big = ref.closed_level_energies(8, 4, lv, (), samples=8000, seed=23,
                                    level=1 - 1e-3 / 3)
    lo, hi = sum(e.energy.lo for e in big), sum(e.energy.hi for e in big)
    assert lo <= 0.5 <= hi and hi - lo < 0.12


# ---------------------------------------------------------------- the additions

def test_addition_a1_midpoint_target() -> None:
    rng = np.random.default_rng(29)
    d, N = 8, 4
    X, y = ref.haar_keys(6000, d, N, rng)
    brute = adds.midpoint_target_brute(X, y, 16, rng)
    w = (X[:, 0] - X[:, 1]) / math.sqrt(2)
    c = np.einsum("bd,bd->b", w, y)
    draws = 200_000
    band = adds.dkw_band(draws, 1e-4)  # the empirical F_W's uniform error
    closed = adds.midpoint_target_closed(d, N, c, draws, rng)
    lo, hi = _interval(np.sign(c) * (brute - closed))
    assert lo - band <= 0 <= hi + band
    wrong = adds.midpoint_target_closed(d, N + 1, c, draws, rng)  # N - 1 competitors
    lo, hi = _interval(np.sign(c) * (brute - wrong))
    assert lo - band > 0


def test_addition_a2_iid_pair_target() -> None:
    rng = np.random.default_rng(31)
    d, N = 8, 4
    g = rng.standard_normal((4000, 3, d))
    g /= np.linalg.norm(g, axis=-1, keepdims=True)
    x1, x2, y = g[:, 0], g[:, 1], g[:, 2]
    brute = adds.iid_pair_target_brute(x1, x2, y, N, 32, rng)
    closed = adds.iid_pair_target_closed(x1, x2, y, N)
    lo, hi = _interval(brute - closed)
    assert lo <= 0 <= hi and hi - lo < 0.04
    # without the competitor's own component along w_hat (rho c K): visibly wrong
    t = np.einsum("bd,bd->b", x1, x2)
    s = np.sqrt((1 - t) / 2)
    w_hat = (x1 - x2) / np.linalg.norm(x1 - x2, axis=1, keepdims=True)
    a_max = np.einsum("bd,bd->b", x1 + x2, y) / 2 + np.abs(np.einsum("bd,bd->b", x1 - x2, y)) / 2
    wrong = s * np.sign(np.einsum("bd,bd->b", w_hat, y)) * ref.max_coordinate_cdf(1, d, a_max) ** 2
    lo, hi = _interval(np.sign(np.einsum("bd,bd->b", w_hat, y)) * (brute - wrong))
    assert not lo <= 0 <= hi


# ---------------------------------------------------------------- the Result at one level

@pytest.mark.parametrize("H", [1, 8])
def test_result_at_the_single_level_n_brackets_the_bound_beyond_two_keys(H: int) -> None:
    """With the single level k = N (no unseen keys: min(N - 1, n) forms, the general count),
    the Result is B_N; the reference's closed form brackets the core's rigorous n-keys value."""
    from workbench.core.bounds.sequence_length.n_keys import n_keys_bound

    d, r, N = 8, 1, 4
    term = ref.level_terms(d, r, H, N, (N,), (min(N - 1, d - N + 1),), max_degree=41,
                           samples=5000, seed=H, sharp_degree_one=False, level=1 - 5e-4)[0]
    lo, hi = n_keys_bound(d, r, H, N).enclosure
    f = (N - 1) / 2
    assert f * term.kept.lo <= hi and lo <= f * (term.kept.hi + term.tail.hi)
    assert f * (term.kept.hi + term.tail.hi) - f * term.kept.lo < 0.08
