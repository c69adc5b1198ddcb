"""The one-head optimum search (workbench/verifiers/one_head_optimum.py; Lemmas F1-F3 of
docs/derivations/fiber_bound.md): the functional, its fiber formulas against Monte Carlo, the
search's evidence that M = I is optimal, and the search's power on planted faults."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import roots_legendre

import workbench.verifiers.one_head_optimum as oh
from workbench.core.bounds.fiber_bound.fiber import _eigen, one_head_captured
from workbench.core.intervals import mean_interval
from workbench.verifiers.one_head_optimum import captured_functional, search_value_maps

LEVEL = 1 - 1e-6  # the seeded Monte Carlo checks are deterministic; a wide CI keeps them honest


def _random_M(d: int, seed: int, spread: float = 1.0) -> np.ndarray:
    return np.eye(d) + spread * np.random.default_rng(seed).standard_normal((d, d))


# ---------------------------------------------------------------- the functional
@pytest.mark.parametrize("d,r", [(3, 1), (3, 2), (4, 2), (6, 2), (8, 6)])
def test_identity_gives_one_head_captured(d: int, r: int) -> None:
    """At M = I every fiber gives lambda_0: the value is E_c lambda_0 whatever the direction
    rule (one direction node suffices), computed here without the kink splitting."""
    want = one_head_captured(d, r)
    assert abs(captured_functional(np.eye(d), d, r) - want) < 1e-9
    assert abs(captured_functional(np.eye(d), d, r, directions=1, nodes=128) - want) < 1e-9


def test_scale_and_sign_invariance() -> None:
    d, r = 5, 2
    M = _random_M(d, 3)
    v = captured_functional(M, d, r)
    for a in (2.5, -0.3, 1e-3):
        assert captured_functional(a * M, d, r) == pytest.approx(v, rel=1e-12)


@pytest.mark.parametrize("d,r", [(3, 1), (3, 2), (5, 3)])
def test_gradient_matches_finite_differences(d: int, r: int) -> None:
    q = oh._rule(d, r, 32, 4)
    M = _random_M(d, 5, 0.5)
    v, G = oh._value_and_grad(M, q, grad=True)
    assert G is not None
    h, num = 1e-6, np.zeros_like(M)
    for i in range(d):
        for j in range(d):
            E = np.zeros_like(M)
            E[i, j] = h
            hi = oh._value_and_grad(M + E, q, grad=False)[0]
            lo = oh._value_and_grad(M - E, q, grad=False)[0]
            num[i, j] = (hi - lo) / (2 * h)
    assert np.abs(G - num).max() < 1e-8
    assert abs(np.sum(G * M)) < 1e-12  # Euler: the functional is homogeneous of degree 0


def test_quadrature_converged_for_a_random_map() -> None:
    """More c-nodes and a finer direction rule change the value by < 1e-8 away from I."""
    d, r = 5, 3
    M = _random_M(d, 11, 0.3)
    v = captured_functional(M, d, r)
    assert abs(captured_functional(M, d, r, nodes=160, directions=24) - v) < 1e-8


# ---------------------------------------------------------------- against Monte Carlo
def _mc_fiber(M: np.ndarray, z: np.ndarray, r: int, n: int, seed: int):  # type: ignore[no-untyped-def]
    """Per-sample values of ``s_y(w) s_y(w') q(v) q(v')`` (mean N_z) and ``|M w|^2`` (mean
    D_z), for independent v, v' uniform on the fiber over z and y uniform on the sphere."""
    d, m = M.shape[0], M.shape[0] - r
    rho = math.sqrt(1 - z @ z)
    rng = np.random.default_rng(seed)

    def fiber_points() -> np.ndarray:
        g = rng.standard_normal((n, m))
        w = np.zeros((n, d))
        w[:, :r] = z
        w[:, r:] = rho * g / np.linalg.norm(g, axis=1, keepdims=True)
        return w

    w, w2 = fiber_points(), fiber_points()
    y = rng.standard_normal((n, d))  # only its direction matters
    S = (M + M.T) / 2
    qq = np.einsum("ni,ij,nj->n", w, S, w) * np.einsum("ni,ij,nj->n", w2, S, w2)
    ss = np.sign(np.sum(y * w, 1)) * np.sign(np.sum(y * w2, 1))
    bound_N = float(np.linalg.norm(S, 2)) ** 2  # |q| <= ||S||_op on unit vectors
    bound_D = float(np.linalg.norm(M, 2)) ** 2
    return ss * qq, np.sum((w @ M.T) ** 2, 1), bound_N, bound_D


