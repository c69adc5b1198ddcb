"""Section 7's ordering claims (``workbench/proofs/paper/section7.py``) hold on small grids and
fail on planted faults: results filed under the wrong label, or a wrong heads formula."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from tests.claims.conftest import assert_module_holds, run_claim
from workbench.proofs.claim import CheckContext, combine
from workbench.testing import plant, scaled

Rows = list[dict[str, Any]]



def _swap(rows: Rows, key: str, a: int, b: int) -> Rows:
    """Planted bookkeeping fault: the results of label ``a`` filed under ``b`` and back."""
    other = {a: b, b: a}
    return [{**r, "labels": {**r["labels"], key: other.get(r["labels"][key], r["labels"][key])}}
            for r in rows]


def _swapped(key: str, a: int, b: int) -> Callable[[Callable[..., Rows]], Callable[..., Rows]]:
    """``sweep.compute`` that files the results of label ``a`` under ``b`` and back."""
    return lambda f: (lambda *args, **kw: _swap(f(*args, **kw), key, a, b))


def test_section7_claims_hold_at_quick_scale(quick_results) -> None:
    assert_module_holds(quick_results, "workbench.proofs.paper.section7")
    # full rank 8 against ranks 2 and 4; rank 1 rising from N = 3 to 6, and full rank at both N
    # below rank 1 at N = 3
    assert len(quick_results["section7.full_rank_wins_one_layer"].evidence) == 2
    ev = quick_results["section7.low_rank_grows_with_n"].evidence
    assert [e.params["finding"] for e in ev] == ["rises", "full rank small", "full rank small"]
    assert (ev[0].params["N_short"], ev[0].params["N_long"]) == (3, 6)
    for cid in ("section7.full_rank_wins_one_layer", "section7.low_rank_grows_with_n"):
        assert quick_results[cid].claim.kind == "experiment"


def test_fig2_claim_fails_on_swapped_ranks() -> None:
    with plant("workbench.verifiers.sweep:compute", _swapped("r", 2, 8)):
        ev = run_claim("section7.full_rank_wins_one_layer")[1]
    assert combine(ev, "experiment") == "violated"


def test_vary_n_claim_fails_on_swapped_lengths() -> None:
    with plant("workbench.verifiers.sweep:compute", _swapped("N", 3, 6)):
        ev = run_claim("section7.low_rank_grows_with_n")[1]
    assert ev[0].verdict == "violated"  # the low-rank error now "falls" from N = 3 to N = 6


def _low_rank_given_full_rank(f: Callable[..., list[Any]]) -> Callable[..., list[Any]]:
    """Planted: the trainer's low-rank models get full rank (H r kept: H = c)."""

    def grid(*args: Any, **kw: Any) -> list[Any]:
        out = []
        for r in f(*args, **kw):
            if r.spec.rank < r.task.d:
                r = replace(r, spec=replace(r.spec, rank=r.task.d,
                                            heads=r.spec.rank * r.spec.heads // r.task.d))
            out.append(r)
        return out

    return grid


def test_vary_n_claim_fails_when_low_rank_models_get_full_rank() -> None:
    """Both curves are then full rank: the "low-rank" curve no longer stands above full rank,
    so full rank at the longer N is not below it at the shortest."""
    with plant("workbench.verifiers.presets:encoder_grid", _low_rank_given_full_rank):
        verdict, ev = run_claim("section7.low_rank_grows_with_n")
    assert verdict == "violated"
    assert {e.params["finding"] for e in ev if e.verdict == "violated"} == {"full rank small"}


def _heads_formula_fault(f: Callable[..., list[Any]]) -> Callable[..., list[Any]]:
    """Planted: the full-rank slot gets H = c d heads of rank 1 (r and H swapped)."""

    def grid(*args: Any, **kw: Any) -> list[Any]:
        out = []
        for r in f(*args, **kw):
            if r.spec.rank == r.task.d:
                r = replace(r, spec=replace(r.spec, rank=1, heads=r.task.d * r.spec.heads))
            out.append(r)
        return out

    return grid


@pytest.mark.slow
def test_fig2_claim_fails_on_planted_heads_fault() -> None:
    with plant("workbench.verifiers.presets:encoder_grid", _heads_formula_fault):
        ev = run_claim("section7.full_rank_wins_one_layer")[1]
    assert combine(ev, "experiment") == "violated"


@pytest.mark.slow
def test_fig2_ordering_holds_on_the_quick_preset() -> None:
    """The quick fig2 preset (d = 8, 1000 steps, 3 seeds) at L = 1, for c = 1 and c = 4."""
    ev = run_claim("section7.full_rank_wins_one_layer", CheckContext(scale="full"))[1]
    assert len(ev) == 6 and combine(ev, "experiment") == "holds"


def test_vary_n_claim_fails_when_training_is_ten_times_too_slow() -> None:
    # a learning-rate schedule 10x too small: the models barely move from their start, and full
    # rank is no longer below rank 1 at the longest N
    with plant("workbench.verifiers.train:lr_factor", scaled(0.1)):
        ev = run_claim("section7.low_rank_grows_with_n")[1]
    assert combine(ev, "experiment") == "violated"


@pytest.mark.slow
def test_vary_n_ordering_holds_on_the_quick_preset() -> None:
    """The quick vary_n preset (d = 16, N in {4, 8, 16}, 800 steps, 2 seeds): both rises and
    full rank small at all three N."""
    ev = run_claim("section7.low_rank_grows_with_n", CheckContext(scale="full"))[1]
    assert [e.params["finding"] for e in ev] == ["rises"] * 2 + ["full rank small"] * 3
    assert combine(ev, "experiment") == "holds"
