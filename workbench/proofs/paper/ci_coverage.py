"""The Monte Carlo intervals behind every ``monte_carlo``/``trained`` verdict reach their nominal
coverage (docs/derivations/intervals.md).

A CI that is too narrow makes ``holds``/``violated`` too easy and shows only over repetitions, so
each estimator is run ``REPS`` times on a quantity whose mean is known exactly, and the fraction of
intervals that cover it is compared with the nominal level (exact Clopper-Pearson interval on the
count; resolution ``TOL`` for the CLT's approximation at ``n = SAMPLES``):

- ``verifiers.estimate_error`` on D_2 (d = 4) for the model that always answers ``x_1``: the
  per-sample error is 0 or 2 with probability 1/2 each (by the symmetry of D_2), mean exactly 1;
- ``workbench.core.montecarlo.estimate_mean`` on ``2 Bernoulli(1/2)``, mean exactly 1.

The claims' families of intervals get their joint level from ``bonferroni_level``; its family
level is checked exactly: ``m`` intervals at level ``1 - alpha`` fail jointly with probability at
most ``m alpha`` (the union bound), so ``m (1 - bonferroni_level(m))`` must equal ``1 - family``
(larger: the family is under-covered; smaller: power is wasted).

Its test: ``tests/claims/test_ci_coverage.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.core.intervals import bonferroni_level, mean_interval
from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.registry import claim

if TYPE_CHECKING:
    import torch


REPS = 1500  # a 99.9% Clopper-Pearson half-width near 0.9 of about 0.026 < TOL
SAMPLES = 200
LEVEL = 0.999  # of the interval on the coverage fraction
TOL = 0.03
FAMILY = 0.999  # the joint level every claim's family of intervals is corrected to
FAMILY_SIZES = (1, 2, 7, 50, 1000)


def _evidence(k: int, nominal: float, what: str) -> Evidence:
    est = mean_interval(k / REPS, 0.0, REPS, LEVEL, "clopper_pearson", (0.0, 1.0))
    p = {"estimator": what, "reps": REPS, "samples": SAMPLES, "covered": k, "nominal": nominal}
    return Evidence.estimate(est, "==", nominal, params=p, resolution=TOL, tolerance=TOL,
                             note=f"fraction of {REPS} intervals covering the exact mean 1 "
                             "(Clopper-Pearson interval on the count)")


@claim(
    "verifiers.ci_coverage",
    "Monte Carlo intervals reach their nominal coverage on quantities with known means",
    "lemma",
    statement=f"coverage of estimate_error (level 0.9) and estimate_mean (level 0.99) == nominal "
    f"within {TOL}; m (1 - bonferroni_level(m)) == 1 - {FAMILY}",
    ref="derivations/intervals.md#confidence-intervals-of-the-monte-carlo-evidence",
    mark="ours", threads=1,
)
def ci_coverage(ctx: CheckContext) -> list[Evidence]:
    import torch

    import workbench.core.montecarlo as montecarlo
    import workbench.verifiers.estimate as estimate
    from workbench.verifiers.tasks import Task
    task = Task("nearest", d=4, N=2, points="orthonormal")

    def first_key(X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return X[:, 0]

    k = 0
    for i in range(REPS):
        est = estimate.estimate_error(first_key, task, samples=SAMPLES, batch=SAMPLES, level=0.9,
                                      generator=ctx.seed * 100_003 + i)[0]
        k += est.lo <= 1.0 <= est.hi
    out = [_evidence(k, 0.9, "workbench.verifiers.estimate_error (normal, level 0.9)")]

    def draw(m: int, g: torch.Generator | None) -> torch.Tensor:
        return 2.0 * (torch.rand(m, generator=g, dtype=torch.float64) < 0.5).double()

    k = 0
    for i in range(REPS):
        e = montecarlo.estimate_mean(draw, samples=SAMPLES, batch=SAMPLES, level=0.99,
                                     generator=ctx.seed * 100_003 + REPS + i)[0]
        k += e.lo <= 1.0 <= e.hi
    out.append(_evidence(k, 0.99, "workbench.core.montecarlo.estimate_mean (normal, level 0.99)"))
    for m in FAMILY_SIZES:
        out.append(Evidence(m * (1.0 - bonferroni_level(m, FAMILY)), 1.0 - FAMILY, "==", "exact",
                            {"m": m, "family": FAMILY}, tolerance=1e-12,
                            note="union bound: the family of m intervals fails with probability "
                            "<= m (1 - level), exactly the family's 1 - family"))
    return out
