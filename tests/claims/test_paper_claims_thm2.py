"""The harmonic-analysis claims hold at quick scale, and their checks can fail.

(``workbench/proofs/paper/harmonics.py``; docs/paper.md §4; docs/derivations/lower_bound.md.
The Theorem 2 claims are tested in ``tests/claims/test_thm2_*.py``.)
"""

from __future__ import annotations

import math

import mpmath
import pytest

from workbench.proofs.claim import INTERVALS, CheckContext, combine
from workbench.proofs.paper import harmonics as hm
from workbench.proofs.registry import load_claims, run_claims
from workbench.proofs.support import exact_harmonics

IDS = [
    "harmonics.dimension",
    "harmonics.sign_coefficients",
    "kernels.agreement",
]
QUICK = CheckContext(scale="quick", seed=0)


def _verdict(fn, kind: str = "lemma") -> str:
    return combine(fn(QUICK), kind)


def test_claims_hold_at_quick_scale() -> None:
    results = {r.claim.id: r for r in run_claims(QUICK, only=IDS)}
    assert set(IDS) <= set(results)
    bad = [(i, r.verdict, r.error) for i, r in results.items() if r.verdict != "holds"]
    assert not bad, bad
    for cid in IDS:
        assert results[cid].evidence, cid


def test_kinds() -> None:
    claims = load_claims()
    assert all(claims[c].kind == "lemma" for c in IDS)


def test_evidence_methods_and_intervals_are_honest() -> None:
    """Every Monte Carlo interval is named; probabilities get intervals valid for their range."""
    ev = hm.kernels_agreement(QUICK)
    for e in ev:
        if e.method == "monte_carlo":
            assert e.interval in INTERVALS and e.ci is not None, e.to_dict()
            assert e.ci_level is not None and 0.999 <= e.ci_level < 1
            if e.interval in ("bounded", "clopper_pearson"):
                assert 0.0 <= e.ci[0] <= e.value <= e.ci[1]
            if e.relation == "==":
                assert e.resolution is not None and e.verdict == "holds"


# ------------------------------------------------------------------- the checks can fail
def test_wrong_sign_coefficients_are_violated(monkeypatch) -> None:
    real = hm.sign_coefficient_mp
    monkeypatch.setattr(
        hm,
        "sign_coefficient_mp",
        lambda d, l, dps=50: real(d, l, dps) * (1 + mpmath.mpf(10) ** -20),
    )
    assert _verdict(hm.sign_coefficients_claim) == "violated"


def test_wrong_kernel_is_violated_by_monte_carlo(monkeypatch) -> None:
    # a kernel with the wrong constant (1/pi^2 instead of 2/pi^2) is refuted by Monte Carlo
    real = hm.agreement_kernel
    monkeypatch.setattr(hm, "agreement_kernel", lambda Q, K: (real(Q, K) + 0.5) / 2)
    ev = hm.kernels_agreement(QUICK)
    assert any(e.verdict == "violated" and e.params.get("entry", "").startswith("C[") for e in ev)


def test_wrong_dimension_count_is_violated(monkeypatch) -> None:
    monkeypatch.setattr(hm, "dim_harmonics", lambda d, l: math.comb(l + d - 1, d - 1))
    assert _verdict(hm.dimension) == "violated"


@pytest.mark.parametrize("d,l", [(2, 1), (2, 7), (5, 1), (6, 9), (64, 3)])
def test_exact_eta_squared(d: int, l: int) -> None:
    q, p = exact_harmonics.eta_squared_exact(d, l)
    assert p == (-2 if d % 2 == 0 else 0)
    assert float(q) * math.pi**p == pytest.approx(
        float(hm.sign_coefficient_mp(d, l)) ** 2, rel=1e-14
    )
    assert exact_harmonics.eta_squared_exact(d, l + 1) == (0, 0)
