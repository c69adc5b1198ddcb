"""Shared by the claim tests: the built-in claims run once at quick scale (plug-ins never enter),
the assertion that a module's claims reach their verdicts there, and one claim run alone (for a
planted fault)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest
import sympy as sp

from workbench.proofs.claim import CheckContext, Evidence, combine
from workbench.proofs.registry import ClaimResult, builtin_claims, run_claims
from workbench.testing import Wrap, mapped

QUICK = CheckContext(scale="quick", seed=0)


@pytest.fixture(scope="session")
def quick_results() -> dict[str, ClaimResult]:
    """Every built-in claim's result at quick scale, seed 0 (one run for the whole session)."""
    return {r.claim.id: r for r in run_claims(QUICK, claims=builtin_claims())}


def expected_verdict(result: ClaimResult) -> str:
    """A conjecture only collects evidence (``inconclusive``); everything else must hold."""
    return "inconclusive" if result.claim.kind == "conjecture" else "holds"


def assert_module_holds(results: dict[str, ClaimResult], module: str) -> None:
    """The claims registered by ``module`` exist and reach their verdicts at quick scale."""
    mine = {k: r for k, r in results.items() if r.claim.module == module}
    assert mine, f"{module} registers no claim"
    bad = {k: (r.verdict, r.error) for k, r in mine.items() if r.verdict != expected_verdict(r)}
    assert not bad, bad


def run_claim(cid: str, ctx: CheckContext = QUICK) -> tuple[str, list[Evidence]]:
    """The built-in claim ``cid``'s verdict and evidence (quick scale, seed 0 by default), run
    alone as ``workbench check`` runs it (its thread and autograd settings included): how a test
    runs one claim under a planted fault."""
    c = builtin_claims()[cid]
    ev = c.check(ctx)
    return combine(ev, c.kind), ev


ENCODINGS = "workbench.core.symbolic.bounds:get_bound"  # every claim reads encodings through it


def form_changed(bound_id: str, rhs: Callable[[sp.Expr], sp.Expr]) -> Wrap:
    """A wrap for :data:`ENCODINGS`: the encoding ``bound_id`` with its right-hand side
    rewritten by ``rhs`` (a change of form: an exponent, a factor), the others as they are."""
    return mapped(lambda b: dataclasses.replace(b, rhs=rhs(b.rhs)) if b.id == bound_id else b)
