"""The fiber bound (docs/derivations/fiber_bound.md): each lemma against an independent
computation, planted faults caught, bad input rejected."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from tests.layer_arguments import bad_layer_arguments
from workbench.constructions.optimized import one_head_exact_error
from workbench.core import quadrature
from workbench.core.bounds.certified import certified_lower_bound
from workbench.core.bounds.fiber_bound import fiber as fb
from workbench.core.bounds.fiber_bound import fiber_enclosure as fe
from workbench.core.bounds.fiber_bound import fiber_kinks as fk
from workbench.core.bounds.fiber_bound.fiber import (
    fiber_bound,
    fiber_eigenvalues,
    fiber_spectrum,
    one_head_error,
)
from workbench.core.bounds.harmonic_count.harmonic import harmonic_bound
from workbench.core.bounds.numerics import kink_brackets as kb
from workbench.core.bounds.numerics.kink_brackets import bracket_sign_changes
from workbench.core.symbolic.fiber import evaluate_eigenvalue
from workbench.proofs.claim import combine
from workbench.proofs.paper.thm2 import fiber as claims
from workbench.testing import edited, mapped, plant


def _mp_eigen(m: int, c: float, k: int) -> float:
    """lambda_k by mpmath in the original variable t (not the library's half-angle)."""
    mpmath.mp.dps = 25
    P = (lambda t: 1, lambda t: t, lambda t: (m * t * t - 1) / (m - 1))[k]
    norm = 1 / mpmath.beta(0.5, mpmath.mpf(m - 1) / 2)

    def f(t):  # type: ignore[no-untyped-def]
        return 2 / mpmath.pi * mpmath.asin(min(1, c + (1 - c) * t)) * P(t) * (1 - t * t) ** (
            mpmath.mpf(m - 3) / 2
        ) * norm

    return float(mpmath.quad(f, [-1, 0, 1]))


@pytest.mark.parametrize("m,c", [(2, 0.0), (2, 0.3), (3, 1e-4), (7, 0.5), (30, 0.999)])
def test_eigenvalues_match_mpmath(m: int, c: float) -> None:
    lam = fiber_eigenvalues(m, c)
    for k in range(3):
        assert lam[k] == pytest.approx(_mp_eigen(m, c, k), abs=1e-12)
        assert lam[k] == pytest.approx(evaluate_eigenvalue(k, m, c), abs=1e-12)  # sympy side


def test_two_point_fiber_and_closed_values() -> None:
    # m = 1: lambda_0 + lambda_1 = k(1) = 1 and lambda_0 - lambda_1 = k(2c - 1)
    lam = fiber_eigenvalues(1, 0.2)
    assert lam[0] + lam[1] == pytest.approx(1.0) and lam[2] == 0
    assert lam[0] - lam[1] == pytest.approx(2 / math.pi * math.asin(-0.6))
    # the circle at c = 0: lambda_1 = 4/pi^2 (the arcsine kernel's first cosine coefficient)
    assert fiber_eigenvalues(2, 0.0)[1] == pytest.approx(4 / math.pi**2, abs=1e-13)


@pytest.mark.parametrize("d,r_star,c", [(3, 1, 0.02), (4, 2, 0.5), (3, 2, 0.7), (5, 3, 0.1)])
def test_spectrum_matches_brute_force_generalized_eigenvalues(
    d: int, r_star: int, c: float
) -> None:
    ev = claims.spectrum_evidence(d, r_star, c)
    assert combine(ev, "lemma") == "holds"
    assert len(ev) == 1 + sum(k for _, k in fiber_spectrum(d - r_star, c))


def test_spectrum_check_catches_a_wrong_factor(monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted: the vector value without its factor (c + (1-c)/m); the traceless multiplicity
    one short."""
    real = fb._spectrum

    def no_factor(m: int, c: np.ndarray):  # type: ignore[no-untyped-def]
        vals, mult = real(m, c)
        vals = vals.copy()
        vals[1] = fb._eigen(m, c)[1]
        return vals, mult

    monkeypatch.setattr(fb, "_spectrum", no_factor)
    assert combine(claims.spectrum_evidence(3, 1, 0.02), "lemma") == "violated"

    def short(m: int, c: np.ndarray):  # type: ignore[no-untyped-def]
        vals, mult = real(m, c)
        return vals, [*mult[:2], mult[2] - 1]

    monkeypatch.setattr(fb, "_spectrum", short)
    assert combine(claims.spectrum_evidence(4, 2, 0.5), "lemma") == "violated"


def test_eigenvalues_match_monte_carlo_and_catch_a_scaled_kernel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ev = claims.eigen_mc_evidence(6, 1, 0.05, 200_000, 3)
    assert combine(ev, "lemma") == "holds"
    real = fb._eigen
    monkeypatch.setattr(fb, "_eigen", lambda m, c: 0.9 * real(m, c))  # kernel 10 % low
    assert combine(claims.eigen_mc_evidence(6, 1, 0.05, 200_000, 3), "lemma") == "violated"


@pytest.mark.parametrize("d,r", [(3, 1), (4, 2), (8, 6), (16, 1), (32, 30)])
def test_one_head_quadrature_equals_the_harmonic_series(d: int, r: int) -> None:
    """E_c lambda_0 (fiber quadrature) against sum eta_l^2 C(l+r-1,r-1)/N(d,l) (series)."""
    lo, hi = one_head_exact_error(d, r)
    err, _ = one_head_error(d, r)
    assert lo <= err <= hi


@pytest.mark.parametrize("d,r", [(3, 1), (3, 2), (4, 1), (6, 4), (8, 1), (12, 10), (32, 16)])
def test_bound_lies_below_the_exact_one_head_error(d: int, r: int) -> None:
    b = fiber_bound(d, r, 1)
    err, (lo, _) = one_head_error(d, r)
    assert b.enclosure[0] <= b.value <= b.enclosure[1] <= lo + 1e-12
    assert err / b.value < 1.4  # the H = 1 sandwich: 1.38 at (3, 2) is the widest


def test_bound_is_tight_at_one_head_for_larger_d() -> None:
    """For r >= d/2, d >= 12 the bound is within 1e-5 of the exact witness (the vector value
    beats lambda_0 only on fibers of tiny probability): a bound 0.01 % too high exceeds it."""
    for d, r in ((12, 6), (16, 14), (32, 16)):
        err, _ = one_head_error(d, r)
        assert fiber_bound(d, r, 1).value == pytest.approx(err, rel=1e-5)


def test_heads_and_span_and_classes() -> None:
    assert fiber_bound(8, 2, 4).value == 0 and fiber_bound(8, 2, 4).span_rank == 8
    vals = [fiber_bound(16, 1, H).value for H in (1, 2, 4, 8, 15)]
    assert all(a >= b for a, b in zip(vals, vals[1:]))  # more heads: a smaller bound
    q = fiber_bound(8, 1, 2, "query-dependent-values")
    assert 0 < q.value < fiber_bound(8, 1, 2).value  # the trace: a weaker statement
    best = certified_lower_bound(12, 2, 4)
    assert best.source == "fiber" and best.value == best.fiber.enclosure[0]
    assert best.value > harmonic_bound(12, 2, 4).enclosure[0] == best.harmonic.enclosure[0]
    assert best.enclosure == (best.value, max(best.fiber.enclosure[1], best.harmonic.enclosure[1]))
    assert certified_lower_bound(8, 4, 4).source == "harmonic count"


def test_deterministic() -> None:
    fe.captured_enclosure.cache_clear()
    fb._captured_estimate.cache_clear()
    a, e = fiber_bound(6, 1, 2), fb.fiber_estimate(6, 1, 2)
    fe.captured_enclosure.cache_clear()
    fb._captured_estimate.cache_clear()
    assert fiber_bound(6, 1, 2) == a and fb.fiber_estimate(6, 1, 2) == e


@pytest.mark.parametrize(
    "call,name",
    [
        *bad_layer_arguments(fiber_bound, 6, 1),
        (lambda: fiber_bound(6, 1, 1, "other"), "value_class"),
        (lambda: fiber_eigenvalues(0, 0.5), "m"),
        (lambda: fiber_eigenvalues(3, 1.5), "c"),
    ],
)
def test_bad_input_names_the_parameter(call, name: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=name):
        call()


# --- the kinks: every crossing bracketed (docs/derivations/fiber_bound.md, "The kinks") ---


def _quadratic(r1: float, r2: float):  # type: ignore[no-untyped-def]
    """f = (x - r1)(x - r2) with interval enclosures of f and f' = 2x - r1 - r2 over cells."""

    def value(x: np.ndarray) -> np.ndarray:
        return (x - r1) * (x - r2)

    def enclose(a: np.ndarray, b: np.ndarray):  # type: ignore[no-untyped-def]
        p = np.stack([(a - r1) * (a - r2), (a - r1) * (b - r2), (b - r1) * (a - r2),
                      (b - r1) * (b - r2)])
        return p.min(axis=0), p.max(axis=0)

    def slope(a: np.ndarray, b: np.ndarray):  # type: ignore[no-untyped-def]
        return 2 * a - r1 - r2, 2 * b - r1 - r2

    return value, enclose, slope


def test_two_crossings_inside_one_coarse_cell_are_both_bracketed() -> None:
    grid = np.linspace(0.0, 1.0, 3)  # one cell [0, 0.5] holds both zeros: no sign change there
    value, enclose, slope = _quadratic(0.40, 0.41)
    assert np.all(value(grid) > 0)
    got = bracket_sign_changes(value, enclose, slope, grid)
    assert len(got) == 2 and got[0][1] <= got[1][0]
    for (a, b), root in zip(got, (0.40, 0.41)):
        assert a < root < b
    # planted: every cell taken as monotone (the old grid's assumption) loses both crossings
    with plant("workbench.core.bounds.numerics.kink_brackets:bracket_sign_changes",
               edited("monotone = ~settled & _clear(*slope(a, b), margin)",
                      "monotone = ~settled")):
        assert kb.bracket_sign_changes(value, enclose, slope, grid) == []


def test_a_tangency_is_reported_not_dropped() -> None:
    value, enclose, slope = _quadratic(0.4, 0.4)  # a double zero: never settled
    with pytest.raises(RuntimeError, match="unsettled"):
        bracket_sign_changes(value, enclose, slope, np.linspace(0.0, 1.0, 5), max_halvings=12)


def _pair_difference(m: int, i: int, j: int, phi: np.ndarray) -> np.ndarray:
    vals, _ = fb._spectrum(m, np.sin(phi) ** 2)
    return vals[i] - vals[j]  # type: ignore[no-any-return]


@pytest.mark.parametrize("m", [2, 3, 7, 40])
@pytest.mark.parametrize("pair", [(0, 1), (0, 2), (1, 2)])
def test_fiber_enclosures_hold_the_values_and_slopes(m: int, pair: tuple[int, int]) -> None:
    """Over 16 cells of [0, pi/2]: the enclosure of v_i - v_j holds the library's values, and
    the slope enclosure holds f'(phi)/sin(phi) by central differences, at 40 points a cell."""
    _, enclose, slope = fk._pair_enclosures(m, quadrature.fiber_angle_rule(m), *pair)
    edges = np.linspace(0.0, math.pi / 2, 17)
    a, b = edges[:-1], edges[1:]
    lo, hi = enclose(a, b)
    slo, shi = slope(a, b)
    t = np.linspace(0.02, 0.98, 40)
    for k in range(16):
        phi = a[k] + t * (b[k] - a[k])
        f = _pair_difference(m, *pair, phi)
        assert np.all(lo[k] - 1e-13 <= f) and np.all(f <= hi[k] + 1e-13)
        h = 1e-6
        g = (_pair_difference(m, *pair, phi + h) - _pair_difference(m, *pair, phi - h)) / (
            2 * h * np.sin(phi))
        assert np.all(slo[k] - 1e-6 <= g) and np.all(g <= shi[k] + 1e-6)


def test_slope_enclosure_check_catches_a_dropped_term() -> None:
    """Planted: the slope enclosure without the value factors' derivative (2 cos phi k V)."""
    fault = edited("(4 / math.pi * hi1 + 2 * hi2) @ wt", "(4 / math.pi * hi1) @ wt")
    with plant("workbench.core.bounds.fiber_bound.fiber_kinks:_pair_enclosures", fault):
        with pytest.raises(AssertionError):
            test_fiber_enclosures_hold_the_values_and_slopes(7, (1, 2))


@pytest.mark.parametrize("m", [1, 2, 3, 5, 10, 30, 100])
def test_kinks_match_the_sign_changes_on_a_dense_grid(m: int) -> None:
    """The cuts are the sign changes of the pairwise differences seen on 20001 points (the
    functions have no close pairs of crossings, so the dense grid sees them all). At the ends
    (c = 0 and c = 1) some values are equal, so rounding alone signs their difference there: a
    crossing at an end is no kink inside, and neither side counts it."""
    grid = np.linspace(0.0, math.pi / 2, 20001)
    vals, _ = fb._spectrum(m, np.sin(grid) ** 2)
    k = vals.shape[0]
    cells = []
    for i in range(k):
        for j in range(i + 1, k):
            f = vals[i] - vals[j]
            f[[0, -1]] = np.where(np.abs(f[[0, -1]]) < 1e-12, 0.0, f[[0, -1]])
            cells += [(grid[n], grid[n + 1]) for n in np.nonzero(f[:-1] * f[1:] < 0)[0]]
    cuts = sorted(c for c in fb._crossings(m) if 1e-6 < c < math.pi / 2 - 1e-6)
    assert len(cuts) == len(cells)
    for (a, b), cut in zip(sorted(cells), cuts):
        assert a - 1e-12 <= cut <= b + 1e-12


def _one_head_error_mpmath(d: int, r: int) -> mpmath.mpf:
    """``1/2 (1 - E_c lambda_0)`` as a 17-digit double tanh-sinh quadrature (docs/derivations/
    fiber_bound.md, Lemma F2), independent of the library's Gauss-Legendre rules."""
    m = d - r
    with mpmath.workdps(17):
        b_c = mpmath.beta(mpmath.mpf(r) / 2, mpmath.mpf(m) / 2)
        b_t = mpmath.beta(0.5, mpmath.mpf(m - 1) / 2)

        def lam0(c: mpmath.mpf) -> mpmath.mpf:
            return mpmath.quad(lambda th: 2 / mpmath.pi * mpmath.asin(c + (1 - c) * mpmath.cos(th))
                               * mpmath.sin(th) ** (m - 2), [0, mpmath.pi / 2, mpmath.pi]) / b_t

        e = mpmath.quad(lambda ph: 2 * mpmath.sin(ph) ** (r - 1) * mpmath.cos(ph) ** (m - 1)
                        * lam0(mpmath.sin(ph) ** 2), [0, mpmath.pi / 4, mpmath.pi / 2]) / b_c
        return (1 - e) / 2


def test_one_head_error_and_its_enclosure_against_a_double_mpmath_quadrature() -> None:
    _, (lo, hi) = one_head_error(4, 2)  # the rigorous enclosure (width 8e-11 here)
    est, _ = fb.one_head_error_estimate(4, 2)  # the float pre-check, far more accurate here
    ref = _one_head_error_mpmath(4, 2)
    assert lo <= ref <= hi and abs(est - float(ref)) < 1e-15


def test_double_quadrature_check_fails_on_wrong_gauss_legendre_weights() -> None:
    quadrature._rule.cache_clear()
    quadrature.fiber_angle_rule.cache_clear()
    try:
        with plant("workbench.core.quadrature:_rule",
                   mapped(lambda xw: (xw[0], xw[1] * (1 + 1e-12 * xw[0])))):
            with pytest.raises(AssertionError):
                test_one_head_error_and_its_enclosure_against_a_double_mpmath_quadrature()
    finally:
        quadrature._rule.cache_clear()
        quadrature.fiber_angle_rule.cache_clear()
