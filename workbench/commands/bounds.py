"""``workbench bounds``: the certified N = 2 lower bound (PAPER.md §3) and the heads it implies."""

from __future__ import annotations

from typing import Any

import click

from workbench.commands._common import common_options, emit
from workbench.core.lower_bound import VALUE_CLASSES, heads_needed, lower_bound

_CLASS_TEXT = {
    "eq2": "Eq. 2 models: one fixed value map M_h per head (count D'_l)",
    "query-dependent-values": "models whose value maps M_h(y) may depend on the query "
    "(count d(d+1)/2 D'_l; also covers Eq. 2)",
}


@click.group(name="bounds")
def cli() -> None:
    """Certified lower bounds for nearest neighbour (N = 2, D_2) against generalized attention."""


def _human_lower(p: dict[str, Any]) -> str:
    lo, hi = p["enclosure"]
    return (
        f"d={p['d']} r={p['r']} H={p['heads']}: error >= {p['lower_bound']:.12g} "
        f"(certified enclosure [{lo:.17g}, {hi:.17g}], odd degrees <= {p['degrees_summed']}, "
        f"uncounted tail <= {p['tail']:.3g})\ncovers: {p['covers']}"
    )


@cli.command(name="lower")
@click.option("--d", "d", type=int, required=True, help="Ambient dimension d >= 2.")
@click.option("--r", "r", type=int, required=True, help="Key rank r in 1..d.")
@click.option("--heads", type=int, required=True, help="Number of heads H >= 1.")
@click.option("--max-degree", type=int, default=None, help="Sum odd degrees up to this.")
@click.option(
    "--class",
    "value_class",
    type=click.Choice(VALUE_CLASSES),
    default="eq2",
    show_default=True,
    help="Model class the bound covers: eq2 (fixed value maps) or query-dependent-values.",
)
@common_options
def lower(
    d: int, r: int, heads: int, max_degree: int | None, value_class: str, as_json: bool, seed: int
) -> None:
    """Certified lower bound on the error of H rank-r heads (N = 2, D_2)."""
    lb = lower_bound(d, r, heads, max_degree=max_degree, value_class=value_class)
    payload = {
        "d": lb.d,
        "r": lb.r,
        "heads": lb.heads,
        "lower_bound": lb.value,
        "enclosure": list(lb.enclosure),
        "degrees_summed": lb.degrees_summed,
        "tail": lb.tail,
        "method": lb.method,
        "class": lb.value_class,
        "covers": _CLASS_TEXT[lb.value_class],
    }
    emit(payload, as_json, _human_lower)


@cli.command(name="heads-needed")
@click.option("--d", "d", type=int, required=True, help="Ambient dimension d >= 2.")
@click.option("--r", "r", type=int, required=True, help="Key rank r in 1..d.")
@click.option("--eps", type=float, required=True, help="Target error eps in (0, 1].")
@click.option("--max-degree", type=int, default=None, help="Sum odd degrees up to this.")
@common_options
def heads_needed_cmd(
    d: int, r: int, eps: float, max_degree: int | None, as_json: bool, seed: int
) -> None:
    """Least H for which the certified bound allows error <= eps (all smaller H cannot)."""
    H = heads_needed(d, r, eps, max_degree=max_degree)
    payload = {"d": d, "r": r, "eps": eps, "heads_needed": H, "bound": "certified_lower_bound"}
    emit(
        payload,
        as_json,
        lambda p: (
            f"d={p['d']} r={p['r']} eps={p['eps']:g}: at least {p['heads_needed']} heads "
            "(every smaller H is certified to have error > eps)"
        ),
    )


from workbench.commands.sandwich import sandwich_cmd  # noqa: E402

cli.add_command(sandwich_cmd)
