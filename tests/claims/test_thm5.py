"""Theorem 5 (``workbench/proofs/paper/thm5.py``): the majority vote and its error exponent hold
at quick scale, and an ensemble error a few percent off, ties counted as errors, a Hoeffding step
too high or a wrong exponent make them ``violated`` (and a claim's dependents ``unsupported``)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.claims.conftest import ENCODINGS, QUICK, assert_module_holds, form_changed
from workbench.core.symbolic import eps
from workbench.proofs.claim import combine
from workbench.proofs.paper.thm5 import heuristic_exponent
from workbench.proofs.registry import builtin_claims, run_claims
from workbench.testing import plant, scaled

CLAIMS = builtin_claims()  # each check as the runner calls it (threads, no_grad)
MAJORITY_VOTE = CLAIMS["thm5.majority_vote"].check
ERROR_EXPONENT = CLAIMS["thm5.error_exponent"].check

TAIL = "workbench.constructions.majority_vote:_tail_wrong"


def test_thm5_claims_hold_at_quick_scale(quick_results) -> None:
    assert_module_holds(quick_results, "workbench.proofs.paper.thm5")
    for cid, kind in (("thm5.majority_vote", "theorem"), ("thm5.error_exponent", "lemma")):
        r = quick_results[cid]
        assert r.claim.kind == kind and r.evidence, cid
        # every sampled value carries its interval
        assert not [e.to_dict() for e in r.evidence
                    if e.method in ("monte_carlo", "trained", "solved") and e.ci is None], cid
    assert "thm5.majority_vote" in CLAIMS["thm5.error_exponent"].depends_on


@pytest.fixture
def fresh_ensemble_cache():
    """The exact ensemble error is cached: clear it around a test that plants its tail."""
    import workbench.constructions.majority_vote as mv

    mv._ensemble_error.cache_clear()
    yield
    mv._ensemble_error.cache_clear()


@pytest.mark.parametrize("factor", [1.1, 0.9])
def test_majority_vote_claim_ten_percent_off_is_violated(fresh_ensemble_cache, factor) -> None:
    with plant(TAIL, scaled(factor)):
        ev = MAJORITY_VOTE(QUICK)
    bad = [e for e in ev if e.verdict == "violated"]
    assert any(e.method == "monte_carlo" for e in bad)  # the fresh-heads measurement
    assert any("independent quadrature" in e.note for e in bad)  # and the mpmath reference


def test_majority_vote_claim_that_counts_ties_as_errors_is_violated(fresh_ensemble_cache) -> None:
    with plant(TAIL, lambda f: lambda H, p, ties_half: f(H, p, False)):
        ev = MAJORITY_VOTE(QUICK)
    bad = {(e.params.get("H"), e.method) for e in ev if e.verdict == "violated"}
    assert (16, "exact") in bad and (16, "monte_carlo") in bad and (15, "monte_carlo") not in bad


def test_hoeffding_bound_three_percent_high_is_violated() -> None:
    """The Hoeffding step sits within 1-2 % of the Gaussian closed form at d = 64."""
    with plant("workbench.constructions.majority_vote:hoeffding_bound", scaled(1.03)):
        ev = MAJORITY_VOTE(QUICK)
    assert any(e.verdict == "violated" and "Gaussian MGF" in e.note for e in ev)


@pytest.mark.parametrize("power", [1, 3])
def test_encoding_with_another_eps_power_is_violated(power) -> None:
    """The exponent -1/2 is read from the encoding ``H >= c_5 d / eps^2``: the same law with
    ``eps`` or ``eps^3`` (exponents -1, -1/3) is refuted by the fit."""
    wrap = form_changed("thm5.majority_vote_heads", lambda rhs: rhs.subs(eps**2, eps**power))
    with plant(ENCODINGS, wrap):
        ev = ERROR_EXPONENT(QUICK)
    assert combine(ev, "lemma") == "violated"


def test_exponent_is_read_from_the_encoding() -> None:
    assert heuristic_exponent() == -0.5


def _shifted(f: Any) -> Any:
    """The exact ensemble error claimed 0.15 too high."""
    return lambda d, H: f(d, H) + 0.15


def test_violated_claim_makes_dependents_unsupported() -> None:
    with plant("workbench.constructions.majority_vote:ensemble_error", _shifted):
        res = {r.claim.id: r.verdict
               for r in run_claims(QUICK, only=["thm5.error_exponent"], claims=CLAIMS)}
    assert res == {"thm5.majority_vote": "violated", "thm5.error_exponent": "unsupported"}


@pytest.mark.parametrize("factor", [0.5, 0.98])
def test_hoeffding_bound_too_small_is_violated(factor) -> None:
    """A Hoeffding bound that is still a valid upper bound on the ensemble error, but 2 % or 2x
    below its formula, differs from the independent quadrature in t."""
    with plant("workbench.constructions.majority_vote:hoeffding_bound", scaled(factor)):
        ev = MAJORITY_VOTE(QUICK)
    assert combine(ev, "theorem") == "violated"
    assert any(e.verdict == "violated" and "independent quadrature" in e.note for e in ev)


@pytest.mark.parametrize("factor", [0.97, 1.03])
def test_ensemble_error_three_percent_off_is_violated(factor) -> None:
    """Within the Monte Carlo resolution (5 %), but not the independent quadrature's."""
    with plant("workbench.constructions.majority_vote:ensemble_error", scaled(factor)):
        ev = MAJORITY_VOTE(QUICK)
    assert combine(ev, "theorem") == "violated"
    assert any(e.verdict == "violated" and "binomial tails" in e.note for e in ev)
