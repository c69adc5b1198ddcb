"""``workbench construct full-rank`` (Fact 1)."""

from __future__ import annotations

import click

from workbench.commands._arguments import IntIn
from workbench.commands.construct._run import POINTS, Evaluation, construct_options
from workbench.core.validation import check_float
from workbench.verifiers.resources import check_fits, full_rank_terms


@click.command("full-rank")
@click.option("--d", "d", type=IntIn(2), default=8, show_default=True, help="Dimension d >= 2.")
@click.option("--N", "N", type=IntIn(1), default=2, show_default=True, help="Keys per instance.")
@click.option("--beta", type=float, default=None, help="Temperature (default: beta_for(--eps)).")
@click.option("--eps", type=float, default=1e-2, show_default=True,
              help="Target error in (0, 1] for beta_for (the zero model scores 1).")
@click.option("--points", type=click.Choice(POINTS), default="orthonormal", show_default=True)
@construct_options()
def full_rank_cmd(
    ev: Evaluation,
    d: int,
    N: int,
    beta: float | None,
    eps: float,
    points: str,
) -> None:
    """Fact 1: one full-rank head X softmax(beta X^T y)."""
    ev.check(d, N, points)
    check_float("--eps", eps, lo=0.0, hi=1.0, lo_open=True)  # as in bounds heads-needed
    if beta is not None:
        check_float("--beta", beta, lo=0.0)
    check_fits(full_rank_terms(d), {"--d": d})
    from workbench.constructions import full_rank as full_rank_mod

    b = full_rank_mod.beta_for(eps, d, N, points) if beta is None else beta
    built = full_rank_mod.full_rank(d, b, N, points, generator=ev.seed)

    def build(s: int) -> tuple[object, object]:
        return built

    params = {"d": d, "N": N, "beta": b, "eps": eps if beta is None else None, "points": points}
    ev.measure("full-rank", params, build, d, N, points, "uniform")
