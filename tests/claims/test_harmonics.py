"""The harmonic-analysis claims (``workbench/proofs/paper/harmonics.py``) hold at quick scale,
and each fails on a planted fault in ``workbench.core.harmonics``."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import mpmath

from tests.claims.conftest import assert_module_holds, run_claim
from workbench.testing import plant, replaced


def test_harmonics_claims_hold_at_quick_scale(quick_results) -> None:
    assert_module_holds(quick_results, "workbench.proofs.paper.harmonics")
    assert all(quick_results[c].claim.kind == "lemma"
               for c in ("harmonics.dimension", "harmonics.sign_coefficients"))


def test_wrong_dimension_count_is_violated() -> None:
    """``dim Hom_l`` (all homogeneous polynomials) in place of ``N(d, l)``."""
    with plant("workbench.core.harmonics:dim_harmonics",
               replaced(lambda d, l: math.comb(l + d - 1, d - 1))):
        assert run_claim("harmonics.dimension")[0] == "violated"


def _off_by_1e20(f: Callable[..., Any]) -> Callable[..., Any]:
    return lambda d, l, dps=50: f(d, l, dps) * (1 + mpmath.mpf(10) ** -20)


def test_wrong_sign_coefficients_are_violated() -> None:
    with plant("workbench.core.harmonics:sign_coefficient_mp", _off_by_1e20):
        assert run_claim("harmonics.sign_coefficients")[0] == "violated"
