"""The coverage claim of the Monte Carlo intervals (``workbench/proofs/paper/ci_coverage.py``)
holds at quick scale and catches intervals narrower than their stated level."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.claims.conftest import assert_module_holds, run_claim
from workbench.proofs.claim import combine
from workbench.testing import plant


def test_ci_coverage_claims_hold_at_quick_scale(quick_results) -> None:
    assert_module_holds(quick_results, "workbench.proofs.paper.ci_coverage")


def _level_99_built_at_80(f: Callable[..., Any]) -> Callable[..., Any]:
    """``estimate_mean`` whose 99 % intervals are built at about 80 %."""
    return lambda draw, **k: f(draw, **{**k, "level": 0.8 if k["level"] == 0.99 else k["level"]})


def test_narrow_intervals_are_violated() -> None:
    with plant("workbench.core.montecarlo:estimate_mean", _level_99_built_at_80):
        ev = run_claim("verifiers.ci_coverage")[1]
    assert combine(ev, "lemma") == "violated"


def test_family_level_without_bonferroni_is_violated() -> None:
    """Dropping the correction (every interval at the family level 0.999) under-covers a family
    of m > 1 intervals: the union-bound evidence is violated, the single-interval coverage not."""
    with plant("workbench.core.intervals:bonferroni_level",
               lambda f: (lambda m, family=0.999: family)):
        verdict, ev = run_claim("verifiers.ci_coverage")
    assert verdict == "violated"
    bad = [e for e in ev if e.verdict == "violated"]
    assert bad and all("union bound" in e.note for e in bad)
    assert {e.params["m"] for e in bad} == {2, 7, 50, 1000}


def test_over_conservative_bonferroni_is_violated() -> None:
    """A correction by m^2 (valid, but power wasted) is not the family level either."""
    with plant("workbench.core.intervals:bonferroni_level",
               lambda f: (lambda m, family=0.999: 1 - (1 - family) / m**2)):
        assert run_claim("verifiers.ci_coverage")[0] == "violated"
