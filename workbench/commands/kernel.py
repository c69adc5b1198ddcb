"""``workbench kernel``: kernels of rank-1 hardmax heads on D_2 (docs/paper.md, exact
formulas). Arguments are validated before the mathematics is imported."""

from __future__ import annotations

import math

import click

from workbench.commands._arguments import IntIn
from workbench.commands._common import emit, json_option
from workbench.core.validation import check_float, check_int

MAX_D = 10_000  # the antiderivative table of b is checked against mpmath up to here


@click.group(name="kernel")
def cli() -> None:
    """Head-vs-head and head-vs-target kernels of rank-1 hardmax heads."""


@cli.command(name="head-vs-target")
@click.option("--d", "d", type=IntIn(2, MAX_D), required=True,
              help=f"Ambient dimension d in 2..{MAX_D}.")
@click.option("--theta", type=float, required=True, help="Angle between q and k, in [0, pi].")
@json_option
def head_vs_target(d: int, theta: float, as_json: bool) -> None:
    """b(theta) = Pr[head (q,k) picks the nearest neighbour] on D_2."""
    d = check_int("--d", d, lo=2, hi=MAX_D)
    theta = check_float("--theta", theta, lo=0.0, hi=math.pi)
    from workbench.core.head_kernels import head_target_agreement

    c = math.cos(theta)
    b = float(head_target_agreement(d, c))
    emit(
        {"d": d, "theta": theta, "cos": c, "b": b},
        as_json,
        lambda p: f"d={p['d']} theta={p['theta']:.12g}: b = {p['b']:.16g}",
    )
