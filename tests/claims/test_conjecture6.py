"""Conjecture 6's evidence (``workbench/proofs/paper/conjecture6.py``) agrees at quick scale yet
stays inconclusive, and a planted fault in the tournament's head count is caught."""

from __future__ import annotations

from tests.claims.conftest import assert_module_holds, run_claim
from workbench.proofs.claim import combine
from workbench.testing import edited, plant

CID = "conjecture6.tournament_growth"


def test_conjecture6_claims_hold_at_quick_scale(quick_results) -> None:
    assert_module_holds(quick_results, "workbench.proofs.paper.conjecture6")
    r = quick_results[CID]
    assert r.claim.kind == "conjecture" and r.verdict == "inconclusive"
    # inconclusive although every piece of its evidence agrees
    assert r.evidence and all(e.verdict == "holds" for e in r.evidence)
    # the only CI-free sampled values are head counts chosen by an upper-CI rule
    assert {e.note for e in r.evidence if e.ci is None} == {
        "votes per pair needed (upper-CI union bound <= eps)", "total heads grow at least like N^2"}


def test_heads_linear_in_n_are_violated() -> None:
    """A tournament counted with H votes per key instead of per pair: heads grow like N, not
    N^2 (N = 3 to 4 at equal votes: x1.5 < (4/3)^2)."""
    with plant("workbench.constructions.majority_vote:tournament_size",
               edited("H * P + P + N + 1", "H * (N - 1) + P + N + 1")):
        ev = run_claim(CID)[1]
    assert combine(ev, "conjecture") == "violated"
    assert {e.note for e in ev if e.verdict == "violated"} == {"total heads grow at least like N^2"}
