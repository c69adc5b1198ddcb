"""``workbench construct random-features`` (docs/paper.md, random features)."""

from __future__ import annotations

import click

from workbench.commands._arguments import IntIn
from workbench.commands.construct._run import Evaluation, construct_options
from workbench.core.validation import check_heads
from workbench.verifiers.resources import check_fits, rank_one_terms

# workbench.constructions.random_features.HEAD_LAWS
LAWS = ("independent", "tied", "cosine_uniform")
SOLVERS = ("auto", "cholesky", "cg")  # workbench.constructions._kernel_solve.SOLVERS


@click.command("random-features")
@click.option("--d", "d", type=IntIn(2), default=8, show_default=True, help="Dimension d >= 2.")
@click.option("--heads", type=IntIn(1), default=64, show_default=True, help="Rank-1 heads H >= 1.")
@click.option("--law", type=click.Choice(LAWS), default="cosine_uniform", show_default=True)
@click.option("--solver", type=click.Choice(SOLVERS), default="auto", show_default=True)
@construct_options()
def random_features_cmd(
    ev: Evaluation,
    d: int,
    heads: int,
    law: str,
    solver: str,
) -> None:
    """Random rank-1 hardmax heads with optimal values (exact kernel error on D_2)."""
    ev.check(d, 2, "orthonormal")
    check_heads(heads, "--heads")
    check_fits(rank_one_terms(d, heads), {"--d": d, "--heads": heads})
    from workbench.constructions import random_features as rf_mod

    def build(s: int) -> tuple[object, object]:
        return rf_mod.random_features(d, heads, law, solver, generator=s)

    params = {"d": d, "heads": heads, "law": law, "solver": solver, "N": 2, "points": "orthonormal"}
    ev.measure("random-features", params, build, d, 2, "orthonormal", "uniform")
