"""``workbench harmonics``: Gegenbauer coefficients of sign(t) and harmonic dimensions
(docs/paper.md, exact formulas). Arguments are validated before the mathematics is imported;
a dimension too large to write out is given by its logarithm (no minutes-long big integers).
"""

from __future__ import annotations

import math
from typing import Any

import click

from workbench.commands._arguments import IntIn
from workbench.commands._common import emit, exact_decimal, json_option, readable_int
from workbench.core.validation import check_dim, check_int

MAX_EXACT_DIM_DIGITS = 10_000  # N(d,l) is written out exactly up to this many digits
MAX_SIGN_DEGREE = 100_000
MAX_EXACT_SIGN_DEGREE = 200  # sympy closed forms get slow beyond this


def log10_dim(d: int, l: int) -> float:
    """``log10 N(d,l)`` from log-gamma (relative accuracy ~1e-15; any size)."""
    if l == 0:
        return 0.0
    n, k = l + d - 3, l - 1
    lc = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
    return (math.log(2 * l + d - 2) - math.log(l) + lc) / math.log(10)


@click.group(name="harmonics")
def cli() -> None:
    """Spherical-harmonic quantities on S^{d-1} (docs/paper.md, exact formulas)."""


def _human_sign(p: dict[str, Any]) -> str:
    lines = [f"eta_l of sign(t) on S^{p['d'] - 1} (normalised Gegenbauer basis):"]
    for c in p["coefficients"]:
        exact = f"  = {c['exact']}" if "exact" in c else ""
        lines.append(f"  l={c['degree']:>4}  eta={c['eta']: .17g}{exact}")
    return "\n".join(lines)


@cli.command(name="sign")
@click.option("--d", "d", type=IntIn(2), required=True, help="Ambient dimension d >= 2.")
@click.option("--max-degree", type=IntIn(0, MAX_SIGN_DEGREE), required=True,
              help="Largest degree l >= 0.")
@click.option("--exact", is_flag=True, help="Also print the exact sympy closed form.")
@json_option
def sign(d: int, max_degree: int, exact: bool, as_json: bool) -> None:
    """Closed-form coefficients eta_l(d) of sign(t), l = 0..max-degree."""
    d = check_dim(d, "--d")
    L = check_int("--max-degree", max_degree, lo=0, hi=MAX_SIGN_DEGREE)
    if exact and L > MAX_EXACT_SIGN_DEGREE:
        raise ValueError(
            f"--max-degree must be an integer in 0..{MAX_EXACT_SIGN_DEGREE} with --exact (got {L})"
        )
    from workbench.core.harmonics import sign_coefficient_exact, sign_coefficients

    eta = sign_coefficients(d, L)
    coeffs = []
    for l in range(L + 1):
        item: dict[str, Any] = {"degree": l, "eta": float(eta[l])}
        if exact:
            item["exact"] = str(sign_coefficient_exact(d, l))
        coeffs.append(item)
    emit({"d": d, "coefficients": coeffs}, as_json, _human_sign)


@cli.command(name="dim")
@click.option("--d", "d", type=IntIn(2), required=True, help="Ambient dimension d >= 2.")
@click.option("--degree", type=IntIn(0), required=True, help="Degree l >= 0.")
@json_option
def dim(d: int, degree: int, as_json: bool) -> None:
    """N(d,l): dimension of the degree-l spherical harmonics on S^{d-1}."""
    d = check_dim(d, "--d")
    l = check_int("--degree", degree, lo=0)
    log10 = log10_dim(d, l)
    payload: dict[str, Any] = {"d": d, "degree": l, "log10_dimension": log10}
    if log10 < MAX_EXACT_DIM_DIGITS - 1:
        from workbench.core.harmonics import dim_harmonics

        n = dim_harmonics(d, l)
        exact = exact_decimal(n)
        payload.update(dimension=n if len(exact) <= 4000 else None, dimension_exact=exact,
                       readable=readable_int(n))
        if payload["dimension"] is None:
            payload["null_reasons"] = {"dimension": "over 4000 digits: see dimension_exact"}
    else:
        e10 = math.floor(log10)
        mant = f"{10 ** (log10 - e10):.4f}" if log10 < 1e11 else f"10^({log10:.6g})"
        readable = f"{mant}e+{e10}" if log10 < 1e11 else mant
        payload.update(dimension=None, dimension_exact=None,
                       readable=f"{readable} (about {e10 + 1} digits)")
        reason = (f"about {math.floor(log10) + 1} digits, more than {MAX_EXACT_DIM_DIGITS} to "
                  "write out: see log10_dimension")
        payload["null_reasons"] = {"dimension": reason, "dimension_exact": reason}
    emit(payload, as_json, lambda p: f"N(d={p['d']}, l={p['degree']}) = {p['readable']}")
