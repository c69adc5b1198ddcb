"""Theorem 2, both sides (``workbench/proofs/paper/thm2/sandwich.py``): the claims hold at quick
scale; the exact one-head error is violated by a closed form at the wrong rank, and the sandwich
by a bound 1 % too high where it is tight (one head)."""

from __future__ import annotations

import dataclasses

import pytest

from tests.claims.conftest import assert_module_holds, run_claim
from workbench.constructions.optimized import one_head_exact_error
from workbench.proofs.claim import combine
from workbench.proofs.paper.thm2 import sandwich
from workbench.testing import plant


def test_sandwich_claims_hold_at_quick_scale(quick_results) -> None:
    assert_module_holds(quick_results, "workbench.proofs.paper.thm2.sandwich")


def test_one_head_exact_has_power() -> None:
    ev = sandwich.one_head_evidence(8, 4, 60_000, 3, 0.01)
    assert combine(ev, "lemma") == "holds"
    # a wrong closed form (C(l+r-2, r-2) in place of C(l+r-1, r-1), i.e. rank r-1) is rejected
    wrong = one_head_exact_error(8, 3)
    mc = [e for e in ev if e.method == "monte_carlo"]
    assert len(mc) == 2 and len(ev) == 3  # and the series-vs-quadrature identity
    assert all(not (e.ci[0] - e.tolerance <= sum(wrong) / 2 <= e.ci[1] + e.tolerance) for e in mc)
    # an interval wider than the resolution gives inconclusive, not holds
    assert combine(sandwich.one_head_evidence(8, 4, 2000, 3, 0.001), "lemma") == "inconclusive"


def _rank_plus_one(f):  # type: ignore[no-untyped-def]
    return lambda d, r: f(d, r + 1)


def test_one_head_exact_refutes_the_error_at_the_wrong_rank() -> None:
    """The fiber quadrature of the exact error evaluated at rank r + 1 (an off-by-one in the
    fiber's dimension m = d - r): the Monte Carlo of the model and the harmonic series both
    disagree with it."""
    with plant("workbench.core.bounds.fiber_bound.fiber:one_head_error", _rank_plus_one):
        verdict, ev = run_claim("thm2.one_head_exact")
    assert verdict == "violated"
    assert {e.method for e in ev if e.verdict == "violated"} == {"identity", "monte_carlo"}


def _one_head_fiber_high(factor: float):  # type: ignore[no-untyped-def]
    """``fiber_bound`` ``factor`` times too large for one head, where it is the certified bound
    and lies within 0.3 % of the exact witness."""

    def wrap(f):  # type: ignore[no-untyped-def]
        def fake(d, r, H, *a, **k):  # type: ignore[no-untyped-def]
            b = f(d, r, H, *a, **k)
            lo, hi = b.enclosure
            return b if H != 1 else dataclasses.replace(
                b, value=factor * b.value, enclosure=(factor * lo, factor * hi))

        return fake

    return wrap


@pytest.mark.parametrize("factor", [1.01, 1.05])
def test_sandwich_refutes_a_one_head_bound_one_percent_high(factor: float) -> None:
    # the function that computes the fiber bound, for fiber_bound and certified_lower_bound alike
    with plant("workbench.core.bounds.fiber_bound.fiber:trusted_fiber_bound",
               _one_head_fiber_high(factor)):
        verdict, ev = run_claim("thm2.sandwich")
    bad = [e for e in ev if e.verdict == "violated"]
    assert verdict == "violated" and bad and all(e.params["H"] == 1 for e in bad)


def test_the_committed_trained_witness_replays_and_a_planted_model_fault_is_caught() -> None:
    """The committed trained witness ``thm2.sandwich`` replays at quick scale (an MLP-score one)
    reproduces its recorded error; a layer 10 % off does not."""
    import json

    from workbench.testing import scaled

    pts = json.loads(sandwich.RESULTS.read_text())["points"]
    q = min((q for q in pts if q["method"] == "trained_generalized" and q["witness_file"]),
            key=sandwich._smallest_mlp_first)
    assert q["training"]["chosen"]["score"] == "mlp"
    path = sandwich.RESULTS.parents[2] / q["witness_file"]
    assert combine(sandwich.replay_evidence(path, q["certified"]), "experiment") == "holds"
    with plant("workbench.models.attention:GeneralizedAttention.forward", scaled(0.9)):
        assert combine(sandwich.replay_evidence(path, q["certified"]), "experiment") == "violated"
