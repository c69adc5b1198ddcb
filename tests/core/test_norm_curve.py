"""The norm curve (docs/derivations/sandwich.md, "Bounded scores and the norm of the value
maps"): one test per step, each against an independent computation and seen to fail on a
planted fault."""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.core.bounds.harmonic_count.harmonic import harmonic_bound
from workbench.core.bounds.harmonic_count.norm_curve import (
    captured_energy,
    form_norm,
    norm_curve,
    norm_curve_bound,
)
from workbench.testing import edited, plant


def _form_norm_matches_monte_carlo() -> None:
    """Step 1: ``||w^T M w||_{L^2}`` in closed form against Monte Carlo over the sphere."""
    rng = np.random.default_rng(0)
    for d in (3, 6):
        M = rng.standard_normal((1, d, d)) + np.eye(d)
        w = rng.standard_normal((400_000, d))
        w /= np.linalg.norm(w, axis=1, keepdims=True)
        q2 = np.einsum("ni,ij,nj->n", w, M[0], w) ** 2
        half = 3.29 * q2.std() / math.sqrt(len(q2))  # 99.9 %
        assert abs(form_norm(M) ** 2 - q2.mean()) <= half, (d, form_norm(M) ** 2, q2.mean())


def test_form_norm_matches_monte_carlo() -> None:
    _form_norm_matches_monte_carlo()


def test_the_form_norm_test_fails_without_the_factor_two() -> None:
    with plant("workbench.core.bounds.harmonic_count.norm_curve:form_norm", edited("2 * tr2",
                                                                                   "tr2")):
        with pytest.raises(AssertionError):
            _form_norm_matches_monte_carlo()


def _least(a: np.ndarray, grid: np.ndarray) -> float:
    """``1/2 E_a min_{g in grid} (1 - 2 a g + g^2)`` for the equally likely values ``a``."""
    return 0.5 * float((1 - 2 * np.outer(a, grid) + grid**2).min(1).mean())


def _curve_is_the_least_over_laws() -> None:
    """Step 2: ``1/2 phi_A(rho)`` is at most ``1/2 E min_{g <= rho} (1 - 2 a g + g^2)`` for
    every law of ``a`` in [0, 1] with ``E a^2 <= A`` (brute force over g), with equality at
    ``a = sqrt(A)``."""
    rng = np.random.default_rng(1)
    g = np.linspace(0, 4, 4001)
    for A in (0.3, 0.8, 0.97):
        for rho in (0.1, 0.5, 0.9, 1.5):
            grid = g[g <= rho]
            at_const = _least(np.array([math.sqrt(A)]), grid)
            assert abs(at_const - norm_curve(A, rho)) < 1e-3, (A, rho, at_const)
            for _ in range(20):
                a = rng.uniform(0, 1, 50) ** rng.uniform(0.2, 3)
                a *= min(1.0, math.sqrt(A / float((a**2).mean())))
                assert _least(a, grid) >= norm_curve(A, rho) - 1e-3, (A, rho)


def test_the_curve_is_the_least_over_laws() -> None:
    _curve_is_the_least_over_laws()


@pytest.mark.parametrize("old,new", [("+ rho * rho)", ")"), ("rho * rho >= A", "rho >= A"),
                                     ("2.0 * rho", "1.0 * rho")])
def test_the_curve_test_fails_on_a_planted_fault(old: str, new: str) -> None:
    with plant("workbench.core.bounds.harmonic_count.norm_curve:norm_curve", edited(old, new)):
        with pytest.raises(AssertionError):
            _curve_is_the_least_over_laws()


def test_the_curve_is_the_harmonic_count_from_sqrt_a_on() -> None:
    """Step 3: above ``rho = sqrt(A)`` the curve is the harmonic count; below it is larger, and
    continuous at ``sqrt(A)``."""
    for d, r, H in ((3, 1, 4), (8, 2, 8), (16, 1, 16)):
        A = captured_energy(d, r, H)
        lb = harmonic_bound(d, r, H).enclosure[0]
        assert abs(norm_curve_bound(d, r, H, 1.0) - lb) < 1e-12
        s = math.sqrt(A)
        assert norm_curve_bound(d, r, H, 0.5 * s) > lb + 0.01
        assert abs(norm_curve(A, s * (1 - 1e-9)) - norm_curve(A, s)) < 1e-8


def test_a_model_with_value_maps_i_over_h_has_form_norm_one() -> None:
    """Proposition N2's witness: ``M_h = I / H`` has ``tau = sum tr M_h / d = 1`` and form norm
    1 >= sqrt(A), so the curve gives the harmonic count there and the u-component is fitted."""
    for d, H in ((3, 4), (8, 16)):
        M = np.stack([np.eye(d) / H] * H)
        assert abs(form_norm(M) - 1.0) < 1e-12
        assert abs(np.trace(M, axis1=1, axis2=2).sum() / d - 1.0) < 1e-12
