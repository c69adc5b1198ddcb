"""Conjecture 6: for long contexts no fixed-size low-rank transformer approximates f for all N.

A conjecture collects evidence only; it is never marked ``holds``. The evidence here is about
*one* construction, the rank-1 round-robin tournament of ``workbench.constructions.majority_vote``
(docs/derivations/constructions.md, "3. Theorem 5: majority vote (N = 2) and a tournament
(N >= 3)"), so it cannot prove or refute the conjecture:

- the votes per pair it needs for a fixed error (union-bound claim, upper CI end) grow with N,
  and its total head count grows faster than N^2;
- at a fixed number of votes per pair, the measured error of the constructed model (fresh
  samples) grows with N (part of this is that a wrong pick costs more on average as N grows);
- the measured error, pooled over head draws, stays below the construction's claimed union bound.

Its test: ``tests/claims/test_conjecture6.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.core.intervals import bonferroni_level, student_t
from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.registry import claim

if TYPE_CHECKING:
    import torch



def _sample_errors(d: int, N: int, H: int, n: int, seed: int, draw: int = 0) -> torch.Tensor:
    """Per-sample errors of one drawn tournament (``N`` i.i.d. keys) on ``n`` fresh samples."""
    import workbench.constructions.majority_vote as mv
    import workbench.core.targets as targets
    from workbench.core.sphere import sample_instances
    model, _ = mv.majority_vote(d, H, N=N, points="iid", generator=seed + draw, claim_samples=2)
    X, y = sample_instances(n, N, d, "iid", generator=seed + 5000 + draw)
    return (model(X, y)[0] - targets.nearest_neighbour(X, y)).square().sum(-1)


@claim(
    "conjecture6.tournament_growth",
    "Conjecture 6 (evidence): the rank-1 tournament construction must grow with N",
    "conjecture",
    depends_on=("thm5.majority_vote",),
    statement="no fixed (L, H, r < d) transformer has error <= eps for every N; evidence: "
    "the tournament's votes per pair and heads for error eps grow with N",
    ref="paper.md#conjecture-6", mark="paper", threads=1, no_grad=True,
)
def tournament_growth(ctx: CheckContext) -> list[Evidence]:
    import workbench.constructions.majority_vote as mv
    from workbench.core.montecarlo import sample_mean
    d, eps = 8, 0.2
    Ns = ctx.pick((2, 3, 4), (2, 3, 4, 6, 8))
    samples = ctx.pick(2000, 20_000)
    out: list[Evidence] = []
    prev = None
    for N in Ns:
        H = mv.votes_needed(d, N, eps, points="iid", samples=samples, generator=ctx.seed + N)
        size = mv.tournament_size(N, H)
        if prev is not None:
            pN, pH, psize = prev
            p: dict[str, Any] = {"d": d, "eps": eps, "N": N, "prev_N": pN, "votes": H,
                                 "prev_votes": pH, "samples": samples}
            out.append(Evidence(H, pH, ">=", "monte_carlo", p,
                                note="votes per pair needed (upper-CI union bound <= eps)"))
            out.append(Evidence(size["heads_total"] / psize["heads_total"], (N / pN) ** 2, ">=",
                                "monte_carlo", {**p, **size},
                                note="total heads grow at least like N^2"))
        prev = (N, H, size)
    # fixed size: H votes per pair; one drawn model per N, its error on fresh i.i.d. samples
    H, n = ctx.pick((15, 2000), (63, 10_000))
    level = bonferroni_level(8)
    prev_est, prev_N = None, None
    for N in ctx.pick((2, 4), (2, 3, 4, 6, 8)):
        # the output copies one key: errors lie in [0, 4], a bounded interval is valid
        est = sample_mean(_sample_errors(d, N, H, n, ctx.seed + 100 * N), level, "bounded",
                          (0.0, 4.0))
        p = {"d": d, "N": N, "votes": H, "n": n, "prev_N": prev_N}
        if prev_est is not None:  # conservative: the difference beyond both intervals
            out.append(Evidence(est.mean - prev_est.mean, 0.0, ">=", "monte_carlo", p,
                                ci=(est.lo - prev_est.hi, est.hi - prev_est.lo), ci_level=level,
                                interval="bounded", label="difference of errors",
                                note="fixed votes per pair: error grows from the previous N"))
        prev_est, prev_N = est, N
    # the construction's claimed union bound (an average over head draws) vs the measured error
    # pooled over head draws (Student-t), N >= 3
    draws, n = ctx.pick((5, 300), (16, 2000))
    for N in ctx.pick((3,), (3, 4)):
        errs = [float(_sample_errors(d, N, H, n, ctx.seed + 7 * N + 1000 * s, s).mean())
                for s in range(draws)]
        _, claimed = mv.majority_vote(d, H, N=N, points="iid", generator=ctx.seed,
                                      claim_samples=samples)
        p = {"d": d, "N": N, "votes": H, "draws": draws, "n_per_draw": n}
        out.append(Evidence.estimate(student_t(errs, level), "<=", claimed.hi, params=p,
                                     note="measured (pooled over head draws) <= claimed union "
                                     "bound"))
    return out
