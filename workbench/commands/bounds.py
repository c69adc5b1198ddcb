"""``workbench bounds``: the certified N = 2 lower bound (docs/paper.md, Theorem 2 and the
certified bound: the larger of the harmonic count and the fiber bound) and the heads the harmonic
count implies.

Arguments are validated before the mathematics is imported, so bad input is answered at once.
"""

from __future__ import annotations

from typing import Any

import click

from workbench.commands._common import (
    ERROR_MEANING,
    AliasCommand,
    aliases,
    common_options,
    emit,
    exact_decimal,
    readable_int,
)
from workbench.core.bounds import VALUE_CLASSES  # imports nothing: validation stays fast
from workbench.core.validation import check_dim, check_float, check_heads, check_int, check_rank

CLASS_TEXT = {
    "eq2": "Eq. 2 models: one fixed value map M_h per head (count D'_l; fiber: H values)",
    "query-dependent-values": "models whose value maps M_h(y) may depend on the query "
    "(count d(d+1)/2 D'_l; fiber: the full trace; also covers Eq. 2)",
}
MAX_D = 2048  # answers within seconds; beyond, the exact binomial tables take minutes
EPS_RANGE = "(0, 1]"  # the error of the zero model is 1: a target above 1 needs no heads


def _check_common(d: int, rank: int, max_degree: int | None) -> tuple[int, int]:
    d = check_int("--d", d, lo=2, hi=MAX_D)
    rank = check_rank(rank, d, "--rank")
    if max_degree is not None:
        check_int("--max-degree", max_degree, lo=1, hi=20001)
    return check_dim(d, "--d"), rank


def vacuous_reason(d: int, r: int, heads: int | None = None) -> str | None:
    """Why the bound is 0, when it is: for r >= d-1 a head's space holds every harmonic degree,
    and for H r >= d the heads' keys together see every direction (no fiber is left).
    ``heads=None``: only the harmonic count is in use (``heads-needed``)."""
    if r >= d - 1 and (heads is None or heads * r >= d):
        return (
            f"vacuous: the bound is 0 for rank r >= d-1 = {d - 1} with H r >= d, because then "
            "one head's space reaches every harmonic degree (D_l >= N(d,l)) and the keys see "
            "every direction (no fiber); it says nothing here"
        )
    return None


@click.group(name="bounds")
def cli() -> None:
    """Certified lower bounds for nearest neighbour (N = 2, D_2) against generalized attention."""


def _human_lower(p: dict[str, Any]) -> str:
    lo, hi = p["enclosure"]
    hc, fb = p["harmonic_count"], p["fiber"]
    lines = [
        f"d={p['d']} rank={p['r']} heads={p['heads']}: every model of the class below "
        f"has error >= {p['lower_bound']:.6g}  (the larger of the two bounds: {p['source']})",
        f"  harmonic count: >= {hc['lower_bound']:.6g}, rigorous enclosure of the truncated sum "
        f"[{hc['enclosure'][0]:.17g}, {hc['enclosure'][1]:.17g}], odd degrees "
        f"<= {p['degrees_summed']}, uncounted tail <= {p['tail']:.3g}",
        f"  fiber bound:    >= {fb['lower_bound']:.6g}, quadrature enclosure "
        f"[{fb['enclosure'][0]:.12g}, {fb['enclosure'][1]:.12g}], keys span r* = "
        f"{fb['span_rank']} of d = {p['d']}" + ("" if fb["span_rank"] < p["d"] else " (no fiber)"),
        f"  covers: {p['covers']}",
    ]
    if p["vacuous"]:
        lines.append(f"  {p['vacuous']}")
    lines.append(f"  {ERROR_MEANING}")
    return "\n".join(lines)


