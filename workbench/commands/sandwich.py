"""``workbench bounds sandwich``: the certified lower bound (Eq. 2: the larger of the harmonic
count and the fiber bound) against the best explicit model found (docs/derivations/lower_bound.md,
"The sandwich"; docs/derivations/fiber_bound.md); exit 1 if a witness beats it."""

from __future__ import annotations

from typing import Any

import click

from workbench.commands._common import (
    AliasCommand,
    CheckFailed,
    aliases,
    common_options,
    emit,
    path_option,
)
from workbench.core.validation import check_int

MAX_D = 256  # the witnesses solve and train at this size within minutes
MAX_HEADS = 4096


def _human(p: dict[str, Any]) -> str:
    lo, hi = p["best_ci"]
    lines = [
        f"d={p['d']} r={p['r']} H={p['heads']}",
        f"  certified (Eq. 2):                   error >= {p['certified']:.6g}  "
        f"({p['certified_source']}; harmonic count {p['certified_harmonic']:.6g}, "
        f"fiber {p['certified_fiber']:.6g})",
        f"  certified (query-dependent values):  error >= {p['certified_query_values']:.6g}",
        f"  best achievable: {p['best_error']:.6g}  CI [{lo:.6g}, {hi:.6g}]  "
        f"({p['method']}; witness {p['witness_file'] or 'not saved'})",
        f"  enclosure of the optimum: [{p['certified']:.6g}, {hi:.6g}]  "
        f"ratio best / certified = {p['ratio']:.4g}",
    ]
    for c in p["candidates"]:
        lines.append(f"    candidate {c['method']:<22} {c['error']:.6g}")
    if p["violated"]:
        lines.append("  VIOLATED: a witness lies below the certified bound beyond its CI")
    return "\n".join(lines)


@aliases({"--r": "--rank"})
@click.command(name="sandwich", cls=AliasCommand)
@click.option("--d", "d", type=int, required=True, help=f"Ambient dimension d in 2..{MAX_D}.")
@click.option("--rank", "r", type=int, required=True, help="Key rank r in 1..d.")
@click.option("--heads", type=int, required=True, help=f"Number of heads H in 1..{MAX_HEADS}.")
@click.option(
    "--budget",
    type=click.Choice(["quick", "full"]),
    default="quick",
    show_default=True,
    help="quick: constructions only; full: also trained models.",
)
@path_option("--witness-dir", "Save the best witness here (.npz, trained weights as .pt).",
             folder=True)
@common_options
def sandwich_cmd(
    d: int, r: int, heads: int, budget: str, witness_dir: str | None, as_json: bool, seed: int
) -> None:
    """Certified lower bound vs the best achievable error at (d, r, H), N = 2 on D_2."""
    d = check_int("--d", d, lo=2, hi=MAX_D)
    check_int("--rank", r, lo=1, hi=d)
    check_int("--heads", heads, lo=1, hi=MAX_HEADS)
    from workbench.verifiers.sandwich import sandwich

    p = sandwich(d, r, heads, budget=budget, witness_dir=witness_dir, seed=seed).to_dict()
    emit(p, as_json, _human)
    if p["violated"]:
        raise CheckFailed("a witness beats the certified lower bound beyond its CI")
