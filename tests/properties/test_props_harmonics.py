"""Harmonic machinery (docs/paper.md §3; docs/derivations/harmonics.md): Parseval for the
coefficients of sign, the dimensions N(d, l) and the addition theorem, orthonormality, and the
closed forms against independent evaluations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st
from scipy.special import roots_jacobi

from tests.properties.property_helpers import fewer
from workbench import strategies as S
from workbench.core import harmonics as hm

pytestmark = pytest.mark.properties


def _tail_constant(d: int) -> float:
    """``K`` in ``eta_l^2 ~ K / l^2``, from the closed form's asymptotics (independent of the code):
    ``N(d,l) ~ 2 l^(d-2) / (d-2)!`` and ``a_m ~ a_0 Gamma((d+1)/2) / sqrt(pi) (l/2)^(-d/2)``, so the
    energy above an odd L is ``~ K / (2 L)``."""
    rho = math.exp(math.lgamma(d / 2) - math.lgamma((d - 1) / 2)) / math.sqrt(math.pi)
    a0 = 2 * rho / (d - 1)
    return math.exp((d + 1) * math.log(2) + 2 * math.log(a0) + 2 * math.lgamma((d + 1) / 2)
                    - math.log(math.pi) - math.lgamma(d - 1))


@given(S.dims(max_d=64), st.integers(150, 10000))
@example(2, 301)
@example(3, 10001)
def test_parseval_partial_sums_rise_to_one(d: int, L: int) -> None:
    L = L | 1
    e2 = hm.sign_coefficients(d, L) ** 2
    partial = np.cumsum(e2)
    assert np.all(np.diff(partial) >= 0) and partial[-1] <= 1 + 1e-12
    assert np.all(e2[0::2] == 0)  # sign is odd
    ratio = (1 - partial[-1]) * 2 * L / _tail_constant(d)
    assert abs(ratio - 1) <= 2 * d / L + 1e-3, ratio


@given(S.dims(max_d=200), st.integers(0, 300))
@example(2, 0)
@example(2, 1)
@example(3, 2)
def test_dim_harmonics_is_a_positive_integer_counting_polynomials(d: int, l: int) -> None:
    """``N(d,l) = C(l+d-1, d-1) - C(l+d-3, d-1)`` and the harmonics of degrees l, l-2, ... span
    the homogeneous polynomials of degree l (their dimension sums to ``C(l+d-1, d-1)``)."""
    n = hm.dim_harmonics(d, l)
    assert isinstance(n, int) and n >= 1
    assert n == math.comb(l + d - 1, d - 1) - (math.comb(l + d - 3, d - 1) if l >= 2 else 0)
    total = sum(hm.dim_harmonics(d, k) for k in range(l % 2, l + 1, 2))
    assert total == math.comb(l + d - 1, d - 1)


@given(S.dims(max_d=7), st.integers(0, 6), S.seeds())
@example(2, 5, 0)
@example(3, 3, 1)
def test_addition_theorem_gram_matrix_has_rank_N(d: int, l: int, seed: int) -> None:
    """``P_l(<x,y>) = N^-1 sum_k Y_k(x) Y_k(y)``: the Gram matrix ``[P_l(<z_i,z_j>)]`` of m generic
    points is positive semidefinite of rank exactly ``N(d,l)``."""
    n = hm.dim_harmonics(d, l)
    assume(n <= 60)
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n + 12, d))
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    G = hm.legendre_d(d, l, np.clip(Z @ Z.T, -1, 1))[l]
    ev = np.linalg.eigvalsh((G + G.T) / 2)
    top = ev.max()
    assert ev.min() >= -1e-9 * top
    assert int((ev > 1e-7 * top).sum()) == n


@given(S.dims(max_d=40), st.integers(0, 30))
@example(2, 30)
def test_normalized_gegenbauer_is_orthonormal(d: int, L: int) -> None:
    """Gauss-Jacobi quadrature (exact for degree <= 2n - 1) of ``G_k G_l`` under
    ``(1-t^2)^((d-3)/2)`` is the identity."""
    a = (d - 3) / 2
    t, w = roots_jacobi(L + 1, a, a)
    w = w / w.sum()
    G = hm.normalized_gegenbauer(d, L, t)
    assert np.allclose((G * w) @ G.T, np.eye(L + 1), atol=1e-9)


@given(S.dims(max_d=4096), st.integers(0, 401))
@example(4096, 401)
@example(2, 1)
def test_sign_coefficients_match_the_high_precision_closed_form(d: int, l: int) -> None:
    fast = hm.sign_coefficients(d, l)[l]
    exact = float(hm.sign_coefficient_mp(d, l, dps=30))
    assert fast == pytest.approx(exact, rel=1e-11, abs=1e-300)


@fewer(4)
@given(S.dims(max_d=9), st.integers(0, 9))
@example(2, 3)
def test_sign_coefficients_match_quadrature_of_sign(d: int, l: int) -> None:
    """Independent of every closed form: the projection of sign(t) by adaptive quadrature."""
    quad = hm.gegenbauer_transform(lambda t: 1 if t > 0 else (-1 if t < 0 else 0), d, l, dps=20)
    assert hm.sign_coefficients(d, l)[l] == pytest.approx(float(quad), abs=1e-12)