def _ci(x: np.ndarray, lo: float, hi: float):  # type: ignore[no-untyped-def]
    return mean_interval(float(x.mean()), float(x.var(ddof=1)), len(x), LEVEL, "bounded", (lo, hi))


@pytest.mark.parametrize("d,r,c", [(3, 1, 0.2), (4, 2, 0.6), (4, 1, 0.35), (3, 2, 0.8)])
def test_fiber_formulas_against_monte_carlo(d: int, r: int, c: float) -> None:
    """N_z and D_z of Lemma F3 lie inside a valid (empirical Bernstein + Chernoff) interval of
    an elementary Monte Carlo over v, v', y; planted faults in the formula lie outside it."""
    M = _random_M(d, 17 + d + r, 1.5)
    u = np.random.default_rng(1).standard_normal(r)
    z = math.sqrt(c) * u / np.linalg.norm(u)
    N, D = oh._fiber_nd(M, z, r)
    xN, xD, bN, bD = _mc_fiber(M, z, r, 400_000, seed=2)
    ciN, ciD = _ci(xN, -bN, bN), _ci(xD, 0.0, bD)
    assert ciN.lo <= N <= ciN.hi, (N, ciN)
    assert ciD.lo <= D <= ciD.hi, (D, ciD)
    # power: the degree-1 weight lambda_1 replaced by lambda_0, and the w-projection
    # denominator E q^2 in place of E |M w|^2, are both rejected at this sample size
    lam = np.asarray(_eigen(d - r, np.array([c])))
    swapped = lam.copy()
    swapped[1] = lam[0]
    inv = oh._invariants(M, (z / math.sqrt(c))[None, :], r)
    N_bad = float(np.squeeze(oh._fiber_terms(inv, np.array([[c]]), swapped[:, :, None], d - r)[0]))
    ones = np.ones_like(lam)[:, :, None]
    D_bad = float(np.squeeze(oh._fiber_terms(inv, np.array([[c]]), ones, d - r)[0]))
    assert not ciN.lo <= N_bad <= ciN.hi, (N_bad, ciN)
    assert not ciD.lo <= D_bad <= ciD.hi, (D_bad, ciD)


@pytest.mark.parametrize("d,r,c", [(4, 1, 0.35), (5, 2, 0.5), (3, 1, 0.3)])
def test_harmonic_norms_against_monte_carlo(d: int, r: int, c: float) -> None:
    """The squared norms n_k of the degree-k components of q on the fiber, one at a time:
    E q = s0 (n0 = s0^2), E q(v)^2 = n0 + n1 + n2 and E q(v) q(-v) = n0 - n1 + n2 (parity)."""
    m = d - r
    M = _random_M(d, 31 + d, 1.0)
    M[r:, r:] += np.diag(np.resize([1.5, -1.5], m))  # a traceless S_QQ part n2 can resolve
    S = (M + M.T) / 2
    z = math.sqrt(c) * np.eye(r)[0]
    inv = oh._invariants(M, np.eye(r)[:1], r)
    n0, n1, n2 = (
        float(np.squeeze(oh._fiber_terms(inv, np.array([[c]]), e[:, None, None], m)[0]))
        for e in np.eye(3)
    )
    rng = np.random.default_rng(5)
    g = rng.standard_normal((300_000, m))
    v = math.sqrt(1 - c) * g / np.linalg.norm(g, axis=1, keepdims=True)
    w_plus, w_minus = (
        np.hstack([np.tile(z, (len(v), 1)), v]),
        np.hstack([np.tile(z, (len(v), 1)), -v]),
    )
    q_plus = np.einsum("ni,ij,nj->n", w_plus, S, w_plus)
    q_minus = np.einsum("ni,ij,nj->n", w_minus, S, w_minus)
    B = float(np.linalg.norm(S, 2))
    checks = [
        (q_plus, -B, B, math.copysign(math.sqrt(n0), float(np.mean(q_plus)))),
        (q_plus**2, 0.0, B * B, n0 + n1 + n2),
        (q_plus * q_minus, -B * B, B * B, n0 - n1 + n2),
    ]
    for x, lo, hi, want in checks:
        ci = _ci(x, lo, hi)
        assert ci.lo <= want <= ci.hi, (want, ci)
    # power: the degree-2 norm 2 rho^4 ||B||^2 / (m (m+2)) with the 2 dropped is rejected
    ci = _ci(q_plus**2, 0.0, B * B)
    assert not ci.lo <= n0 + n1 + n2 / 2 <= ci.hi, (n0 + n1 + n2 / 2, ci)


