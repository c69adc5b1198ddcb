"""Gauss-Legendre rules and the Beta function of workbench.core.quadrature (the fiber bound's
quadratures, docs/derivations/fiber_bound.md): exactness on polynomials against exact rational
integrals, nodes against high-precision roots, Beta against mpmath."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest

from workbench.core.quadrature import beta_function, gauss_legendre
from workbench.testing import arg_scaled, edited, plant


def _monomial_errors(n: int) -> float:
    """Largest error of the n-point rule on x^k, k < 2n, against the exact 2/(k+1) (k even)."""
    x, w = gauss_legendre(n)
    worst = 0.0
    for k in range(2 * n):
        exact = Fraction(2, k + 1) if k % 2 == 0 else Fraction(0)
        worst = max(worst, abs(float(np.sum(w * x**k)) - float(exact)))
    return worst


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 12, 20])
def test_rule_integrates_polynomials_below_degree_2n_exactly(n: int) -> None:
    assert _monomial_errors(n) < 1e-14


@pytest.mark.parametrize("n", [96, 192, 400])
def test_nodes_and_weights_match_high_precision_roots(n: int) -> None:
    """Nodes to 1e-16, weights to 1e-11 relative at the ends (the float nodes' own rounding)
    and 1e-14 inside, against 40-digit Newton on mpmath's Legendre polynomial."""
    x, w = gauss_legendre(n)
    assert np.all(np.diff(x) > 0) and np.array_equal(x, -x[::-1]) and np.array_equal(w, w[::-1])
    with mpmath.workdps(40):
        for i in (0, 1, n // 4, n // 2 - 1):
            xi = mpmath.findroot(lambda t: mpmath.legendre(n, t), mpmath.mpf(x[i]), tol=1e-35)
            dp = mpmath.diff(lambda t: mpmath.legendre(n, t), xi)
            wi = 2 / ((1 - xi**2) * dp**2)
            assert abs(x[i] - float(xi)) < 2e-16
            assert abs(w[i] / float(wi) - 1) < (1e-11 if i < 2 else 1e-14)


def test_rule_check_fails_on_a_wrong_recurrence() -> None:
    fault = edited("p_prev, p = p, ((2 * j + 1) * x * p - j * p_prev) / (j + 1)",
                   "p_prev, p = p, ((2 * j + 1) * x * p - j * p_prev) / (j + 2)")
    with plant("workbench.core.quadrature:_legendre_pair", fault):
        from workbench.core import quadrature

        quadrature._rule.cache_clear()
        try:
            with pytest.raises(AssertionError):
                test_rule_integrates_polynomials_below_degree_2n_exactly(7)
        finally:
            quadrature._rule.cache_clear()


@pytest.mark.parametrize("a,b", [(0.5, 0.5), (0.5, 3.5), (4.0, 6.0), (100.0, 69.5),
                                 (0.5, 1023.5), (3.0, 1020.0), (300.0, 300.0)])
def test_beta_matches_mpmath(a: float, b: float) -> None:
    with mpmath.workdps(30):
        exact = mpmath.beta(a, b)
    assert abs(beta_function(a, b) / float(exact) - 1) < 1e-14


def test_beta_check_fails_on_a_wrong_argument() -> None:
    with plant("workbench.core.quadrature:beta_function", arg_scaled(1, "b", 1.01)):
        with pytest.raises(AssertionError):
            test_beta_matches_mpmath(0.5, 3.5)


def test_bad_arguments_name_the_parameter() -> None:
    with pytest.raises(ValueError, match="n"):
        gauss_legendre(0)
    with pytest.raises(ValueError, match="b"):
        beta_function(1.0, 0.0)
