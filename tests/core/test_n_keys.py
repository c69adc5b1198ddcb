"""The bound beyond two keys, step by step (docs/derivations/beyond_two_keys.md): each step
against a computation that does not use it."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from workbench.core import rigorous as rig
from workbench.core.bounds.sequence_length.n_keys import (
    degree_count,
    form_counts,
    n_keys_bound,
    n_keys_heads_needed,
    pair_factor,
    tail_factor,
)
from workbench.core.bounds.sequence_length.n_keys_energy import (
    atom_at_zero,
    coefficient,
    energy_enclosures,
    fiber_dim,
    kappa_density,
)
from workbench.core.harmonics import dim_harmonics, gegenbauer_mp, gegenbauer_transform
from workbench.core.invariant_harmonics import fiber_head_rank
from workbench.core.sphere import sample_instances
from workbench.proofs.support.n_keys_fiber import (
    fiber_coordinates,
    fiber_draws,
    gamma_float,
    independent_energies,
    nearest_t,
    u_statistic,
)


def test_step1_pair_identity() -> None:
    """||P0 v||^2 = (2/N) sum_{i<j} <w_ij, v>^2, P0 the projection on {sum c_j x_j: sum c = 0}."""
    rng = np.random.default_rng(0)
    for d, N in ((7, 3), (9, 5), (12, 10)):
        X = np.linalg.qr(rng.standard_normal((d, N)))[0].T  # N orthonormal keys
        v = rng.standard_normal(d)
        C = np.eye(N) - 1.0 / N  # the zero-sum coefficient space, projected in key coordinates
        p0v = X.T @ C @ (X @ v)
        pairs = sum(((X[i] - X[j]) @ v / math.sqrt(2)) ** 2 for i in range(N) for j in range(i))
        assert abs(p0v @ p0v - 2.0 / N * pairs) <= 1e-12 * (1 + pairs)


def test_step2_permutation_closure() -> None:
    """A model of Eq. 2 read on permuted keys is a model of Eq. 2 on the original ones (same
    W_h, M_h, scores permuted back), and the target does not move."""
    rng = np.random.default_rng(1)
    d, N, r = 8, 4, 2
    X = np.linalg.qr(rng.standard_normal((d, N)))[0].T
    y = rng.standard_normal(d)
    W = rng.standard_normal((r, d))
    M = rng.standard_normal((d, d))
    V = rng.standard_normal((r, d))

    def phi(keys: np.ndarray) -> np.ndarray:  # any score of (W X, y): here a softmax of a cubic
        s = np.tanh(keys @ W.T @ (V @ y)) ** 3 + (keys @ W.T).sum(1)
        e = np.exp(s - s.max())
        return e / e.sum()

    perm = np.array([2, 3, 0, 1])  # sends the pair (3, 4) to (1, 2)
    A_perm = M @ X[perm].T @ phi(X[perm])
    phi_back = np.empty(N)
    phi_back[perm] = phi(X[perm])  # the permuted scores, a probability vector of (W X, y)
    assert np.allclose(A_perm, M @ X.T @ phi_back, atol=1e-14)
    assert np.isclose(phi_back.sum(), 1.0) and (phi_back >= 0).all()
    near = X[np.argmax(X @ y)]
    assert np.array_equal(X[perm][np.argmax(X[perm] @ y)], near)


def test_step3_5_fiber_form_on_every_draw() -> None:
    """On D_N draws, t = 1[i*=1] - 1[i*=2] equals sign(c) 1[|c| > kappa] with
    c = <P_E y, w>/|P_E y| and kappa = (sqrt2 max_j <y, x_j> - <y, u>)/|P_E y|; and
    sqrt2 <w, f> = t."""
    for d, N in ((8, 3), (10, 6)):
        X, y = sample_instances(4000, N, d, points="orthonormal", generator=3)
        X, y = X.numpy(), y.numpy()
        w, c, kappa = fiber_coordinates(X, y)
        t = nearest_t(X, y)
        assert np.array_equal(t, np.sign(c) * (np.abs(c) > kappa))
        f = X[np.arange(len(X)), np.einsum("bnd,bd->bn", X, y).argmax(1)]
        assert np.allclose(math.sqrt(2) * np.einsum("bd,bd->b", w, f), t, atol=1e-12)


def _kappa_from_frames(batch: int, d: int, N: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    a = fiber_draws(batch, d, N, np.random.default_rng(seed))
    pole = np.einsum("bkd,bd->bk", a.basis, a.y)
    norm = np.linalg.norm(pole, axis=1)
    kappa = (math.sqrt(2) * np.einsum("bkd,bd->bk", a.X[:, 2:], a.y).max(1)
             - np.einsum("bd,bd->b", a.u, a.y)) / norm
    return kappa, pole / norm[:, None]


@pytest.mark.parametrize("d,N", [(9, 3), (10, 4), (10, 5)])
def test_step5_law_of_kappa_and_independence_from_the_pole(d: int, N: int) -> None:
    """kappa's law from the geometry matches the density of n_keys_energy (atom and three
    windows, binomial 5-sigma), and the pole's second moment is the same on both sides of a
    kappa threshold (independence)."""
    n_draws = 200_000
    kappa, pole = _kappa_from_frames(n_draws, d, N, 5)
    with rig.precision(64):
        p0 = float(atom_at_zero(d, N).mid())
        windows = [(0.0, 0.2), (0.2, 0.5), (0.5, 1.0)]
        nodes, weights = np.polynomial.legendre.leggauss(16)  # the density is smooth
        probs = [sum(wt * (hi - lo) / 2 * float(kappa_density(
            d, N, lo + (hi - lo) * (1 + x) / 2).real.mid()) for x, wt in zip(nodes, weights))
            for lo, hi in windows]
    for p, (lo, hi) in zip([p0, *probs], [(-np.inf, 0.0), *windows]):
        emp = np.mean((kappa > lo) & (kappa <= hi))
        assert abs(emp - p) <= 5 * math.sqrt(p * (1 - p) / n_draws) + 1e-4
    n = d - N + 1
    for side in (kappa <= 0.3, kappa > 0.3):
        m = n * pole[side, 0] ** 2
        assert abs(m.mean() - 1) <= 5 * m.std() / math.sqrt(side.sum())
        odd = pole[side, 0] * math.sqrt(n)
        assert abs(odd.mean()) <= 5 * odd.std() / math.sqrt(side.sum())


@pytest.mark.parametrize("n,r,l,linear", [(5, 1, 3, 2), (5, 1, 3, 3), (6, 2, 3, 2),
                                          (5, 2, 3, 4), (5, 1, 5, 2)])
def test_step6_8_linear_form_count(n: int, r: int, l: int, linear: int) -> None:
    """The numerical rank of one head's degree-l space on the fiber (one quadratic and some
    linear forms) is at most D_l, and above D'_l alone: the linear forms must be counted."""
    rank = fiber_head_rank(n, r, l, linear, seed=7)
    N_keys = linear + 1  # min(N - 1, n) = linear when N = linear + 1 <= n
    d = n + N_keys - 1
    assert rank <= degree_count(d, r, N_keys, l)
    quad_only, _ = form_counts(n, N_keys, "eq2")
    dprime = quad_only * sum(math.comb(k + r - 1, r - 1) for k in (l - 2, l, l + 2) if k >= 0)
    assert rank > dprime


