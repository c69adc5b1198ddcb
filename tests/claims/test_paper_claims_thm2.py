"""The Theorem 2 claims hold at quick scale, and their checks can fail.

(``workbench/proofs/paper/thm2.py``; docs/paper.md §4;
docs/derivations/lower_bound.md.)
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from workbench.core.bounds.certified import CertifiedBound
from workbench.core.bounds.certified import certified_lower_bound as true_certified
from workbench.core.bounds.harmonic import HarmonicBound
from workbench.core.bounds.harmonic import harmonic_bound as true_harmonic_bound
from workbench.core.invariant_harmonics import head_degree_dimension
from workbench.proofs.claim import INTERVALS, CheckContext, combine
from workbench.proofs.paper import thm2
from workbench.proofs.paper.thm2 import reductions  # noqa: F401  (thm2.reductions)
from workbench.proofs.registry import load_claims, run_claims

IDS = [
    "thm2.projection_reduction",
    "thm2.odd_reduction",
    "thm2.conditional_law",
    "thm2.isotropy",
    "thm2.invariant_dimension",
    "thm2.degree_dimension",
    "thm2.harmonic_bound",
    "thm2.fitted_models_respect_bound",
    "thm2.random_features_respect_bound",
    "thm2.full_rank_reaches_zero",
]
QUICK = CheckContext(scale="quick", seed=0)


def _verdict(fn, kind: str = "lemma") -> str:
    return combine(fn(QUICK), kind)


def test_claims_hold_at_quick_scale() -> None:
    results = {r.claim.id: r for r in run_claims(QUICK, only=IDS)}
    assert set(IDS) <= set(results)
    bad = [(i, r.verdict, r.error) for i, r in results.items() if r.verdict != "holds"]
    assert not bad, bad
    for cid in IDS:
        assert results[cid].evidence, cid


def test_kinds_and_dependency_chain() -> None:
    claims = load_claims()
    kinds = {cid: claims[cid].kind for cid in IDS}
    assert kinds["thm2.harmonic_bound"] == "theorem"
    assert kinds["thm2.random_features_respect_bound"] == "experiment"
    assert kinds["thm2.fitted_models_respect_bound"] == "experiment"
    lemmas = {
        "thm2.projection_reduction",
        "thm2.odd_reduction",
        "thm2.conditional_law",
        "thm2.isotropy",
        "thm2.degree_dimension",
    }
    assert lemmas <= set(claims["thm2.harmonic_bound"].depends_on)
    assert "thm2.invariant_dimension" in claims["thm2.degree_dimension"].depends_on
    for cid in ("thm2.random_features_respect_bound", "thm2.full_rank_reaches_zero"):
        assert {"thm2.harmonic_bound", "thm2.fiber_bound"} <= set(claims[cid].depends_on)


def test_evidence_methods_and_intervals_are_honest() -> None:
    """Every Monte Carlo interval is named; errors and probabilities get intervals valid for
    their range, whose lower ends stay >= 0 even for the rare-event error of the full-rank head
    (a CLT interval goes below 0 there)."""
    ev = thm2.full_rank_reaches_zero(QUICK)
    for e in ev:
        if e.method == "monte_carlo":
            assert e.interval in INTERVALS and e.ci is not None, e.to_dict()
            assert e.ci_level is not None and 0.999 <= e.ci_level < 1
            if e.interval in ("bounded", "clopper_pearson"):
                assert 0.0 <= e.ci[0] <= e.value <= e.ci[1]
            if e.relation == "==":
                assert e.resolution is not None and e.verdict == "holds"
    rare = [e for e in ev if "rank1_heads" in e.params]
    assert rare and {e.interval for e in rare} == {"bounded"}
    rf = thm2.random_features_respect_bound(QUICK)
    assert {e.method for e in rf} == {"solved", "monte_carlo"}
    assert {e.interval for e in rf if e.method == "monte_carlo"} == {"normal"}


# ------------------------------------------------------------------- the checks can fail
def _wrong(bound, delta: float, scale: float):
    """``bound`` (a harmonic or fiber bound) with the value ``scale * LB + delta``."""
    lo, hi = bound.enclosure
    return dataclasses.replace(
        bound, value=scale * bound.value + delta, enclosure=(scale * lo + delta, scale * hi + delta)
    )


def _shifted(delta: float, scale: float = 1.0):
    """``harmonic_bound`` with a deliberately wrong value ``scale * LB + delta``."""

    def fake(d: int, r: int, H: int, **kw) -> HarmonicBound:
        return _wrong(true_harmonic_bound(d, r, H, **kw), delta, scale)

    return fake


def _shifted_certified(delta: float, scale: float = 1.0):
    """``certified_lower_bound`` with both of its parts ``scale * LB + delta``."""

    def fake(d: int, r: int, H: int, *a, **kw) -> CertifiedBound:
        cb = true_certified(d, r, H, *a, **kw)
        return CertifiedBound(_wrong(cb.harmonic, delta, scale), _wrong(cb.fiber, delta, scale))

    return fake


def _patch_lower_bound(monkeypatch, delta: float, scale: float = 1.0) -> None:
    """Make the bound wrong in every Theorem 2 claim module that uses it: the harmonic count
    (thm2.harmonic_bound) and the certified bound (the experiments)."""
    monkeypatch.setattr(thm2.harmonic_bound, "harmonic_bound", _shifted(delta, scale))
    monkeypatch.setattr(thm2.experiments, "certified_lower_bound", _shifted_certified(delta, scale))


def test_too_large_bound_is_violated_by_random_features(monkeypatch) -> None:
    """Random features sit 1.6-17x above the certified bound at quick scale: a bound 6x too large
    is violated (the bound's own power lives in thm2.harmonic_bound and thm2.fiber_bound)."""
    _patch_lower_bound(monkeypatch, 0.0, scale=6.0)
    ev = thm2.random_features_respect_bound(QUICK)
    assert combine(ev, "experiment") == "violated"
    assert all(e.relation == ">=" for e in ev if e.verdict == "violated")


def test_too_large_bound_is_violated_by_fitted_models(monkeypatch) -> None:
    """Fitted models sit 2-17x above the certified bound: a bound 12x too large is violated."""
    _patch_lower_bound(monkeypatch, 0.0, scale=12.0)
    assert _verdict(thm2.fitted_models_respect_bound, "experiment") == "violated"


def test_too_small_bound_loses_the_full_rank_separation(monkeypatch) -> None:
    """The separation shows err(full rank) below the rank-1 bound; with the bound 4x too small
    it can no longer be shown at d = 5, H = 4096 (upper CI end 0.95 of the true bound), so the
    verdict is lost (inconclusive: a too-small lower bound is not contradicted by a small
    error)."""
    _patch_lower_bound(monkeypatch, 0.0, scale=0.25)
    ev = thm2.full_rank_reaches_zero(QUICK)
    assert combine(ev, "theorem") == "inconclusive"
    assert any(e.verdict == "inconclusive" and e.method == "monte_carlo" for e in ev)


def test_wrong_enclosure_is_violated_by_harmonic_bound(monkeypatch) -> None:
    _patch_lower_bound(monkeypatch, 1e-9)
    ev = thm2.harmonic_bound_claim(QUICK)
    bad = [e for e in ev if e.verdict == "violated"]
    assert bad and any("independent" in e.params for e in bad)


def test_independent_bound_matches_library() -> None:
    lo, hi = thm2.independent_bound(6, 2, 3, 41)
    a, b = true_harmonic_bound(6, 2, 3, max_degree=41).enclosure
    assert max(lo, a) <= min(hi, b) and hi - lo < 1e-15


def test_head_degree_dimension_known_values() -> None:
    # r = 1 in d = 3: the rotations about the key axis leave frequencies 0, +-1, +-2 -> 5 dims
    assert head_degree_dimension(3, 1, 9, seed=0) == 5
    # a space that fills all of H_l when N(d,l) is small
    assert head_degree_dimension(4, 1, 1, seed=0) == 4


# ------------------------------------------------------------------- Lemma 2 has content
def _reflected(fake_G):
    """``_at_reflected_query`` with ``G(-y)`` replaced by ``fake_G(model, X, y, G(-y))``."""
    real = thm2.reductions._at_reflected_query

    def fake(model, X, y):
        s_neg, G_neg = real(model, X, y)
        return s_neg, fake_G(model, X, y, G_neg)

    return fake


@pytest.mark.parametrize(
    "name,fake_G",
    [
        # noise with the variance of G(-y): the old pair identity held for it
        ("noise", lambda m, X, y, Gn: Gn.std(-1, keepdim=True) * torch.randn(
            Gn.shape, generator=torch.Generator().manual_seed(5), dtype=Gn.dtype)),
        ("sign slip: G(y) for G(-y)", lambda m, X, y, Gn: thm2.reductions._G(m, X, y)),
    ],
)
def test_odd_reduction_refutes_a_wrong_reflection(monkeypatch, name, fake_G) -> None:
    monkeypatch.setattr(thm2.reductions, "_at_reflected_query", _reflected(fake_G))
    ev = thm2.odd_reduction(QUICK)
    assert combine(ev, "lemma") == "violated", name


def test_odd_reduction_refutes_an_even_s(monkeypatch) -> None:
    """s(-y) is computed from the data: a sign rule that is not odd is caught."""
    real = thm2.reductions._at_reflected_query
    monkeypatch.setattr(
        thm2.reductions, "_at_reflected_query",
        lambda m, X, y: (-real(m, X, y)[0], real(m, X, y)[1]),
    )
    ev = thm2.odd_reduction(QUICK)
    assert any(e.verdict == "violated" and e.method == "identity" for e in ev)


def test_random_features_claim_three_percent_off_is_violated(monkeypatch) -> None:
    """A target agreement b 3 % too large makes the solver claim an error about 0.03 too small:
    the fresh Monte Carlo re-measurement of the model refutes it."""
    import workbench.constructions.random_features as rf

    real = rf.target_agreement
    monkeypatch.setattr(rf, "target_agreement", lambda Q, K: 1.03 * real(Q, K))
    ev = thm2.random_features_respect_bound(QUICK)
    bad = [e for e in ev if e.verdict == "violated"]
    assert bad and all(e.method == "monte_carlo" and e.relation == "==" for e in bad)