def test_functional_against_monte_carlo_over_z(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The c-quadrature and the direction rule: E_z[N_z / D_z] with z = P w, w uniform on
    S^{d-1}, the per-fiber ratio in [0, 1] (N <= lambda_max D, lambda_k >= 0). Power: the
    Jacobian of c = sin^2 phi one power of sin short (renormalised) is rejected."""
    d, r, n = 5, 3, 40_000
    M = _random_M(d, 23, 0.8)
    rng = np.random.default_rng(4)
    g = rng.standard_normal((n, d))
    z = (g / np.linalg.norm(g, axis=1, keepdims=True))[:, :r]
    c = np.sum(z * z, 1)
    inv = oh._invariants(M, z / np.sqrt(c)[:, None], r)  # invariants along a (1, n) row
    lam = np.asarray(_eigen(d - r, c))[:, None, :]
    N, D, _, _ = oh._fiber_terms(inv, c[None, :], lam, d - r)  # each z with its own c
    ratio = (N / D)[0]
    assert ratio.min() >= 0 and ratio.max() <= 1
    ci = _ci(ratio, 0.0, 1.0)
    assert ci.lo <= captured_functional(M, d, r) <= ci.hi, ci

    def c_rule_bad(r: int, m: int, nodes: int) -> tuple[np.ndarray, np.ndarray]:
        x, w = roots_legendre(nodes)
        phi = (x + 1) * math.pi / 4
        wc = w * np.sin(phi) ** (r - 2) * np.cos(phi) ** (m - 1)
        return np.sin(phi) ** 2, wc / wc.sum()

    monkeypatch.setattr(oh, "_c_rule", c_rule_bad)
    bad = captured_functional(M, d, r)
    assert not ci.lo <= bad <= ci.hi, (bad, ci)


# ---------------------------------------------------------------- the search
@pytest.mark.parametrize("d,r", [(3, 1), (4, 2)])
def test_search_finds_nothing_beating_identity(d: int, r: int) -> None:
    res = search_value_maps(d, r, starts=8, seed=0)
    assert res.captured_identity == pytest.approx(one_head_captured(d, r), abs=1e-9)
    assert res.gap <= 1e-7, res
    assert res.best >= res.captured_identity - 1e-8  # the search does reach I's value
    assert res.stationarity < 1e-6
    assert res.starts == 8 and res.evaluations > 8
    assert res.best_matrix.shape == (d, d)


def test_search_is_deterministic_under_seed() -> None:
    a = search_value_maps(4, 2, starts=3, seed=7)
    b = search_value_maps(4, 2, starts=3, seed=7)
    assert a.start_values == b.start_values and a.evaluations == b.evaluations
    assert np.array_equal(a.best_matrix, b.best_matrix)


def _eq2_denominator(orig):  # type: ignore[no-untyped-def]
    """Planted fault: the w-projection denominator E q^2 (the N formula with every lambda = 1)
    in place of E |M w|^2. It equals E|Mw|^2 at M = I, so captured(I) is unchanged."""

    def terms(inv, c, lam, m):  # type: ignore[no-untyped-def]
        N, _, dN, _ = orig(inv, c, lam, m)
        Q, _, dQ, _ = orig(inv, c, np.ones_like(lam), m)
        return N, Q, dN, dQ

    return terms


@pytest.mark.parametrize("d,r", [(3, 1), (4, 2)])
def test_power_denominator_fault_is_beaten(d: int, r: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    good = search_value_maps(d, r, starts=8, seed=0)
    monkeypatch.setattr(oh, "_fiber_terms", _eq2_denominator(oh._fiber_terms))
    bad = search_value_maps(d, r, starts=8, seed=0)
    assert bad.captured_identity == pytest.approx(good.captured_identity, abs=1e-12)
    assert bad.gap > 1e-3, bad  # the search finds an M beating I: the evidence test can fail


def test_power_lambda1_fault_is_beaten(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """lambda_1 four times too large: the vector sector then pays off for a fixed M."""

    def eigen(m, c):  # type: ignore[no-untyped-def]
        lam = np.array(_eigen(m, c))
        lam[1] *= 4
        return lam

    monkeypatch.setattr(oh, "_eigen", eigen)
    assert search_value_maps(3, 1, starts=4, seed=0).gap > 1e-2


def test_power_at_d8(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """At d = 8 the realistic faults above do not dethrone I (the vector sector is too weak
    there), so the search's reach is shown with lambda_0 twenty times too small: the coupling
    M = [[0, I], [I, 0]] then beats I, and the search finds a better M still. A coarser
    direction rule keeps it fast; the clean search on that rule still finds nothing."""
    d, r = 8, 4
    assert search_value_maps(d, r, starts=2, directions=8).gap <= 1e-7

    def eigen(m, c):  # type: ignore[no-untyped-def]
        lam = np.array(_eigen(m, c))
        lam[0] *= 0.05
        return lam

    monkeypatch.setattr(oh, "_eigen", eigen)
    coupling = np.zeros((d, d))
    coupling[r:, :r] = coupling[:r, r:] = np.eye(r)
    at_I = captured_functional(np.eye(d), d, r, directions=8)
    assert captured_functional(coupling, d, r, directions=8) > at_I
    res = search_value_maps(d, r, starts=2, directions=8)
    assert res.gap > 1e-3 and res.best >= captured_functional(coupling, d, r, directions=8)


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: captured_functional(np.eye(2), 1, 1), "d"),
        (lambda: captured_functional(np.eye(3), 3, 0), "r"),
        (lambda: captured_functional(np.eye(3), 3, 3), "r"),
        (lambda: captured_functional(np.eye(2), 3, 1), "M"),
        (lambda: captured_functional(np.zeros((3, 3)), 3, 1), "M"),
        (lambda: captured_functional(np.full((3, 3), np.nan), 3, 1), "M"),
        (lambda: captured_functional(np.eye(3), 3, 1, nodes=1), "nodes"),
        (lambda: captured_functional(np.eye(4), 4, 2, directions=0), "directions"),
        (lambda: captured_functional(np.eye(5), 5, 3, directions=2000), "directions"),
        (lambda: search_value_maps(3, 1, starts=0), "starts"),
        (lambda: search_value_maps(3, 1, seed=-1), "seed"),
        (lambda: search_value_maps(3, 1, spread=0.0), "spread"),
        (lambda: search_value_maps(1.5, 1), "d"),  # type: ignore[arg-type]
        (lambda: search_value_maps(4, 4), "r"),
    ],
)
def test_bad_input_names_the_parameter(call, name: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=rf"^{name} "):
        call()


def test_claim_holds_and_is_violated_under_the_denominator_fault(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """thm2.one_head_optimum: holds as shipped; with the w-projection denominator E q^2 in place
    of E |M w|^2 (a slip the derivation could make), the search beats I and the claim fails."""
    from workbench.proofs.claim import CheckContext, combine
    from workbench.proofs.paper.thm2.fiber import one_head_optimum

    ctx = CheckContext(scale="quick", seed=0)
    assert combine(one_head_optimum(ctx), "experiment") == "holds"
    monkeypatch.setattr(oh, "_fiber_terms", _eq2_denominator(oh._fiber_terms))
    assert combine(one_head_optimum(ctx), "experiment") == "violated"
