"""``workbench harmonics``: Gegenbauer coefficients of sign(t) and harmonic dimensions."""

from __future__ import annotations

from typing import Any

import click

from workbench.commands._common import common_options, emit
from workbench.core.harmonics import dim_harmonics, sign_coefficient_exact, sign_coefficients
from workbench.core.validation import check_dim, check_int


@click.group(name="harmonics")
def cli() -> None:
    """Spherical-harmonic quantities on S^{d-1} (PAPER.md §3)."""


def _human_sign(p: dict[str, Any]) -> str:
    lines = [f"eta_l of sign(t) on S^{p['d'] - 1} (normalised Gegenbauer basis):"]
    for c in p["coefficients"]:
        exact = f"  = {c['exact']}" if "exact" in c else ""
        lines.append(f"  l={c['degree']:>4}  eta={c['eta']: .17g}{exact}")
    return "\n".join(lines)


@cli.command(name="sign")
@click.option("--d", "d", type=int, required=True, help="Ambient dimension d >= 2.")
@click.option("--max-degree", type=int, required=True, help="Largest degree l >= 0.")
@click.option("--exact", is_flag=True, help="Also print the exact sympy closed form.")
@common_options
def sign(d: int, max_degree: int, exact: bool, as_json: bool, seed: int) -> None:
    """Closed-form coefficients eta_l(d) of sign(t), l = 0..max-degree."""
    d = check_dim(d)
    L = check_int("max-degree", max_degree, lo=0, hi=100_000)
    eta = sign_coefficients(d, L)
    coeffs = []
    for l in range(L + 1):
        item: dict[str, Any] = {"degree": l, "eta": float(eta[l])}
        if exact:
            item["exact"] = str(sign_coefficient_exact(d, l))
        coeffs.append(item)
    emit({"d": d, "coefficients": coeffs}, as_json, _human_sign)


@cli.command(name="dim")
@click.option("--d", "d", type=int, required=True, help="Ambient dimension d >= 2.")
@click.option("--degree", type=int, required=True, help="Degree l >= 0.")
@common_options
def dim(d: int, degree: int, as_json: bool, seed: int) -> None:
    """N(d,l): dimension of the degree-l spherical harmonics on S^{d-1}."""
    d = check_dim(d)
    l = check_int("degree", degree, lo=0)
    n = dim_harmonics(d, l)
    emit(
        {"d": d, "degree": l, "dimension": n},
        as_json,
        lambda p: f"N(d={p['d']}, l={p['degree']}) = {p['dimension']}",
    )
