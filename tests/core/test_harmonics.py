"""Gegenbauer machinery and the closed form of eta_l (docs/paper.md §5; docs/derivations/).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from scipy.special import eval_gegenbauer, roots_jacobi

from workbench.core.harmonics import (
    dim_harmonics,
    gamma_half_ratio,
    gegenbauer_mp,
    gegenbauer_transform,
    legendre_d,
    normalized_gegenbauer,
    sign_coefficient_exact,
    sign_coefficient_lgamma,
    sign_coefficient_mp,
    sign_coefficients,
)

DIMS = [3, 4, 5, 10, 64]


def _quad_eta(d: int, l: int) -> mpmath.mpf:
    return gegenbauer_transform(lambda t: mpmath.sign(t), d, l, dps=30)


@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("l", [1, 2, 5, 41])
def test_closed_form_matches_30_digit_quadrature(d: int, l: int) -> None:
    with mpmath.workdps(30):
        ref = _quad_eta(d, l)
        closed = sign_coefficient_mp(d, l, dps=30)
        exact = mpmath.mpf(sp.N(sign_coefficient_exact(d, l), 35))
        assert abs(closed - ref) <= mpmath.mpf(10) ** -26
        assert abs(exact - ref) <= mpmath.mpf(10) ** -26
    f64 = sign_coefficients(d, l)[l]
    assert abs(f64 - float(ref)) <= 1e-14 * max(1.0, abs(float(ref)))


@pytest.mark.slow
@pytest.mark.parametrize("d", DIMS)
def test_closed_form_matches_quadrature_all_degrees(d: int) -> None:
    with mpmath.workdps(30):
        for l in range(0, 42):
            assert abs(sign_coefficient_mp(d, l, 30) - _quad_eta(d, l)) <= mpmath.mpf(10) ** -26


def test_d5_hand_value() -> None:
    assert sign_coefficients(5, 1)[1] == pytest.approx(0.838525491562421, rel=1e-14, abs=0)
    hand = sp.Rational(3, 8) / sp.sqrt(sp.Rational(1, 5))
    assert sp.simplify(sign_coefficient_exact(5, 1) - hand) == 0
    assert float(sign_coefficient_mp(5, 1)) == pytest.approx(3 / (8 * math.sqrt(1 / 5)), rel=1e-15)


def test_d2_matches_fourier_series_of_sign_cos() -> None:
    # sign(cos phi) = (4/pi) sum_m (-1)^m cos((2m+1) phi)/(2m+1); normalised basis sqrt2 cos(l phi)
    eta = sign_coefficients(2, 99)
    for l in range(1, 100, 2):
        m = (l - 1) // 2
        assert eta[l] == pytest.approx((-1) ** m * 4 / (math.pi * l * math.sqrt(2)), rel=1e-13)
    assert np.all(eta[0::2] == 0)


@pytest.mark.parametrize("d", [2, 3, 5, 64])
def test_parseval_sum_eta_squared_tends_to_one(d: int) -> None:
    eta2 = sign_coefficients(d, 64001)[1::2] ** 2
    partial = np.cumsum(eta2)
    rest = 1 - partial
    assert np.all(rest > -1e-13)
    assert np.all(np.diff(partial) >= 0)
    # jump discontinuity: eta_l^2 ~ c / l^2, so the rest decays like 1/L
    Ls = [4000, 16000, 32000]
    rs = [rest[L // 2] for L in Ls]
    assert rs[2] < 5e-3
    assert rs[1] / rs[0] == pytest.approx(0.25, rel=0.1)
    assert rs[2] / rs[1] == pytest.approx(0.5, rel=0.1)


def test_lgamma_and_mp_paths_agree() -> None:
    for d in [3, 7, 64, 1024]:
        ls = np.arange(0, 202)
        f = sign_coefficients(d, 201)
        g = sign_coefficient_lgamma(d, ls)
        assert np.allclose(f, g, rtol=1e-11, atol=0)
        for l in [1, 51, 201]:
            assert f[l] == pytest.approx(float(sign_coefficient_mp(d, l, 40)), rel=1e-13)


def test_gamma_half_ratio() -> None:
    with mpmath.workdps(40):
        for x in [0.5, 1.0, 7.5, 59.5, 60.5, 61.0, 1000.0, 2047.5, 1e6]:
            ref = mpmath.gamma(x + 0.5) / mpmath.gamma(x)
            assert gamma_half_ratio(x) == pytest.approx(float(ref), rel=2e-15)
    with pytest.raises(ValueError):
        gamma_half_ratio(0.0)


@pytest.mark.parametrize("d", range(2, 13))
def test_dim_harmonics_independent_count(d: int) -> None:
    # dim of homogeneous polynomials of degree l in d variables is C(l+d-1, d-1)
    def hom(l: int) -> int:
        return math.comb(l + d - 1, d - 1) if l >= 0 else 0

    for l in range(0, 31):
        assert dim_harmonics(d, l) == hom(l) - hom(l - 2)


def test_dim_harmonics_validation() -> None:
    with pytest.raises(ValueError, match="d must"):
        dim_harmonics(1, 3)
    with pytest.raises(ValueError, match="l must"):
        dim_harmonics(5, -1)


@pytest.mark.parametrize("d", [3, 5, 10, 64])
def test_recurrence_matches_scipy_gegenbauer(d: int) -> None:
    alpha = d / 2 - 1
    t = np.linspace(-1, 1, 41)
    P = legendre_d(d, 30, t)
    for l in [0, 1, 2, 7, 30]:
        ref = eval_gegenbauer(l, alpha, t) / eval_gegenbauer(l, alpha, 1.0)
        assert np.allclose(P[l], ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("d", [2, 3, 5, 64])
def test_normalised_gegenbauer_orthonormal_under_sphere_density(d: int) -> None:
    a = (d - 3) / 2
    x, w = roots_jacobi(40, a, a)  # exact for degree <= 79
    w = w / w.sum()
    G = normalized_gegenbauer(d, 30, x)
    gram = (G * w) @ G.T
    assert np.allclose(gram, np.eye(31), atol=1e-11)


def test_mp_polynomial_matches_float() -> None:
    t = 0.3
    vals = normalized_gegenbauer(7, 12, np.array([t]))[:, 0]
    for l in [0, 1, 5, 12]:
        assert float(gegenbauer_mp(7, l, t)) == pytest.approx(vals[l], rel=1e-12)


def test_transform_of_a_polynomial() -> None:
    # t^3 has coefficients only at l = 1, 3, and sum of squares E[t^6]
    d = 6
    c = [gegenbauer_transform(lambda t: t**3, d, l, dps=20) for l in range(6)]
    assert all(abs(c[l]) < 1e-15 for l in (0, 2, 4, 5))
    e6 = 15 / (d * (d + 2) * (d + 4))  # E[t^6] for t = <y, w> on S^{d-1}
    assert float(c[1] ** 2 + c[3] ** 2) == pytest.approx(e6, rel=1e-12)
