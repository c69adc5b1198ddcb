"""Theorem 2's harmonic count (``workbench/proofs/paper/thm2/harmonic_bound.py``): the claim holds
at quick scale, the chain of lemma claims mirrors the derivation, the independent interval
evaluation agrees with the library, and a bound a hair off is refuted."""

from __future__ import annotations

import dataclasses

from tests.claims.conftest import assert_module_holds, run_claim
from workbench.core.bounds.harmonic_count.harmonic import harmonic_bound
from workbench.proofs.paper import thm2
from workbench.proofs.registry import builtin_claims
from workbench.testing import plant


def test_harmonic_bound_claims_hold_at_quick_scale(quick_results) -> None:
    assert_module_holds(quick_results, "workbench.proofs.paper.thm2.harmonic_bound")


def test_the_chain_mirrors_the_derivation() -> None:
    claims = builtin_claims()
    assert claims["thm2.harmonic_bound"].kind == "theorem"
    assert claims["thm2.random_features_respect_bound"].kind == "experiment"
    assert claims["thm2.fitted_models_respect_bound"].kind == "experiment"
    lemmas = {"thm2.projection_reduction", "thm2.odd_reduction", "thm2.conditional_law",
              "thm2.isotropy", "thm2.degree_dimension"}
    assert all(claims[c].kind == "lemma" for c in lemmas)
    assert lemmas <= set(claims["thm2.harmonic_bound"].depends_on)
    assert "thm2.invariant_dimension" in claims["thm2.degree_dimension"].depends_on
    for cid in ("thm2.random_features_respect_bound", "thm2.full_rank_reaches_zero"):
        assert {"thm2.harmonic_bound", "thm2.fiber_bound"} <= set(claims[cid].depends_on)


def test_independent_bound_matches_library() -> None:
    lo, hi = thm2.independent_bound(6, 2, 3, 41)
    a, b = harmonic_bound(6, 2, 3, max_degree=41).enclosure
    # the same full-series enclosure (the tail counted), computed twice
    assert abs(lo - a) < 1e-15 and abs(hi - b) < 1e-15 and lo < hi


def _shifted(delta: float):  # type: ignore[no-untyped-def]
    """A bound function whose value and enclosure are ``delta`` too large."""

    def wrap(f):  # type: ignore[no-untyped-def]
        def fake(*a, **k):  # type: ignore[no-untyped-def]
            b = f(*a, **k)
            lo, hi = b.enclosure
            return dataclasses.replace(b, value=b.value + delta, enclosure=(lo + delta, hi + delta))

        return fake

    return wrap


def test_wrong_enclosure_is_violated_by_harmonic_bound() -> None:
    """A harmonic count 1e-9 too large falls outside the independent interval evaluation."""
    with plant("workbench.core.bounds.harmonic_count.harmonic:harmonic_bound", _shifted(1e-9)):
        verdict, ev = run_claim("thm2.harmonic_bound")
    bad = [e for e in ev if e.verdict == "violated"]
    assert verdict == "violated" and bad and any("independent" in e.params for e in bad)
