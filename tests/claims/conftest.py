"""Shared by the claim tests: the built-in claims run once at quick scale (plug-ins never enter),
and the assertion that a module's claims reach their verdicts there."""

from __future__ import annotations

import pytest

from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.registry import ClaimResult, builtin_claims, run_claims

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


def check(cid: str, ctx: CheckContext = QUICK) -> list[Evidence]:
    """The evidence of the built-in claim ``cid``, from its registered check (with the threads and
    ``no_grad`` its ``@claim`` declares): how a test runs one claim under a planted fault."""
    return builtin_claims()[cid].check(ctx)
