"""``workbench construct biased`` (Theorem 3)."""

from __future__ import annotations

import click

from workbench.commands._arguments import IntIn
from workbench.commands.construct._run import POINTS, Evaluation, construct_options
from workbench.core.validation import check_float
from workbench.verifiers.resources import biased_terms, check_fits

NORMALIZERS = ("hardmax", "softmax")  # workbench.constructions.biased.NORMALIZERS
# workbench.constructions.biased.COEFFICIENT_LAWS
COEFFICIENTS = ("alternating", "ones", "random_signs")


@click.command("biased")
@click.option("--d", "d", type=IntIn(2), default=4, show_default=True, help="Dimension d >= 2.")
@click.option("--N", "N", type=IntIn(1), default=2, show_default=True, help="Keys per instance.")
@click.option("--normalizer", type=click.Choice(NORMALIZERS), default="hardmax",
              show_default=True)
@click.option("--beta", type=float, default=100.0, show_default=True, help="Softmax temperature.")
@click.option("--points", type=click.Choice(POINTS), default="orthonormal", show_default=True)
@click.option("--spacing", type=float, default=None, help="Threshold spacing (default 4/d^2).")
@click.option("--coefficients", type=click.Choice(COEFFICIENTS), default="alternating",
              show_default=True)
@construct_options()
def biased_cmd(
    ev: Evaluation,
    d: int,
    N: int,
    normalizer: str,
    beta: float,
    points: str,
    spacing: float | None,
    coefficients: str,
) -> None:
    """Theorem 3: 2d^2+1 full-rank biased heads representing f* (Gaussian queries)."""
    ev.check(d, N, points)
    check_float("--beta", beta, lo=0.0)
    if spacing is not None:
        check_float("--spacing", spacing, lo=0.0, lo_open=True)
    check_fits(biased_terms(d, N), {"--d": d, "--N": N})
    from workbench.constructions import biased as biased_mod
    from workbench.verifiers.construct import Built

    def build(s: int) -> Built:
        model, claim, fam = biased_mod.biased(
            d, N, normalizer, beta, points, spacing, coefficients, generator=s
        )
        return Built(model, claim, fam.target, {"heads": fam.terms})

    build(ev.seed)  # validate before any work
    params = {
        "d": d,
        "N": N,
        "normalizer": normalizer,
        "beta": beta,
        "points": points,
        "spacing": spacing,
        "coefficients": coefficients,
        "queries": "gaussian",
    }
    ev.measure("biased", params, build, d, N, points, "gaussian")
