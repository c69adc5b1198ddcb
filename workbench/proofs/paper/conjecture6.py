"""Conjecture 6: for long contexts no fixed-size low-rank transformer approximates f for all N.

A conjecture collects evidence only; it is never marked ``holds``. The evidence here is about
*one* construction, the rank-1 round-robin tournament of ``workbench.constructions.majority_vote``
(docs/derivations/constructions.md §3), so it cannot prove or refute the conjecture:

- the votes per pair it needs for a fixed error (union-bound claim, upper CI end) grow with N,
  and its total head count grows faster than N^2;
- at a fixed number of votes per pair, the measured error of the constructed model (fresh
  samples) grows with N (part of this is that a wrong pick costs more on average as N grows);
- the measured error, pooled over head draws, stays below the construction's claimed union bound.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from scipy import stats

from workbench.constructions.majority_vote import majority_vote, tournament_size, votes_needed
from workbench.core.sphere import sample_instances
from workbench.core.targets import nearest_neighbour
from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.paper._mc import bounded_mean_ci
from workbench.proofs.paper.fact1 import bonferroni_level, one_thread, z_of
from workbench.proofs.registry import claim


def _sample_errors(d: int, N: int, H: int, n: int, seed: int, draw: int = 0) -> torch.Tensor:
    """Per-sample errors of one drawn tournament (``N`` i.i.d. keys) on ``n`` fresh samples."""
    model, _ = majority_vote(d, H, N=N, points="iid", generator=seed + draw, claim_samples=2)
    X, y = sample_instances(n, N, d, "iid", generator=seed + 5000 + draw)
    return (model(X, y)[0] - nearest_neighbour(X, y)).square().sum(-1)


def _t_ci(values: list[float], level: float) -> tuple[float, tuple[float, float]]:
    m = float(np.mean(values))
    half = float(stats.t.ppf(0.5 + level / 2, len(values) - 1)) * float(np.std(values, ddof=1))
    half /= math.sqrt(len(values))
    return m, (m - half, m + half)


@claim(
    "conjecture6.tournament_growth",
    "Conjecture 6 (evidence): the rank-1 tournament construction must grow with N",
    "conjecture",
    depends_on=("thm5.majority_vote",),
    statement="no fixed (L, H, r < d) transformer has error <= eps for every N; evidence: "
    "the tournament's votes per pair and heads for error eps grow with N",
    source="docs/paper.md §3 Conjecture 6 [stated, paraphrased]; "
    "docs/derivations/constructions.md §3",
)
@torch.no_grad()
@one_thread
def tournament_growth(ctx: CheckContext) -> list[Evidence]:
    quick = ctx.scale == "quick"
    d, eps = 8, 0.2
    Ns = (2, 3, 4) if quick else (2, 3, 4, 6, 8)
    samples = 2000 if quick else 20_000
    out: list[Evidence] = []
    prev = None
    for N in Ns:
        H = votes_needed(d, N, eps, points="iid", samples=samples, generator=ctx.seed + N)
        size = tournament_size(N, H)
        if prev is not None:
            pN, pH, psize = prev
            p: dict[str, Any] = {
                "d": d,
                "eps": eps,
                "N": N,
                "prev_N": pN,
                "votes": H,
                "prev_votes": pH,
                "samples": samples,
            }
            out.append(
                Evidence(
                    H,
                    pH,
                    ">=",
                    "monte_carlo",
                    p,
                    note="votes per pair needed (upper-CI union bound <= eps)",
                )
            )
            out.append(
                Evidence(
                    size["heads_total"] / psize["heads_total"],
                    (N / pN) ** 2,
                    ">=",
                    "monte_carlo",
                    {**p, **size},
                    note="total heads grow at least like N^2",
                )
            )
        prev = (N, H, size)
    # fixed size: H votes per pair; one drawn model per N, its error on fresh i.i.d. samples
    H, n = (15, 2000) if quick else (63, 10_000)
    level = bonferroni_level(8)
    prev_ci, prev_N = None, None
    for N in (2, 4) if quick else (2, 3, 4, 6, 8):
        # the output copies one key: errors lie in [0, 4], a bounded interval is valid
        sample = _sample_errors(d, N, H, n, ctx.seed + 100 * N)
        m, ci = bounded_mean_ci(sample, (0.0, 4.0), z_of(level))
        p = {"d": d, "N": N, "votes": H, "n": n, "prev_N": prev_N}
        if prev_ci is not None:
            pm, (plo, phi) = prev_ci
            diff_ci = (ci[0] - phi, ci[1] - plo)  # conservative: beyond both intervals
            out.append(
                Evidence(
                    m - pm,
                    0.0,
                    ">=",
                    "monte_carlo",
                    p,
                    ci=diff_ci,
                    ci_level=level,
                    interval="bounded",
                    note="fixed votes per pair: error grows from the previous N",
                )
            )
        prev_ci, prev_N = (m, ci), N
    # the construction's claimed union bound (an average over head draws) vs the measured error
    # pooled over head draws (Student-t), N >= 3
    draws, n = (5, 300) if quick else (16, 2000)
    for N in (3,) if quick else (3, 4):
        errs = [
            float(_sample_errors(d, N, H, n, ctx.seed + 7 * N + 1000 * s, s).mean())
            for s in range(draws)
        ]
        m, ci = _t_ci(errs, level)
        _, claimed = majority_vote(
            d, H, N=N, points="iid", generator=ctx.seed, claim_samples=samples
        )
        p = {"d": d, "N": N, "votes": H, "draws": draws, "n_per_draw": n}
        out.append(
            Evidence(
                m,
                claimed.hi,
                "<=",
                "monte_carlo",
                p,
                ci=ci,
                ci_level=level,
                interval="student_t",
                note="measured (pooled over head draws) <= claimed union bound",
            )
        )
    return out
