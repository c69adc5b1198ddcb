"""Kernels of rank-1 hardmax heads on D_2 against Monte Carlo and the Gegenbauer series
(docs/paper.md §4; docs/derivations/harmonics.md)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import torch

from workbench.core.head_kernels import (
    _antiderivative_table,
    _hypergeometric_on_nodes,
    _integral_F,
    agreement_kernel,
    agreement_kernel_cross,
    head_target_agreement,
    head_target_agreement_d2,
    head_target_agreement_series,
    kernel_error,
)
from workbench.core.sphere import sample_instances, uniform_sphere
from workbench.testing import edited, plant, replaced

Z = 5.0  # CI half-width in standard errors (fixed seeds; a failure is a real discrepancy)


def _picks(Q: torch.Tensor, K: torch.Tensor, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """+1 where head h picks x_1: <q,y><k, x_1 - x_2> > 0; shape (n, H)."""
    diff = X[:, 0] - X[:, 1]
    return torch.sign((y @ Q.T) * (diff @ K.T))


def _ci(p: torch.Tensor, n: int) -> torch.Tensor:
    return Z * torch.sqrt(p.clamp(1e-4, 1 - 1e-4) * (1 - p.clamp(1e-4, 1 - 1e-4)) / n)


@pytest.mark.parametrize("d", [3, 6])
def test_agreement_kernel_matches_monte_carlo(d: int) -> None:
    g = torch.Generator().manual_seed(11 + d)
    H, n = 5, 40_000
    Q = uniform_sphere(H, d=d, generator=g)
    K = uniform_sphere(H, d=d, generator=g)
    X, y = sample_instances(n, 2, d, points="orthonormal", generator=g)
    s = _picks(Q, K, X, y)
    mc = ((s.T @ s) / n + 1) / 2  # Pr[agree]
    C = agreement_kernel(Q, K)
    assert torch.all((C - mc).abs() <= _ci(mc, n) + 1e-12)
    assert torch.allclose(torch.diagonal(C), torch.ones(H, dtype=torch.float64))


@pytest.mark.parametrize("d", [2, 3, 8, 40])
def test_head_target_agreement_matches_monte_carlo(d: int) -> None:
    g = torch.Generator().manual_seed(5 * d)
    n = 40_000
    cos = torch.tensor([-1.0, -0.6, -0.1, 0.0, 0.3, 0.8, 1.0], dtype=torch.float64)
    # q = e1, k at the requested cosine in the (e1, e2) plane
    Q = torch.zeros(len(cos), d, dtype=torch.float64)
    Q[:, 0] = 1
    K = torch.zeros_like(Q)
    K[:, 0] = cos
    K[:, 1] = torch.sqrt(1 - cos**2)
    X, y = sample_instances(n, 2, d, points="orthonormal", generator=g)
    target = torch.sign(torch.einsum("nd,nd->n", y, X[:, 0] - X[:, 1]))
    mc = (_picks(Q, K, X, y) == target.unsqueeze(1)).double().mean(0)
    b = head_target_agreement(d, cos)
    assert torch.all((b - mc).abs() <= _ci(mc, n))


@pytest.mark.parametrize("d,L,tol", [(3, 4001, 5e-12), (4, 2001, 1e-12), (5, 1001, 1e-12),
                                     (10, 401, 1e-13), (64, 201, 1e-14), (1024, 101, 1e-14)])
def test_integral_formula_matches_gegenbauer_series(d: int, L: int, tol: float) -> None:
    c = torch.linspace(-1, 1, 37, dtype=torch.float64)
    a = head_target_agreement(d, c)
    s = head_target_agreement_series(d, c, max_degree=L)
    assert torch.allclose(a, s, atol=tol, rtol=0)


# F(1 - x^2) at the table's points: half an ulp where numpy's long double is extended (x86),
# a few ulp where it is plain float64
_F_TOL = 1.2e-16 if np.finfo(np.longdouble).eps < 1e-18 else 2e-15


@pytest.mark.parametrize("d", [3, 4, 7, 64, 10_000])
def test_table_values_of_the_hypergeometric_match_mpmath(d: int) -> None:
    """Euler's integral by exp-sinh against 30-digit mpmath ``hyp2f1`` over the table's range
    of x (down to 1e-9, where F(1 - x^2) is nearest its singular point)."""
    x = np.concatenate([np.geomspace(1e-9, 1, 23), [0.5, 0.7071, 0.999999]])
    got = _hypergeometric_on_nodes(d, x)
    with mpmath.workdps(30):
        c = mpmath.mpf(d + 1) / 2
        for xi, g in zip(x, got):
            ref = mpmath.hyp2f1(0.5, 0.5, c, 1 - mpmath.mpf(xi) ** 2)
            assert abs(float((g - ref) / ref)) <= _F_TOL, (d, xi)


def test_table_value_check_fails_on_a_wrong_exponent() -> None:
    fault = edited("ld(d) / 2 * np.log1p(u2)", "ld(d + 0.001) / 2 * np.log1p(u2)")
    with plant("workbench.core.head_kernels:_hypergeometric_on_nodes", fault):
        with pytest.raises(AssertionError):
            test_table_values_of_the_hypergeometric_match_mpmath(7)


def test_b_matches_an_independent_quadrature_to_the_printed_digits() -> None:
    """b(c) to 2e-16 against 30-digit tanh-sinh quadrature of mpmath ``hyp2f1`` in Lemma H4's
    integral (the CLI prints 16 significant digits)."""
    with mpmath.workdps(30):
        for d, c in [(3, 1.0), (3, -0.9999), (4, 0.3), (5, math.cos(1.0)), (11, -0.2),
                     (64, 0.9), (1000, 0.05)]:
            cc = mpmath.mpf(d + 1) / 2
            integral = mpmath.quad(lambda x, cc=cc: mpmath.hyp2f1(0.5, 0.5, cc, 1 - x * x),
                                   [0, abs(mpmath.mpf(c))])
            rho = mpmath.gamma(mpmath.mpf(d) / 2) / (
                mpmath.sqrt(mpmath.pi) * mpmath.gamma(mpmath.mpf(d - 1) / 2))
            ref = 0.5 + 2 * rho / (mpmath.pi * (d - 1)) * mpmath.sign(c) * integral
            assert abs(float(head_target_agreement(d, c)) - float(ref)) <= 2e-16, (d, c)


def test_b_check_fails_when_the_integral_is_cut_short() -> None:
    """Euler's integral truncated at u ~ 7e6 instead of ~5e30: an error of ~1e-14 at d = 3."""
    _antiderivative_table.cache_clear()
    try:
        with plant("workbench.core.head_kernels:_DE_HALF_WIDTH", replaced(3.0)):
            with pytest.raises(AssertionError):
                test_b_matches_an_independent_quadrature_to_the_printed_digits()
    finally:
        _antiderivative_table.cache_clear()


