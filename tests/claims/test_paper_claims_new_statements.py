"""Power of the claims for statements that had none: the CI coverage. It is run on the real code,
and on a realistic planted fault, which must make it ``violated`` (Theorem 2's two regimes:
``tests/claims/test_thm2_regimes.py``)."""

from __future__ import annotations

import pytest

from workbench.proofs.claim import CheckContext, combine

QUICK = CheckContext(scale="quick", seed=0)


# ------------------------------------------------------------------ CI coverage
def test_ci_coverage_holds_and_catches_narrow_intervals(monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.proofs.paper import ci_coverage as cc

    assert combine(cc.ci_coverage(QUICK), "lemma") == "holds"
    orig = cc.estimate_mean
    monkeypatch.setattr(cc, "estimate_mean",  # a 99% interval built at ~80%
                        lambda draw, **k: orig(draw, **{**k, "level": 0.8 if k["level"] == 0.99
                                                        else k["level"]}))
    assert combine(cc.ci_coverage(QUICK), "lemma") == "violated"