@aliases({"--r": "--rank"})
@cli.command(name="lower", cls=AliasCommand)
@click.option("--d", "d", type=int, required=True, help=f"Ambient dimension d in 2..{MAX_D}.")
@click.option("--rank", "rank", type=int, required=True, help="Key rank r in 1..d.")
@click.option("--heads", type=int, required=True, help="Number of heads H >= 1.")
@click.option("--max-degree", type=int, default=None, help="Sum odd degrees up to this.")
@click.option(
    "--class",
    "value_class",
    type=click.Choice(VALUE_CLASSES),
    default="eq2",
    show_default=True,
    help="Model class the bound covers: eq2 (one fixed value map per head, the default) or "
    "query-dependent-values (value maps may depend on the query; a weaker bound).",
)
@common_options
def lower(
    d: int, rank: int, heads: int, max_degree: int | None, value_class: str, as_json: bool,
    seed: int,
) -> None:
    """Certified lower bound on the error of H rank-r heads (N = 2, D_2)."""
    d, rank = _check_common(d, rank, max_degree)
    check_heads(heads, "--heads")
    from workbench.core.bounds.certified import certified_lower_bound

    cb = certified_lower_bound(d, rank, heads, value_class, max_degree=max_degree)
    lb, fb, best = cb.harmonic, cb.fiber, cb.chosen
    payload = {
        "d": lb.d,
        "r": lb.r,
        "heads": lb.heads,
        "lower_bound": cb.value,  # the certified lower end, not the midpoint
        "enclosure": list(cb.enclosure),
        "source": cb.source,
        "harmonic_count": {
            "lower_bound": lb.enclosure[0],
            "enclosure": list(lb.enclosure),
            "method": lb.method,
        },
        "fiber": {
            "lower_bound": fb.enclosure[0],
            "enclosure": list(fb.enclosure),
            "span_rank": fb.span_rank,
            "method": fb.method,
        },
        "degrees_summed": lb.degrees_summed,
        "tail": lb.tail,
        "method": best.method,
        "class": lb.value_class,
        "covers": CLASS_TEXT[lb.value_class],
        "vacuous": vacuous_reason(d, rank, heads),
        "error_meaning": ERROR_MEANING,
    }
    emit(payload, as_json, _human_lower)


@aliases({"--r": "--rank"})
@cli.command(name="heads-needed", cls=AliasCommand)
@click.option("--d", "d", type=int, required=True, help=f"Ambient dimension d in 2..{MAX_D}.")
@click.option("--rank", "rank", type=int, required=True, help="Key rank r in 1..d.")
@click.option("--eps", type=float, required=True, help=f"Target error eps in {EPS_RANGE}.")
@click.option("--max-degree", type=int, default=None, help="Sum odd degrees up to this.")
@common_options
def heads_needed_cmd(
    d: int, rank: int, eps: float, max_degree: int | None, as_json: bool, seed: int
) -> None:
    """Least H for which the harmonic count allows error <= eps (all smaller H cannot)."""
    d, rank = _check_common(d, rank, max_degree)
    eps = check_float("--eps", eps, lo=0.0, hi=1.0, lo_open=True)
    from workbench.core.bounds.harmonic import heads_needed

    H = heads_needed(d, rank, eps, max_degree=max_degree)
    exact = exact_decimal(H)
    payload: dict[str, Any] = {
        "d": d,
        "r": rank,
        "eps": eps,
        "heads_needed": H if len(exact) <= 4000 else None,  # JSON integer, exact
        "heads_needed_exact": exact,  # the same number as a decimal string
        "digits": len(exact),
        "readable": readable_int(H),
        "bound": "harmonic_bound (the harmonic count D'_l alone; the fiber bound, which only "
        "covers H r < d, is not used here)",
        "vacuous": vacuous_reason(d, rank),
    }
    if payload["heads_needed"] is None:
        payload["null_reasons"] = {"heads_needed": "over 4000 digits: see heads_needed_exact"}
    emit(payload, as_json, _human_heads)


def _human_heads(p: dict[str, Any]) -> str:
    line = (
        f"d={p['d']} rank={p['r']} eps={p['eps']:g}: at least {p['readable']} heads "
        "(every smaller H is certified to have error > eps)"
    )
    if p["digits"] > 15:
        line += "\n  exact value: --json gives heads_needed (integer) and heads_needed_exact"
    if p["vacuous"]:
        line += f"\n  {p['vacuous']}"
    return line + f"\n  {ERROR_MEANING}"


from workbench.commands.sandwich import sandwich_cmd  # noqa: E402

cli.add_command(sandwich_cmd)
