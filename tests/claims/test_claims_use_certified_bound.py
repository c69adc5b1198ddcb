"""The claims that confront models with Theorem 2's bound use the certified bound: the larger of
the harmonic count and the fiber bound (``workbench.core.bounds.certified``), not the harmonic
count alone. Checked at the quick-scale points with H r < d, where the fiber bound is larger."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workbench.core.bounds.certified import certified_lower_bound
from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.paper import experiments

QUICK = CheckContext(scale="quick", seed=0)


def _uses_certified(rows: list[Evidence], point: Callable[[dict[str, Any]], tuple[int, int, int]],
                    end: int) -> None:
    """Every row's bound is the certified bound at its ``point(params) = (d, r, H)`` (``end`` 0:
    the certified number; 1: the upper end of its enclosure), and at some row the fiber bound is
    the larger of the two."""
    assert rows
    fiber_larger = []
    for e in rows:
        cb = certified_lower_bound(*point(e.params))
        assert e.bound == cb.enclosure[end], (e.params, e.bound, cb)
        if cb.source == "fiber":
            assert e.bound > cb.harmonic.enclosure[end]
            fiber_larger.append(e.params)
    assert fiber_larger


def _own(p: dict[str, Any]) -> tuple[int, int, int]:
    return p["d"], p["r"], p["H"]


def test_fitted_models_use_the_certified_bound(quick_results) -> None:
    _uses_certified(quick_results["thm2.fitted_models_respect_bound"].evidence, _own, 1)


def test_random_features_use_the_certified_bound(quick_results) -> None:
    ev = quick_results["thm2.random_features_respect_bound"].evidence
    rows = [e for e in ev if e.relation == ">="]
    assert len(rows) == len(ev) - 2  # all but the two claimed-error equalities
    _uses_certified(rows, _own, 1)


def test_full_rank_separation_uses_the_certified_bound(quick_results) -> None:
    ev = quick_results["thm2.full_rank_reaches_zero"].evidence
    rows = [e for e in ev if "rank1_heads" in e.params]
    _uses_certified(rows, lambda p: (p["d"], 1, p["rank1_heads"]), 0)


def test_rank_separation_uses_the_certified_bound() -> None:
    ev = experiments.rank_separation_small(QUICK)
    own = [e for e in ev if e.note.startswith("trained generalized attention vs its own")]
    assert {e.params["r"] for e in own} == {1, 2, 3, experiments.SEPARATION_D}
    _uses_certified(own, _own, 0)
    (full,) = [e for e in ev if "rank1_bound_heads" in e.params]
    cb = certified_lower_bound(experiments.SEPARATION_D, 1, experiments.SEPARATION_H)
    assert cb.source == "fiber" and full.bound == cb.value > cb.harmonic.enclosure[0]


def test_falsifier_attacks_the_certified_bound() -> None:
    ev = experiments.falsifier_finds_planted(QUICK)
    trials = [e for e in ev if e.note == "no counterexample to the certified bound"]
    _uses_certified(trials, _own, 0)


def test_solved_values_meet_the_certified_bound_where_the_fiber_bound_is_larger() -> None:
    from workbench.proofs.paper.thm2 import optimality

    ev = optimality.solved_values_optimal(QUICK)
    rows = [e for e in ev if e.relation == ">="]
    assert {(e.params["d"], e.params["H"]) for e in rows} == {
        (d, H) for d, H, _, _ in optimality.RF_CASES if H < d}
    _uses_certified(rows, _own, 1)
