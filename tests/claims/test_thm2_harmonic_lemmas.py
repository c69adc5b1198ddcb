"""Theorem 2, Lemmas 4-5 (``workbench/proofs/paper/thm2/harmonic_lemmas.py``): the claims hold at
quick scale, and each is violated by a planted fault in what it checks: the dimension of the
harmonics, the invariant ranks, the quadratic factor of ``D_l``, a dropped term of ``D'_l``."""

from __future__ import annotations

import math

from tests.claims.conftest import assert_module_holds, run_claim
from workbench.core.invariant_harmonics import head_degree_dimension
from workbench.testing import edited, plant, replaced


def test_harmonic_lemmas_claims_hold_at_quick_scale(quick_results) -> None:
    assert_module_holds(quick_results, "workbench.proofs.paper.thm2.harmonic_lemmas")


def test_head_degree_dimension_known_values() -> None:
    # r = 1 in d = 3: the rotations about the key axis leave frequencies 0, +-1, +-2 -> 5 dims
    assert head_degree_dimension(3, 1, 9, seed=0) == 5
    # a space that fills all of H_l when N(d,l) is small
    assert head_degree_dimension(4, 1, 1, seed=0) == 4


def test_isotropy_refutes_a_wrong_dimension_count() -> None:
    """N(d,l) counted as every homogeneous polynomial of degree l, C(l+d-1, d-1) (16 -> 20 at
    d = 4, l = 3): the normalised zonal harmonics' Gram matrix is off by that factor."""
    wrong = replaced(lambda d, l: math.comb(l + d - 1, d - 1))
    with plant("workbench.core.harmonics:dim_harmonics", wrong):
        verdict, ev = run_claim("thm2.isotropy")
    assert verdict == "violated"
    assert any(e.params["entry"].startswith("gram[") for e in ev if e.verdict == "violated")


def _one_too_many(f):  # type: ignore[no-untyped-def]
    return lambda d, r, k, seed: f(d, r, k, seed) + 1


def test_invariant_dimension_refutes_an_off_by_one_rank() -> None:
    with plant("workbench.core.invariant_harmonics:invariant_harmonic_rank", _one_too_many):
        assert run_claim("thm2.invariant_dimension")[0] == "violated"


def test_degree_dimension_refutes_a_wrong_quadratic_factor() -> None:
    """The quadratic forms counted as d(d-1)/2 (antisymmetric pairs) instead of d(d+1)/2."""
    slip = edited("d * (d + 1) // 2", "d * (d - 1) // 2")
    with plant("workbench.core.bounds.harmonic_count.harmonic:_class_factor", slip):
        verdict, ev = run_claim("thm2.degree_dimension")
    assert verdict == "violated"
    assert all(e.relation == "==" for e in ev if e.verdict == "violated")


def test_fixed_form_dimension_refutes_a_dropped_term() -> None:
    """``D'_l`` without its ``C(l+r+1, r-1)`` term: the measured rank, tight at r = 1, l = 5
    (3 = D'_l), exceeds it."""
    with plant("workbench.core.bounds.harmonic_count.harmonic:degree_dimension_bound",
               edited("(l - 2, l, l + 2)", "(l - 2, l)")):
        verdict, ev = run_claim("thm2.fixed_form_dimension")
    assert verdict == "violated"
    assert any(e.params["r"] == 1 and e.params["l"] == 5 for e in ev if e.verdict == "violated")
