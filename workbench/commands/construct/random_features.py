"""``workbench construct random-features`` (PAPER.md §3)."""

from __future__ import annotations

import click

from constructions import random_features as rf_mod
from workbench.commands._common import common_options
from workbench.commands.construct._run import Built, _eval_options, _run
from workbench.core.targets import nearest_neighbour


@click.command("random-features")
@click.option("--d", "d", type=int, default=8, show_default=True)
@click.option("--heads", type=int, default=64, show_default=True)
@click.option(
    "--law",
    type=str,
    default="cosine_uniform",
    show_default=True,
    help="independent | tied | cosine_uniform",
)
@click.option("--solver", type=str, default="auto", show_default=True, help="auto | cholesky | cg")
@_eval_options
@common_options
def random_features_cmd(
    d: int,
    heads: int,
    law: str,
    solver: str,
    eval_samples: int,
    seeds: int,
    as_json: bool,
    seed: int,
) -> None:
    """Random rank-1 hardmax heads with optimal values (exact kernel error on D_2)."""
    rf_mod.random_features(d, 1, law, solver, generator=0)  # validate before any work

    def build(s: int) -> Built:
        model, claim = rf_mod.random_features(d, heads, law, solver, generator=s)
        assert model is not None  # build_model=True (the default) always builds it
        return model, nearest_neighbour, claim, {}

    params = {"d": d, "heads": heads, "law": law, "solver": solver, "N": 2, "points": "orthonormal"}
    _run(
        "random-features",
        params,
        build,
        d,
        2,
        "orthonormal",
        "uniform",
        eval_samples,
        seeds,
        seed,
        False,
        as_json,
    )
