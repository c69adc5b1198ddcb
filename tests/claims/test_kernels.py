"""The kernel claim of rank-1 hardmax heads (``workbench/proofs/paper/kernels.py``) holds at
quick scale with honest intervals, and fails on a planted fault in ``core.head_kernels``."""

from __future__ import annotations

from tests.claims.conftest import assert_module_holds, run_claim
from workbench.testing import plant


def test_kernels_claims_hold_at_quick_scale(quick_results) -> None:
    assert_module_holds(quick_results, "workbench.proofs.paper.kernels")
    assert quick_results["kernels.agreement"].claim.kind == "lemma"


def test_evidence_intervals_are_honest(quick_results) -> None:
    """Every Monte Carlo row is an equality with its resolution, at a Bonferroni level of at
    least 99.9 %: exact binomial intervals inside [0, 1] for the probabilities, a CLT interval
    for the error."""
    mc = [e for e in quick_results["kernels.agreement"].evidence if e.method == "monte_carlo"]
    assert mc and {e.interval for e in mc} == {"clopper_pearson", "normal"}
    assert all(e.ci is not None and e.ci_level is not None and 0.999 <= e.ci_level < 1 for e in mc)
    assert all(e.relation == "==" and e.resolution is not None and e.verdict == "holds" for e in mc)
    probabilities = [e for e in mc if e.interval == "clopper_pearson"]
    assert all(0.0 <= e.ci[0] <= e.value <= e.ci[1] <= 1.0 for e in probabilities)


def test_wrong_kernel_is_violated_by_monte_carlo() -> None:
    # a kernel with the wrong constant (1/pi^2 instead of 2/pi^2) is refuted by Monte Carlo
    with plant("workbench.core.head_kernels:agreement_kernel",
               lambda f: (lambda Q, K: (f(Q, K) + 0.5) / 2)):
        ev = run_claim("kernels.agreement")[1]
    assert any(e.verdict == "violated" and e.params.get("entry", "").startswith("C[") for e in ev)
