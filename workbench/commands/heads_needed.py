"""``workbench bounds heads-needed``: the least number of heads the harmonic count allows at a
target error (for hardmax, and for any target with a profile)."""

from __future__ import annotations

from typing import Any

import click

from workbench.commands._arguments import IntIn, IntUpToD
from workbench.commands._bounds_common import (
    CLASS_TEXT,
    EPS_RANGE,
    MAX_D,
    check_common,
    vacuous_reason,
)
from workbench.commands._common import (
    ERROR_MEANING,
    AliasCommand,
    aliases,
    emit,
    exact_decimal,
    json_option,
    readable_int,
)
from workbench.commands._target import (
    TARGET_ERROR,
    ChosenTarget,
    choose_target,
    require_profile,
    target_options,
)
from workbench.core.bounds import EQ2, VALUE_CLASSES  # imports nothing: fast
from workbench.core.validation import check_float


@aliases({"--r": "--rank"})
@click.command(name="heads-needed", cls=AliasCommand)
@click.option("--d", "d", type=IntIn(2, MAX_D), required=True,
              help=f"Ambient dimension d in 2..{MAX_D}.")
@click.option("--rank", "rank", type=IntIn(1), required=True, help="Key rank r in 1..d.")
@click.option("--eps", type=float, required=True, help=f"Target error eps in {EPS_RANGE}.")
@click.option("--N", "N", type=IntUpToD(2), default=2, show_default=True,
              help="Number of keys N in 2..d (orthonormal keys, D_N): the harmonic count at "
              "N = 2; at 3..d the largest sequence-length bound that covers (d, N) (certified-n).")
@click.option("--max-degree", type=IntIn(1, 20001), default=None,
              help="Sum odd degrees up to this (default: raised automatically up to a cost cap).")
@click.option("--class", "value_class", type=click.Choice(VALUE_CLASSES), default=EQ2,
              show_default=True,
              help="Model class: eq2 (one fixed value map per head, the default) or "
              "query-dependent-values (value maps may depend on the query; fewer heads).")
@target_options
@json_option
def heads_needed_cmd(
    d: int, rank: int, eps: float, N: int, max_degree: int | None, value_class: str,
    target: str, target_params: tuple[str, ...], as_json: bool,
) -> None:
    """Least H for which the harmonic count allows error <= eps (all smaller H cannot);
    --target gives it for another target's profile (e.g. soft-nearest at beta); --N 3..d
    gives it for the certified bound at N >= 3 (certified-n)."""
    if N != 2 and target == "nearest":
        from workbench.commands.bounds_certified_n import heads_needed_certified_n

        heads_needed_certified_n(d, rank, N, eps, max_degree, value_class, as_json)
        return
    if N != 2:
        raise ValueError(f"--N must be 2 with --target {target} (got --N {N})")
    d, rank = check_common(d, rank, max_degree)
    eps = check_float("--eps", eps, lo=0.0, hi=1.0, lo_open=True)
    chosen = choose_target(target, target_params)
    if not chosen.is_hardmax:
        _heads_profile(chosen, d, rank, eps, max_degree, value_class, as_json)
        return
    from workbench.core.bounds.harmonic_count.harmonic import heads_needed_search

    res = heads_needed_search(d, rank, eps, max_degree=max_degree, value_class=value_class)
    H = res.heads
    exact = exact_decimal(H)
    payload: dict[str, Any] = {
        "d": d,
        "r": rank,
        "eps": eps,
        "class": value_class,
        "covers": CLASS_TEXT[value_class],
        "heads_needed": H if len(exact) <= 4000 else None,  # JSON integer, exact
        "heads_needed_exact": exact,  # the same number as a decimal string
        "digits": len(exact),
        "readable": readable_int(H),
        "max_degree": res.max_degree,
        "degree_cap": res.degree_cap,
        "raised": res.raised,
        "given": max_degree is not None,
        "tail": res.tail,
        "truncation_limited": res.truncation_limited,
        "set_by": "truncation" if res.truncation_limited else "bound",
        "bound": "harmonic_bound (the harmonic count alone; the fiber bound, which only "
        "covers H r < d, is not used here)",
        "vacuous": vacuous_reason(d, rank),
    }
    if target != "nearest":  # the default output keeps its fields
        payload["target"] = chosen.describe()
    if payload["heads_needed"] is None:
        payload["null_reasons"] = {"heads_needed": "over 4000 digits: see heads_needed_exact"}
    emit(payload, as_json, _human_heads)


def _heads_profile(chosen: ChosenTarget, d: int, rank: int, eps: float,
                   max_degree: int | None, value_class: str, as_json: bool) -> None:
    profile = require_profile(chosen, "heads-needed (the harmonic count)")
    from workbench.core.bounds.profiles.profile_harmonic import (
        PROFILE_DEGREE_CAP,
        profile_degree,
        profile_heads_needed,
    )

    res = profile_heads_needed(profile, d, rank, eps, max_degree=max_degree,
                               value_class=value_class)
    payload: dict[str, Any] = {
        "d": d, "r": rank, "eps": eps, "class": value_class, "covers": CLASS_TEXT[value_class],
        "target": chosen.describe(), "heads_needed": res.heads,
        "heads_needed_exact": str(res.heads), "digits": len(str(res.heads)),
        "readable": readable_int(res.heads), "max_degree": res.max_degree,
        "degree_cap": PROFILE_DEGREE_CAP, "raised": res.max_degree > profile_degree(profile, d)
        if max_degree is None else False, "given": max_degree is not None,
        "tail": res.tail, "truncation_limited": res.truncation_limited,
        "set_by": "truncation" if res.truncation_limited else "bound",
        "rigorous": res.rigorous,
        "bound": "the harmonic count of the target's profile",
        "vacuous": vacuous_reason(d, rank),
    }
    emit(payload, as_json, _human_heads)


def _human_heads(p: dict[str, Any]) -> str:
    heads_word = "head" if p["readable"] == "1" else "heads"
    t = p.get("target", {"name": "nearest"})
    lines = [
        f"d={p['d']} rank={p['r']} eps={p['eps']:g}"
        + ("" if t["name"] == "nearest" else f", target {t['name']} ({t['profile']})")
        + f": at least {p['readable']} {heads_word} (every smaller H is "
        + ("certified" if p.get("rigorous", True) else "estimated (quadrature, not rigorous)")
        + " to have error > eps)",
        f"  class: {p['covers']}",
    ]
    if p["truncation_limited"]:
        how = (f"raised automatically to the cost cap L = {p['degree_cap']}" if p["raised"]
               else "as given by --max-degree" if p["given"] else
               f"the default truncation; the cost cap L = {p['degree_cap']} allows no more")
        lines.append(
            f"  set by the truncation, not the bound: odd degrees <= {p['max_degree']} were "
            f"summed ({how}); the degrees above (energy <= {p['tail']:.3g}) could still exclude "
            "this H, so the full bound may need more heads: the value is a valid 'at least'; "
            "--max-degree sums further")
    else:
        lines.append(f"  set by the bound: the degrees above {p['max_degree']} (energy <= "
                     f"{p['tail']:.3g}) are counted and cannot change it")
    if p["digits"] > 15:
        lines.append("  exact value: --json gives heads_needed (integer) and heads_needed_exact")
    if p["vacuous"]:
        lines.append(f"  {p['vacuous']}")
    meaning = ERROR_MEANING if t["name"] == "nearest" else TARGET_ERROR
    return "\n".join(lines + [f"  {meaning}"])
