"""Theorem 3, upper-bound side: full-rank biased attention represents the biased target f*.

The target's definition is a reading (docs/paper.md#theorem-3-exponential-separation; the reading
is docs/derivations/constructions.md#4-theorem-3-the-biased-family-inferred-reading):
``f* = sum_j c_j f_{b_j}`` with ``J = 2 d^2 + 1`` biased nearest-neighbour terms
``f_b(X, y) = x_{argmax_i (<x_i, y> + b_i)}``, ``b_j = tau_j e_2``, ``tau_j = 4 j / d^2``,
``c_j = (-1)^j`` (``j = -d^2..d^2``), Gaussian queries, ``D_N`` keys.

The check compares ``workbench.constructions.biased`` against an independent implementation of that
reading (``workbench.proofs.support.theorem3.reference_target``, vectorised, rebuilt from the
documented formulas rather than taken from the construction), by exact identity on samples
(hardmax: claim ``err == 0``) and by fresh-sample Monte Carlo (softmax: the claimed pointwise bound
on every sample, and the measured error against the claimed mean bound, decided beyond both
intervals).
Only the upper side is checked here: the rank-r lower side is ``thm3.low_rank_lower``.
It is registered as a lemma because it checks one half of the theorem under a reading.

Its test: ``tests/claims/test_thm3.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from workbench.core.intervals import bonferroni_level
from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.registry import claim

if TYPE_CHECKING:
    import torch


READING = "alternating"  # the coefficients of the documented reading (recorded in the params)
HEADS_LAW = "thm3.full_rank_heads"  # the encoding H <= c_3u d^2
C_3U = 3.0  # the claim's value of the encoding's unknown constant: 2 d^2 + 1 <= 3 d^2


def _sq_gap(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Per-sample ``||a - b||^2``."""
    return (a - b).square().sum(-1)


@claim(
    "thm3.biased_construction",
    "Theorem 3 (upper side, target a reading): 2d^2+1 full-rank biased heads represent f*",
    "lemma",
    depends_on=("fact1.pointwise_bound",),
    statement="hardmax: sum_j c_j I X hardmax(X^T y + b_j) = f*(X, y) (err = 0) with "
    "H = 2d^2+1 <= 3d^2 heads of rank d; softmax at beta: err <= claimed bound",
    ref="derivations/constructions.md#4-theorem-3-the-biased-family-inferred-reading",
    mark="reading", threads=1, no_grad=True,
)
def biased_construction(ctx: CheckContext) -> list[Evidence]:
    import torch

    import workbench.constructions.biased as biased_lib
    import workbench.proofs.support.theorem3 as theorem3
    from workbench.core.sphere import sample_instances
    from workbench.core.symbolic import get_bound
    from workbench.models.scores import DotScore
    from workbench.verifiers.estimate import estimate_error
    n = ctx.pick(4000, 40_000)
    hard = ctx.pick([(3, 2), (4, 2), (4, 3)], [(3, 2), (4, 2), (4, 3), (6, 2), (6, 5)])
    soft = ctx.pick([(4, 100.0), (4, 1000.0)], [(4, 100.0), (4, 1000.0), (6, 300.0)])
    level = bonferroni_level(len(soft))
    out: list[Evidence] = []
    for k, (d, N) in enumerate(hard):
        model, claimed, family = biased_lib.biased(d, N, normalizer="hardmax", generator=ctx.seed)
        p = {"d": d, "N": N, "normalizer": "hardmax", "coefficients": READING}
        J = family.terms
        W = model.W.detach()[0]  # (J, d, d): key maps
        Q = cast(DotScore, model.score).Q.detach()[0]  # (J, d, d): query maps
        ranks = [int(torch.linalg.matrix_rank(m)) for m in (*W, *Q)]
        out.append(Evidence(J, 2 * d**2 + 1, "==", "exact", p, note="heads = 2d^2 + 1"))
        out.append(Evidence(J, get_bound(HEADS_LAW).evaluate(d=d, c_3u=C_3U), "<=", "exact", p,
                            note=f"H = O(d^2): the encoding {HEADS_LAW} at c_3u = {C_3U:g}"))
        out.append(Evidence(min(ranks), d, "==", "exact", p, note="every head has rank d"))
        X, y = sample_instances(n, N, d, "orthonormal", "gaussian", generator=ctx.seed + 31 * k + d)
        ref = theorem3.reference_target(X, y)
        out.append(Evidence(float(_sq_gap(model(X, y)[0], ref).max()), claimed.value, "<=",
                            "identity", {**p, "n": n}, tolerance=1e-20,
                            note="max ||model - f*||^2 over samples (claim: 0)"))
        out.append(Evidence.identity(float(_sq_gap(family.target(X, y), ref).max()),
                                     {**p, "n": n}, tolerance=1e-20,
                                     note="construction's reference f* == independent reading"))
    for k, (d, beta) in enumerate(soft):
        model, claimed, family = biased_lib.biased(
            d, 2, normalizer="softmax", beta=beta, generator=ctx.seed + k, claim_samples=n
        )
        p = {"d": d, "N": 2, "normalizer": "softmax", "beta": beta, "n": n,
             "coefficients": READING}
        # the claim's pointwise content: ||model - f*||^2 <= bound(X, y) on every sample
        X, y = sample_instances(n, 2, d, "orthonormal", "gaussian", generator=ctx.seed + 53 + k)
        sq = _sq_gap(model(X, y)[0], theorem3.reference_target(X, y))
        bound = biased_lib.soft_bound_values(family, X, y, beta)
        out.append(Evidence.identity(
            float((sq - bound).max()),
            {**p, "max_error_over_bound": float((sq / bound)[bound > 1e-12].max())},
            tolerance=1e-12, note="max over samples of ||model - f*||^2 - pointwise bound"))
        est = estimate_error(model, theorem3.BiasedTask(d, 2), samples=n, batch=2048, level=level,
                             generator=ctx.seed + 7 + k)[0]
        out.append(Evidence(
            est.mean - claimed.value, 0.0, "<=", "monte_carlo",
            {**p, "error": est.mean, "claimed": claimed.value,
             "claimed_ci": (claimed.lo, claimed.hi)},
            ci=(est.lo - claimed.hi, est.hi - claimed.lo), ci_level=level, interval="normal",
            note="fresh-sample error minus the claimed mean bound; CI beyond both CLT intervals "
            "(the a-priori error range (2J)^2 is too wide for a bounded interval)"))
    return out
