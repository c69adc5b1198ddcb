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


def _next_odd_degree(f):  # type: ignore[no-untyped-def]
    def g(d, max_degree):  # type: ignore[no-untyped-def]
        e = f(d, max_degree + 2).copy()
        e[1:-2:2] = e[3::2]  # eta_l reported for degree l + 2
        return e[: max_degree + 1]

    return g


def test_eta_for_the_next_odd_degree_is_violated_without_a_runaway_search() -> None:
    """The float energies then never reach 1 - eps (eta_1 is lost): the witness search stops at
    its cap and says so (violated), instead of growing until memory runs out."""
    with plant("workbench.core.harmonics:sign_coefficients", _next_odd_degree):
        verdict, ev = run_claim("harmonics.sign_coefficients")
    assert verdict == "violated"
    assert any("before the search cap" in e.note and e.verdict == "violated" for e in ev)