def test_d2_closed_form_matches_general_series_and_integral() -> None:
    c = np.linspace(-1, 1, 41)
    closed = head_target_agreement_d2(torch.from_numpy(c))
    series = head_target_agreement_series(2, torch.from_numpy(c), max_degree=40001)
    assert torch.allclose(closed, series, atol=1e-12, rtol=0)
    # the general-d integral formula with d = 2: kappa_2 = 2/pi^2, F = arcsin(sqrt z)/sqrt z
    integral = 0.5 + (2 / math.pi**2) * np.sign(c) * _integral_F(2, np.abs(c))
    assert np.allclose(integral, closed.numpy(), atol=1e-14)


def test_b_at_q_equals_k_against_independent_integral() -> None:
    assert float(head_target_agreement(3, 1.0)) == pytest.approx(1 - 1 / math.pi, abs=1e-15)
    with mpmath.workdps(30):
        for d in [5, 12]:  # b(1) = 1/2 + E|arcsin t| / pi, t = <y, w>

            def dens(t: mpmath.mpf, d: int = d) -> mpmath.mpf:
                return (1 - t * t) ** (mpmath.mpf(d - 3) / 2)

            num = mpmath.quad(lambda t: mpmath.asin(t) * dens(t), [0, 1])
            ref = 0.5 + num / mpmath.quad(dens, [0, 1]) / mpmath.pi
            assert float(head_target_agreement(d, 1.0)) == pytest.approx(float(ref), abs=1e-14)


