"""``workbench construct majority-vote`` (Theorem 5).

The claim averages over the random head draws, so the verdict pools independent draws
(``--seeds`` >= 2; the default 8 reaches a verdict).
"""

from __future__ import annotations

import click

from workbench.commands._arguments import IntIn
from workbench.commands.construct._run import POINTS, Evaluation, construct_options
from workbench.core.validation import check_heads
from workbench.verifiers.resources import check_fits, majority_vote_terms

COPY_STYLES = ("generalized", "standard")  # workbench.constructions.majority_vote.COPY_STYLES


@click.command("majority-vote")
@click.option("--d", "d", type=IntIn(2), default=8, show_default=True, help="Dimension d >= 2.")
@click.option("--heads", type=IntIn(1), default=64, show_default=True,
              help="Votes per pair of keys.")
@click.option("--N", "N", type=IntIn(1), default=2, show_default=True, help="Keys per instance.")
@click.option("--points", type=click.Choice(POINTS), default="orthonormal", show_default=True)
@click.option(
    "--copy-style",
    type=click.Choice(COPY_STYLES),
    default="generalized",
    show_default=True,
    help="generalized (one head, M = I) | standard (d rank-1 heads)",
)
@construct_options(seeds=8, eval_samples=5000)
def majority_vote_cmd(
    ev: Evaluation,
    d: int,
    heads: int,
    N: int,
    points: str,
    copy_style: str,
) -> None:
    """Theorem 5: two layers of rank-1 majority voting (tournament for N >= 3)."""
    try:
        ev.check(d, N, points, min_seeds=2)
    except ValueError as e:
        if "--seeds" in str(e):
            raise ValueError(f"{e}: the claim averages over head draws, so a verdict needs "
                             "at least 2 independent draws") from None
        raise
    check_heads(heads, "--heads")
    check_fits(majority_vote_terms(d, heads), {"--d": d, "--heads": heads})
    from workbench.constructions import majority_vote as mv_mod
    from workbench.verifiers.construct import Built

    mv_mod.majority_vote(d, 1, N, points, copy_style, generator=0, claim_samples=2)

    def build(s: int) -> Built:
        model, claim = mv_mod.majority_vote(d, heads, N, points, copy_style, generator=s)
        return Built(model, claim, meta={"size": model.size()})

    params = {"d": d, "heads": heads, "N": N, "points": points, "copy_style": copy_style}
    ev.measure("majority-vote", params, build, d, N, points, "uniform", ensemble=True)
