"""``workbench construct full-rank`` (Fact 1)."""

from __future__ import annotations

import click

from constructions import full_rank as full_rank_mod
from workbench.commands._common import common_options
from workbench.commands.construct._run import Built, _eval_options, _run
from workbench.core.targets import nearest_neighbour


@click.command("full-rank")
@click.option("--d", "d", type=int, default=8, show_default=True)
@click.option("--N", "N", type=int, default=2, show_default=True)
@click.option("--beta", type=float, default=None, help="Temperature (default: beta_for(--eps)).")
@click.option(
    "--eps", type=float, default=1e-2, show_default=True, help="Target error for beta_for."
)
@click.option(
    "--points", type=str, default="orthonormal", show_default=True, help="orthonormal | iid"
)
@_eval_options
@common_options
def full_rank_cmd(
    d: int,
    N: int,
    beta: float | None,
    eps: float,
    points: str,
    eval_samples: int,
    seeds: int,
    as_json: bool,
    seed: int,
) -> None:
    """Fact 1: one full-rank head X softmax(beta X^T y)."""
    b = full_rank_mod.beta_for(eps, d, N, points) if beta is None else beta
    model, claim = full_rank_mod.full_rank(d, b, N, points, generator=seed)

    def build(s: int) -> Built:
        return model, nearest_neighbour, claim, {}

    params = {"d": d, "N": N, "beta": b, "eps": eps if beta is None else None, "points": points}
    _run(
        "full-rank",
        params,
        build,
        d,
        N,
        points,
        "uniform",
        eval_samples,
        seeds,
        seed,
        False,
        as_json,
    )