@pytest.mark.parametrize("n,l,kappa", [(3, 1, 0.2), (5, 3, 0.6), (9, 5, 0.35), (13, 7, 0.0),
                                       (13, 9, -0.4)])
def test_step10_closed_form_against_quadrature(n: int, l: int, kappa: float) -> None:
    """gamma_l(kappa) (closed form, arb) against mpmath quadrature of
    sign(c) 1[|c| > kappa] on the normalised Gegenbauer polynomial of S^{n-1} (split at the
    jumps c = 0, +-kappa; the unsplit sign coefficient through gegenbauer_transform)."""
    import mpmath

    kp = max(kappa, 0.0)
    with mpmath.workdps(30):
        zonal = lambda c: gegenbauer_mp(n, l, c, dps=30)  # noqa: E731
        dens = lambda c: (1 - c * c) ** (mpmath.mpf(n - 3) / 2)  # noqa: E731
        norm = mpmath.beta(mpmath.mpf(1) / 2, mpmath.mpf(n - 1) / 2)
        quad = 2 * mpmath.quad(lambda c: zonal(c) * dens(c), [kp, 1]) / norm
    if kp == 0:
        quad0 = gegenbauer_transform(lambda c: mpmath.sign(c), n, l, dps=20)
        assert abs(float(quad) - float(quad0)) <= 1e-12
    assert abs(float(coefficient(n, l, kappa).mid()) - float(quad)) <= 1e-12
    assert abs(float(gamma_float(n, l, np.array([kappa]))[0]) - float(quad)) <= 1e-10