def test_b_symmetry_and_shape() -> None:
    c = torch.rand(3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0)) * 2 - 1
    b = head_target_agreement(7, c)
    assert b.shape == c.shape and b.dtype == torch.float64
    assert torch.allclose(b + head_target_agreement(7, -c), torch.ones_like(b), atol=1e-15)
    assert float(head_target_agreement(7, 0.0)) == 0.5
    assert head_target_agreement(7, 0.3).shape == () and head_target_agreement(2, 0.3).shape == ()
    big = torch.linspace(-1, 1, 65536, dtype=torch.float64)
    assert torch.all(torch.diff(head_target_agreement(9, big)) >= -1e-15)


def test_cross_blocks_assemble_the_kernel() -> None:
    g = torch.Generator().manual_seed(3)
    Q = uniform_sphere(7, d=5, generator=g) * 3.0  # rows are normalised inside
    K = uniform_sphere(7, d=5, generator=g)
    C = agreement_kernel(Q, K)
    top = torch.cat([agreement_kernel_cross(Q[:3], K[:3], Q[:3], K[:3]),
                     agreement_kernel_cross(Q[:3], K[:3], Q[3:], K[3:])], dim=1)
    assert torch.allclose(C[:3], top)
    assert torch.allclose(C, C.T)
    assert torch.linalg.eigvalsh(C).min() > -1e-12  # Gram matrix of +-1 features


def test_kernel_error_matches_monte_carlo() -> None:
    d, H, n = 6, 4, 40_000
    g = torch.Generator().manual_seed(21)
    Q = uniform_sphere(H, d=d, generator=g)
    K = uniform_sphere(H, d=d, generator=g)
    a = torch.tensor([0.4, -0.2, 0.5, 0.3], dtype=torch.float64)
    X, y = sample_instances(n, 2, d, points="orthonormal", generator=g)
    s = _picks(Q, K, X, y)  # +1 -> x_1
    picked = torch.where(s.unsqueeze(-1) > 0, X[:, :1], X[:, 1:2])  # (n, H, d)
    model = torch.einsum("h,nhd->nd", a, picked)
    idx = (torch.einsum("nd,nd->n", y, X[:, 0] - X[:, 1]) < 0).long()
    f = X[torch.arange(n), idx]
    errs = ((f - model) ** 2).sum(-1)
    b = head_target_agreement(d, (Q * K).sum(-1))
    e = kernel_error(a, b, agreement_kernel(Q, K))
    assert abs(e - errs.mean().item()) <= Z * errs.std().item() / math.sqrt(n)


def test_validation_names_parameters() -> None:
    Q = torch.randn(3, 4, dtype=torch.float64)
    with pytest.raises(ValueError, match="K1"):
        agreement_kernel_cross(Q, torch.randn(2, 4), Q, Q)
    with pytest.raises(ValueError, match="Q2"):
        agreement_kernel_cross(Q, Q, torch.randn(3, 5), Q)
    with pytest.raises(ValueError, match="Q"):
        agreement_kernel(torch.zeros(2, 4), torch.ones(2, 4))
    with pytest.raises(ValueError, match="cos_qk"):
        head_target_agreement(5, 1.5)
    with pytest.raises(ValueError, match="d must"):
        head_target_agreement(1, 0.5)
    with pytest.raises(ValueError, match="b must"):
        kernel_error(torch.ones(3), torch.ones(2), torch.eye(3))
