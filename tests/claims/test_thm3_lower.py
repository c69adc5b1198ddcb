"""Theorem 3's lower side (``workbench/proofs/paper/thm3_lower.py``): the certified bound holds at
quick scale, and a dropped factor, an overcounted dimension or a sign slip in the construction's
biases makes the claim ``violated``."""

from __future__ import annotations

import dataclasses
from typing import Any

from tests.claims.conftest import QUICK, assert_module_holds
from workbench.core.bounds.biased import BiasedBound
from workbench.proofs.claim import combine
from workbench.proofs.paper import thm3_lower
from workbench.proofs.registry import builtin_claims
from workbench.testing import arg_scaled, edited, plant

CLAIMS = builtin_claims()  # each check as the runner calls it (threads, no_grad)
LOW_RANK_LOWER = CLAIMS["thm3.low_rank_lower"].check

BOUND = "workbench.core.bounds.biased:biased_lower_bound"


def test_thm3_lower_claims_hold_at_quick_scale(quick_results) -> None:
    assert_module_holds(quick_results, "workbench.proofs.paper.thm3_lower")


def _doubled(f: Any) -> Any:
    """A dropped factor 1/2: the bound and its interval twice as large."""
    return lambda *a, **k: _twice(f(*a, **k))


def _twice(b: BiasedBound) -> BiasedBound:
    return dataclasses.replace(b, value=2 * b.value, ci=(2 * b.ci[0], 2 * b.ci[1]))


def test_low_rank_lower_violated_by_a_dropped_half() -> None:
    with plant(BOUND, _doubled):
        ev = LOW_RANK_LOWER(QUICK)
    assert combine(ev, "theorem") == "violated"


def test_low_rank_lower_violated_by_an_overcounted_dimension() -> None:
    # the quadratic factor d(d+1)/2 of D_l applied twice (21x at d = 6). A 4x overcount only
    # makes the r = 3 evidence inconclusive: the constant-error claim is not that sharp.
    d = 6
    with plant(BOUND, arg_scaled(2, "H", d * (d + 1) // 2)):
        ev = LOW_RANK_LOWER(QUICK)
    assert combine(ev, "theorem") == "violated"


def test_decomposition_catches_a_bias_sign_slip() -> None:
    assert thm3_lower.decomposition_gap(6, "random_signs", 500, 3) < 1e-20
    with plant("workbench.core.targets:biased_nearest_neighbour",
               lambda f: lambda X, y, b: f(X, y, -b)):
        # the symmetric alternating reading hides the slip; random signs do not
        assert thm3_lower.decomposition_gap(6, "alternating", 500, 3) < 1e-20
        assert thm3_lower.decomposition_gap(6, "random_signs", 500, 3) > 1.0
        ev = LOW_RANK_LOWER(QUICK)
    assert combine(ev, "theorem") == "violated"


def test_quadrature_catches_a_wrong_antiderivative_normalisation() -> None:
    # the closed antiderivative's constant (d - 1) B(1/2, (d-1)/2) read with d: every eta_l,
    # l >= 1, 1/6 too small at d = 6, which only the independent quadrature sees
    with plant("workbench.core.bounds.biased:step_coefficients",
               edited("(d - 1) * beta_fn(0.5, a)", "d * beta_fn(0.5, a)")):
        ev = LOW_RANK_LOWER(QUICK)
    by_quadrature = [e for e in ev if "degrees" in e.params]
    assert len(by_quadrature) == 2
    assert all(e.verdict == "violated" for e in by_quadrature)