def test_step9_parseval_per_kappa_and_in_total() -> None:
    """sum_l gamma_l(k)^2 = P(|c| > k) for each k (partial sums approach it from below), and
    sum_l Gamma_l <= 2/N with the gap closing like the counted tail."""
    n = 7
    for k in (0.0, 0.3, 0.8):
        part = sum(float(gamma_float(n, l, np.array([k]))[0]) ** 2 for l in range(1, 4001, 2))
        exact = float(1 - _beta_cdf(k * k, n))
        assert part <= exact + 1e-12 and exact - part <= 2e-3
    for d, N in ((9, 3), (10, 4)):
        e = energy_enclosures(d, N, 121)
        total = sum(lo for lo, _ in e)
        assert total <= 2 / N and 2 / N - total <= 0.02
        assert 2 / N - sum(lo for lo, _ in e[:5]) > 2 / N - total  # every degree adds


def _beta_cdf(x: float, n: int) -> float:
    """P(c^2 <= x) for c a coordinate of a uniform point of S^{n-1}: I_x(1/2, (n-1)/2)."""
    from scipy.special import betainc

    return float(betainc(0.5, (n - 1) / 2, x))


@pytest.mark.parametrize("d,N,l", [(8, 3, 1), (9, 4, 1), (9, 5, 3)])
def test_energy_against_the_u_statistic(d: int, N: int, l: int) -> None:
    """Gamma_l against the U-statistic over two fiber draws with the same (R, y), 5 s.e."""
    vals = u_statistic(150_000, d, N, l, np.random.default_rng(11))
    lo, hi = energy_enclosures(d, N, l)[-1]
    se = vals.std() / math.sqrt(len(vals))
    assert abs(vals.mean() - (lo + hi) / 2) <= 5 * se


@pytest.mark.parametrize("d,N", [(8, 3), (10, 4), (11, 6)])
def test_energy_enclosures_contain_the_tensor_quadrature(d: int, N: int) -> None:
    """The arb enclosures against float tensor quadrature of kappa's definition (1e-9)."""
    indep = independent_energies(d, N, 9, grid=120)
    for (lo, hi), g in zip(energy_enclosures(d, N, 9), indep):
        assert lo - 1e-9 <= g <= hi + 1e-9
        assert hi - lo <= 1e-12


def test_bound_values_and_the_paper_range() -> None:
    """d = 16, r = 1, H = 8: the bound lies in 0.17-0.22 for N = 3..8 (docs/paper.md), each
    a rigorous enclosure; relative width <= 1e-6 at N = 4."""
    vals = [n_keys_bound(16, 1, 8, N) for N in (3, 4, 8)]
    assert all(0.17 <= v.value <= 0.222 and v.rigorous for v in vals)
    lo, hi = vals[1].enclosure
    assert (hi - lo) / hi <= 1e-6 and not vals[1].truncation_matters


def test_zero_where_the_heads_see_the_fiber_and_edges() -> None:
    n = fiber_dim(12, 4)
    assert n_keys_bound(12, n - 1, 1, 4).enclosure == (0.0, 0.0)
    assert n_keys_bound(12, 12, 1, 4).value == 0.0
    assert tail_factor(12, n - 1, 1, 4, 21) == 1
    assert pair_factor(5) == 2
    assert dim_harmonics(n, 3) > 0
    for bad in (dict(N=2), dict(N=11), dict(H=0), dict(r=13)):
        args = {"d": 12, "r": 1, "H": 1, "N": 4, **bad}
        with pytest.raises(ValueError, match=next(iter(bad))):
            n_keys_bound(**args)
    with pytest.raises(ValueError, match="value_class"):
        n_keys_bound(12, 1, 1, 4, "other")


def test_heads_needed_agrees_with_the_bound() -> None:
    res = n_keys_heads_needed(12, 1, 4, 0.2)
    assert n_keys_bound(12, 1, res.heads, 4).value <= 0.2
    assert n_keys_bound(12, 1, res.heads - 1, 4).value > 0.2


def test_query_dependent_values_are_weaker_and_counted_on_the_fiber() -> None:
    eq2 = n_keys_bound(12, 1, 2, 4)
    qv = n_keys_bound(12, 1, 2, 4, "query-dependent-values")
    assert qv.value < eq2.value
    n = fiber_dim(12, 4)
    assert form_counts(n, 4, "query-dependent-values") == (n * (n + 1) // 2, n)


def test_torch_sampler_is_d_n() -> None:
    X, _ = sample_instances(50, 5, 9, points="orthonormal", generator=1)
    gram = torch.einsum("bnd,bmd->bnm", X, X)
    assert torch.allclose(gram, torch.eye(5, dtype=gram.dtype).expand_as(gram), atol=1e-12)
