"""Section 7 ordering claims: they hold on small grids and fail on planted faults."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from workbench.proofs.claim import CheckContext, combine
from workbench.proofs.paper import section7
from workbench.proofs.registry import load_claims
from workbench.verifiers.presets import Run
from workbench.verifiers.sweep import compute

QUICK = CheckContext(scale="quick", seed=0, device="cpu")


def _rows(runs: list[Run]) -> list[dict[str, Any]]:
    return compute(section7._with_level(runs, 2), threads=1)


@pytest.fixture(scope="module")
def fig2_rows() -> list[dict[str, Any]]:
    return _rows(section7.fig2_runs("quick", 0))


@pytest.fixture(scope="module")
def vary_n_rows() -> list[dict[str, Any]]:
    return _rows(section7.vary_n_runs("quick", 0))


def _swap(rows: list[dict[str, Any]], key: str, a: int, b: int) -> list[dict[str, Any]]:
    """Planted bookkeeping fault: the results of label ``a`` filed under ``b`` and back."""
    other = {a: b, b: a}
    return [{**r, "labels": {**r["labels"], key: other.get(r["labels"][key], r["labels"][key])}}
            for r in rows]


def test_fig2_ordering_holds_quick(fig2_rows: list[dict[str, Any]]) -> None:
    ev = section7.fig2_ordering(fig2_rows)
    assert len(ev) == 2  # full rank 8 against ranks 2 and 4
    assert combine(ev, "experiment") == "holds", [e.to_dict() for e in ev]


def test_fig2_ordering_fails_on_swapped_ranks(fig2_rows: list[dict[str, Any]]) -> None:
    ev = section7.fig2_ordering(_swap(fig2_rows, "r", 2, 8))
    assert combine(ev, "experiment") == "violated"


def _heads_formula_fault(scale: str, seed: int) -> list[Run]:
    """Planted: the full-rank slot gets H = c d heads of rank 1 (r and H swapped)."""
    out = []
    for r in section7.fig2_runs(scale, seed):
        if r.spec.rank == r.task.d:
            r = replace(r, spec=replace(r.spec, rank=1, heads=r.task.d * r.spec.heads))
        out.append(r)
    return out


@pytest.mark.slow
def test_fig2_claim_fails_on_planted_heads_fault() -> None:
    ev = section7.full_rank_wins_one_layer(QUICK, runs=_heads_formula_fault)
    assert combine(ev, "experiment") == "violated"


def test_vary_n_ordering_holds_quick(vary_n_rows: list[dict[str, Any]]) -> None:
    ev = section7.vary_n_ordering(vary_n_rows)
    assert len(ev) == 2
    assert combine(ev, "experiment") == "holds", [e.to_dict() for e in ev]


def test_vary_n_ordering_fails_on_swapped_lengths(vary_n_rows: list[dict[str, Any]]) -> None:
    ev = section7.vary_n_ordering(_swap(vary_n_rows, "N", 2, 8))
    assert ev[0].verdict == "violated"  # the low-rank error now "falls" with N


def test_claims_are_registered() -> None:
    claims = load_claims()
    for cid in ("section7.full_rank_wins_one_layer", "section7.low_rank_grows_with_n"):
        assert claims[cid].kind == "experiment"


@pytest.mark.slow
def test_fig2_ordering_holds_on_the_quick_preset() -> None:
    """The quick fig2 preset (d = 8, 1000 steps, 3 seeds) at L = 1, for c = 1 and c = 4."""
    ev = section7.full_rank_wins_one_layer(CheckContext(scale="full"))
    assert len(ev) == 6 and combine(ev, "experiment") == "holds"
