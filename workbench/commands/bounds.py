"""``workbench bounds``: the registered lower bounds (``list``), the value of one of them
(``lower``: by default the certified N = 2 bound of docs/paper.md, Theorem 2 and the certified
bound, the larger of the harmonic count and the fiber bound) and the heads the harmonic count
implies (``heads-needed``).

``lower --bound NAME`` takes any registered bound (``workbench bounds list``) or a
``module:function`` following ``f(d, rank, heads, N) -> float`` (docs/extending.md). Every
bound, the certified one too, is resolved by the registry and its arguments are checked once,
by ``Bound.outside``, before the mathematics is imported; a point outside what the bound
covers is bad input, naming the flag. The certified bounds then show their two parts
(``certified_lower_bound``, the function their registered ``Bound`` computes with).
"""

from __future__ import annotations

from typing import Any

import click
from click.core import ParameterSource

from workbench.commands._arguments import IntIn
from workbench.commands._common import (
    ERROR_MEANING,
    AliasCommand,
    CheckFailed,
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
from workbench.core.bounds import EQ2, QUERY_VALUES, VALUE_CLASSES  # imports nothing: fast
from workbench.core.validation import check_dim, check_float, check_heads, check_int, check_rank

CLASS_TEXT = {
    "eq2": "Eq. 2 models: one fixed value map M_h per head (count D'_l; fiber: H values)",
    "query-dependent-values": "models whose value maps M_h(y) may depend on the query "
    "(count d(d+1)/2 D'_l; fiber: the full trace; also covers Eq. 2)",
}
MAX_D = 2048  # answers within seconds; beyond, the exact binomial tables take minutes
# the registered bounds ``lower`` computes with every part shown, and the class of each
CERTIFIED = {"certified": EQ2, "certified-query-values": QUERY_VALUES}
LIST_GROUP = "workbench.bounds:"  # the keys of workbench.plugins.LOAD_ERRORS for bounds
LIST_COLUMNS = (("name", "name"), ("side", "side"), ("status", "status"),
                ("rigorous", "rigorous"), ("target", "target"), ("law", "law"),
                ("class", "value_class"), ("N", "N_text"), ("source", "source"))
# the law of the keys the certified bound covers: proved on D_2, transferred to i.i.d. keys at N = 2
# (docs/derivations/iid_transfer.md)
POINTS_TEXT = {
    "orthonormal": "N = 2 orthonormal keys (D_2), uniform query",
    "iid": "N = 2 i.i.d. uniform keys, uniform query (the i.i.d. transfer: the same number, "
    "since E[1 - <x1, x2>] = 1)",
}
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
    """Lower bounds on the error: the certified one for nearest neighbour (N = 2, D_2) against
    generalized attention, and every registered bound."""


@cli.command(name="list")
@json_option
def list_cmd(as_json: bool) -> None:
    """Every registered bound (built-ins and installed packages) and where it applies."""
    from workbench import plugins

    known = plugins.available("bound")
    rows = [{**b.describe(), "ref": b.ref, "has_enclosure": b.enclosure is not None}
            for b in known.values()]
    errors = {k[len(LIST_GROUP):]: why for k, why in sorted(plugins.LOAD_ERRORS.items())
              if k.startswith(LIST_GROUP)}
    targets = [{**t.describe(), "bounds": _covering(t, known)}
               for t in plugins.available("target").values()]
    errors.update({k: why for k, why in sorted(plugins.LOAD_ERRORS.items())
                   if k.startswith("workbench.targets:")})
    emit({"bounds": rows, "targets": targets, "load_errors": errors}, as_json, _human_list)


def _covering(t: Any, bounds: dict[str, Any]) -> str:
    """What each bound says about target ``t``, in words."""
    own = [b.name for b in bounds.values() if b.target == t.name]
    if t.profile is None:
        return ", ".join(own) if own else "none"
    prof = t.profile_at()
    if prof.key in (("sign", 1.0), ("sign", -1.0)):
        return ("certified, certified-query-values, harmonic, fiber (hardmax energies)"
                + (f"; also {', '.join(own)}" if own and t.name != "nearest" else ""))
    proved = "rigorous" if prof.has_exact_form else "quadrature estimate, not rigorous"
    return (f"--bound certified / certified-query-values with --target: the harmonic count of "
            f"its profile ({proved}); no fiber bound")


def _human_list(p: dict[str, Any]) -> str:
    cells = [[h for h, _ in LIST_COLUMNS]]
    cells += [[{True: "yes", False: "no"}.get(row[k], str(row[k])) if isinstance(row[k], bool)
               else str(row[k]) for _, k in LIST_COLUMNS] for row in p["bounds"]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(LIST_COLUMNS))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.append(f"{len(p['bounds'])} bounds; use one with `workbench bounds lower --bound NAME` "
                 "or `workbench falsify --bound NAME` (--json: descriptions and references)")
    lines.append("")
    for t in p["targets"]:
        params = ", ".join(f"{k}={v}" for k, v in t["params"].items())
        lines.append(f"target {t['name']}" + (f" ({params})" if params else "")
                     + f": profile {t['profile']}; N {t['N']}; {t['queries']} queries")
        lines.append(f"  bounds: {t['bounds']}")
    lines.append(f"{len(p['targets'])} targets; choose one with --target NAME|module:function "
                 "and --target-param K=V")
    for name, why in p["load_errors"].items():
        lines.append(f"not loaded: {name}: {why}")
    return "\n".join(lines)


def _human_lower(p: dict[str, Any]) -> str:
    lo, hi = p["enclosure"]
    hc, fb = p["harmonic_count"], p["fiber"]
    how = ("a rigorous enclosure's lower end" if p["rigorous"] else
           f"a quadrature estimate; certified (rigorous): >= {p['certified']:.6g}")
    lines = [
        f"d={p['d']} rank={p['r']} heads={p['heads']}: every model of the class below "
        f"has error >= {p['lower_bound']:.6g}  (the larger of the two bounds: {p['source']}, "
        f"{how})",
        f"  harmonic count: >= {hc['lower_bound']:.6g}, rigorous enclosure of the truncated sum "
        f"[{hc['enclosure'][0]:.17g}, {hc['enclosure'][1]:.17g}], odd degrees "
        f"<= {p['degrees_summed']}, uncounted tail <= {p['tail']:.3g}",
        f"  fiber bound:    >= {fb['lower_bound']:.6g}, "
        + ("rigorous enclosure " if fb["rigorous"] else "quadrature estimate (not a rigorous "
           "enclosure) ")
        + f"[{fb['enclosure'][0]:.17g}, {fb['enclosure'][1]:.17g}], keys span r* = "
        f"{fb['span_rank']} of d = {p['d']}" + ("" if fb["span_rank"] < p["d"] else " (no fiber)"),
        f"  covers: {p['covers']}",
        f"  law of the keys: {p['law_text']}",
    ]
    if p["vacuous"]:
        lines.append(f"  {p['vacuous']}")
    lines.append(f"  {ERROR_MEANING}")
    return "\n".join(lines)


@aliases({"--r": "--rank"})
@cli.command(name="lower", cls=AliasCommand)
@click.option("--d", "d", type=IntIn(2), required=True,
              help=f"Ambient dimension d >= 2 (2..{MAX_D} for the built-in bounds).")
@click.option("--rank", "rank", type=IntIn(1), required=True, help="Key rank r in 1..d.")
@click.option("--heads", type=IntIn(1), required=True, help="Number of heads H >= 1.")
@click.option("--bound", "bound", default="certified", show_default=True,
              help="A registered bound (workbench bounds list) or module:function "
              "f(d, rank, heads, N).")
@click.option("--N", "N", type=IntIn(1), default=2, show_default=True,
              help="Number of keys N (the certified bound covers N = 2).")
@click.option("--max-degree", type=IntIn(1, 20001), default=None,
              help="Sum odd degrees up to this (the certified bound).")
@click.option(
    "--class",
    "value_class",
    type=click.Choice(VALUE_CLASSES),
    default="eq2",
    show_default=True,
    help="Model class the bound covers: eq2 (one fixed value map per head, the default) or "
    "query-dependent-values (value maps may depend on the query; a weaker bound).",
)
@click.option("--points", "points", type=click.Choice(tuple(POINTS_TEXT)), default="orthonormal",
              show_default=True,
              help="Law of the keys the certified bound is stated for: orthonormal (D_2, where it "
              "is proved) or iid (uniform keys, N = 2 only, by the i.i.d. transfer).")
@target_options
@json_option
def lower(
    d: int, rank: int, heads: int, bound: str, N: int, max_degree: int | None, value_class: str,
    points: str, target: str, target_params: tuple[str, ...], as_json: bool,
) -> None:
    """Lower bound on the error of H rank-r heads: the certified one (N = 2, D_2) by default,
    or any registered bound; --target gives the harmonic count for another target's profile."""
    class_given = click.get_current_context().get_parameter_source(
        "value_class") is ParameterSource.COMMANDLINE
    chosen = choose_target(target, target_params)
    if not chosen.is_hardmax:
        _lower_profile(chosen, bound, d, rank, heads, N, max_degree, value_class, points,
                       as_json)
        return
    if bound not in CERTIFIED:
        if points == "iid":
            raise ValueError("--points iid applies to the certified bounds only ("
                             f"{', '.join(CERTIFIED)}; got --bound {bound}): the i.i.d. "
                             "transfer is proved for them")
        if max_degree is not None:
            raise ValueError(f"--max-degree applies to --bound certified only (got --bound "
                             f"{bound})")
    elif bound != "certified":  # certified-query-values: its class is fixed
        if class_given and value_class != CERTIFIED[bound]:
            raise ValueError(f"--class must be {CERTIFIED[bound]} for --bound {bound} (got "
                             f"{value_class}); --bound certified --class {value_class} is that "
                             "bound")
        value_class = CERTIFIED[bound]
    name = bound if bound not in CERTIFIED else next(
        k for k, vc in CERTIFIED.items() if vc == value_class)
    b = _resolve(name)  # every bound, built-in or plug-in, through the registry
    if bound not in CERTIFIED and class_given:
        raise ValueError(f"--class applies to --bound certified only (--bound {bound} has the "
                         f"class {b.value_class})")
    if b.source == "workbench":
        check_int("--d", d, lo=2, hi=MAX_D)
    if points == "iid" and N != 2:
        raise ValueError(f"--N must be 2 with --points iid (the i.i.d. transfer of the certified "
                         f"bound is proved for N = 2 only; got --N {N})")
    _check_covered(b, name, d, rank, heads, N)  # the one check of (d, rank, heads, N)
    if name not in CERTIFIED:
        _lower_other(b, name, d, rank, heads, N, as_json)
        return
    if max_degree is not None:
        check_int("--max-degree", max_degree, lo=1, hi=20001)
    from workbench.core.bounds.certified import certified_lower_bound

    cb = certified_lower_bound(d, rank, heads, value_class, max_degree=max_degree)
    lb, fb, best = cb.harmonic, cb.fiber, cb.chosen
    payload = {
        "d": lb.d,
        "r": lb.r,
        "heads": lb.heads,
        "lower_bound": cb.value,  # the larger lower end, not the midpoint
        "enclosure": list(cb.enclosure),
        "source": cb.source,
        "rigorous": cb.rigorous,  # is lower_bound the lower end of a proved enclosure?
        "certified": cb.certified,  # the larger lower end of the rigorous parts only
        "harmonic_count": {
            "lower_bound": lb.enclosure[0],
            "enclosure": list(lb.enclosure),
            "rigorous": lb.rigorous,
            "method": lb.method,
        },
        "fiber": {
            "lower_bound": fb.enclosure[0],
            "enclosure": list(fb.enclosure),
            "rigorous": fb.rigorous,
            "span_rank": fb.span_rank,
            "method": fb.method,
        },
        "degrees_summed": lb.degrees_summed,
        "tail": lb.tail,
        "method": best.method,
        "class": lb.value_class,
        "covers": CLASS_TEXT[lb.value_class],
        "law": points,
        "law_text": POINTS_TEXT[points],
        "vacuous": vacuous_reason(d, rank, heads),
        "error_meaning": ERROR_MEANING,
        "bound": name,
    }
    if target != "nearest":  # the default output keeps its fields
        payload["target"] = chosen.describe()
    emit(payload, as_json, _human_lower)


def _lower_profile(chosen: ChosenTarget, bound: str, d: int, rank: int, heads: int, N: int,
                   max_degree: int | None, value_class: str, points: str, as_json: bool) -> None:
    """``bounds lower --target T`` for a target other than hardmax: the harmonic count of its
    profile (docs/derivations/soft_targets.md), rigorous when the profile has an exact form."""
    if bound not in CERTIFIED:
        raise ValueError(f"--target {chosen.spec} applies to --bound certified or "
                         f"certified-query-values (got --bound {bound}, a bound for its own "
                         "target)")
    if bound != "certified":
        value_class = CERTIFIED[bound]
    if points != "orthonormal":
        raise ValueError(f"--points must be orthonormal with --target {chosen.spec}: the i.i.d. "
                         "transfer of a soft profile is a mixture over key gaps "
                         "(docs/derivations/soft_targets.md, step T), not this number")
    d, rank = _check_common(d, rank, max_degree)
    check_heads(heads, "--heads")
    if check_int("--N", N, lo=1) != 2:
        raise ValueError(f"--N must be 2 with --target {chosen.spec} (its profile bound covers "
                         f"N = 2 on D_2; got --N {N})")
    profile = require_profile(chosen, "the harmonic count")
    from workbench.core.bounds.profile_harmonic import profile_bound

    b = profile_bound(profile, d, rank, heads, max_degree=max_degree, value_class=value_class)
    payload: dict[str, Any] = {
        "d": d, "r": rank, "heads": heads, "target": chosen.describe(),
        "lower_bound": b.enclosure[0], "enclosure": list(b.enclosure), "rigorous": b.rigorous,
        "source": "harmonic count", "degrees_summed": b.degrees_summed, "tail": b.tail,
        "method": b.method, "class": value_class, "covers": CLASS_TEXT[value_class],
        "fiber": None, "vacuous": vacuous_reason(d, rank),
        "null_reasons": {"fiber": "the fiber bound for a general profile is derived "
                         "(docs/derivations/soft_targets.md, step F) but not implemented"},
        "error_meaning": TARGET_ERROR, "bound": bound,
    }
    emit(payload, as_json, _human_profile)


def _human_profile(p: dict[str, Any]) -> str:
    lo, hi = p["enclosure"]
    t = p["target"]
    kind = ("rigorous enclosure (arb balls)" if p["rigorous"] else
            "quadrature estimate, NOT rigorous (give the profile an exact form to certify it)")
    head = (f"every model of the class below has error >= {p['lower_bound']:.6g}"
            if p["rigorous"] else f"estimated bound {p['lower_bound']:.6g} (not certified)")
    lines = [
        f"d={p['d']} rank={p['r']} heads={p['heads']}, target {t['name']} (profile "
        f"{t['profile']}): {head}",
        f"  harmonic count: {kind} [{lo:.17g}, {hi:.17g}], odd degrees <= "
        f"{p['degrees_summed']}, uncounted tail <= {p['tail']:.3g}",
        "  fiber bound: not used for this target",
        f"  covers: {p['covers']}",
    ]
    if p["vacuous"]:
        lines.append(f"  {p['vacuous']}")
    return "\n".join(lines + [f"  {p['error_meaning']}"])


def _resolve(spec: str) -> Any:
    """The ``Bound`` named ``spec`` (registered, or ``module:function``); errors name --bound."""
    from workbench.plugins import get_bound

    try:
        return get_bound(spec)
    except ValueError as e:
        raise ValueError(f"--bound: {e}") from None


FLAGS = {"d": "--d", "rank": "--rank", "heads": "--heads", "N": "--N"}  # Bound's argument names


def _point_error(why: str, spec: str, d: int, rank: int, heads: int, N: int) -> ValueError:
    """Bad input for a point a bound does not cover: the flag, when ``why`` starts with an
    argument's name (``Bound.outside``), else the whole point."""
    arg = why.split(" ", 1)[0]
    if arg in FLAGS:
        return ValueError(f"{FLAGS[arg]}{why[len(arg):]} for --bound {spec}")
    return ValueError(f"--bound {spec} does not cover d={d}, rank={rank}, heads={heads}, N={N} "
                      f"(--d, --rank, --heads, --N): {why}")


def _check_covered(b: Any, spec: str, d: int, rank: int, heads: int, N: int) -> None:
    """Bad input (naming the flag) when ``(d, rank, heads, N)`` is outside what ``b`` covers."""
    why = b.outside(d, rank, heads, N)
    if why is not None:
        raise _point_error(why, spec, d, rank, heads, N)


def _lower_other(b: Any, spec: str, d: int, rank: int, heads: int, N: int,
                 as_json: bool) -> None:
    """``bounds lower --bound NAME`` for a bound other than the certified one, on a point it
    covers: its value, its enclosure where it has one, and which bound it is."""
    from workbench.plugins import PluginFailed

    try:
        value = b(d, rank, heads, N)
        enclosure = list(b.interval(d, rank, heads, N)) if b.enclosure is not None else None
    except PluginFailed as e:  # the user's bound raised, exited or gave no finite number
        raise ValueError(f"--bound {spec} {e}") from None
    except ValueError as e:
        raise _point_error(str(e), spec, d, rank, heads, N) from None
    except Exception as e:  # the bound's own code failed: not bad input
        raise CheckFailed(f"--bound {spec} failed at d={d}, rank={rank}, heads={heads}, N={N}: "
                          f"{type(e).__name__}: {e}") from None
    info = b.describe()
    payload: dict[str, Any] = {
        "bound": spec, "d": d, "r": rank, "heads": heads, "N": N, "value": value,
        "lower_bound": value if b.side == "lower" else None, "enclosure": enclosure,
        "side": b.side, "status": b.status, "rigorous": b.rigorous and enclosure is not None,
        "target": b.target, "law": b.law,
        "class": b.value_class, "covers_N": info["N"], "source": b.source,
        "description": b.description, "ref": b.ref, "bound_info": info,
        "error_meaning": ERROR_MEANING,
    }
    reasons = {}
    if b.N is None:
        reasons["covers_N"] = "the bound covers every N"
    if enclosure is None:
        reasons["enclosure"] = f"--bound {spec} gives a value only, no rigorous enclosure"
    if b.side != "lower":
        reasons["lower_bound"] = f"--bound {spec} is an upper bound: see value"
    if reasons:
        payload["null_reasons"] = reasons
    emit(payload, as_json, _human_other)


def _human_other(p: dict[str, Any]) -> str:
    side = "a lower" if p["side"] == "lower" else "an upper"
    proved = ("proved" + (f" (docs/{p['ref']})" if p["ref"] else "")
              + ("; its enclosure is rigorous" if p["rigorous"] else "; not a rigorous number")
              if p["status"] == "proved" else
              f"conjectured: not proved (workbench falsify --bound {p['bound']} tests it)")
    lines = [
        f"d={p['d']} rank={p['r']} heads={p['heads']} N={p['N']}: bound {p['bound']} = "
        f"{p['value']:.6g}  ({side} bound on the error; from {p['source']})",
        "  enclosure: " + ("none (the bound gives a value only)" if p["enclosure"] is None else
                           f"[{p['enclosure'][0]:.17g}, {p['enclosure'][1]:.17g}]"),
        f"  which bound: status {p['status']}, target {p['target']}, law of the keys "
        f"{p['law']}, value class {p['class']}, covers N = {p['bound_info']['N_text']}",
        f"  {proved}",
    ]
    if p["description"]:
        lines.append(f"  {p['description']}")
    lines.append(f"  {ERROR_MEANING}")
    return "\n".join(lines)


@aliases({"--r": "--rank"})
@cli.command(name="heads-needed", cls=AliasCommand)
@click.option("--d", "d", type=IntIn(2, MAX_D), required=True,
              help=f"Ambient dimension d in 2..{MAX_D}.")
@click.option("--rank", "rank", type=IntIn(1), required=True, help="Key rank r in 1..d.")
@click.option("--eps", type=float, required=True, help=f"Target error eps in {EPS_RANGE}.")
@click.option("--max-degree", type=IntIn(1, 20001), default=None,
              help="Sum odd degrees up to this (default: raised automatically up to a cost cap).")
@click.option("--class", "value_class", type=click.Choice(VALUE_CLASSES), default=EQ2,
              show_default=True,
              help="Model class: eq2 (one fixed value map per head, the default) or "
              "query-dependent-values (value maps may depend on the query; fewer heads).")
@target_options
@json_option
def heads_needed_cmd(
    d: int, rank: int, eps: float, max_degree: int | None, value_class: str, target: str,
    target_params: tuple[str, ...], as_json: bool,
) -> None:
    """Least H for which the harmonic count allows error <= eps (all smaller H cannot);
    --target gives it for another target's profile (e.g. soft-nearest at beta)."""
    d, rank = _check_common(d, rank, max_degree)
    eps = check_float("--eps", eps, lo=0.0, hi=1.0, lo_open=True)
    chosen = choose_target(target, target_params)
    if not chosen.is_hardmax:
        _heads_profile(chosen, d, rank, eps, max_degree, value_class, as_json)
        return
    from workbench.core.bounds.harmonic import heads_needed_search

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
    from workbench.core.bounds.profile_harmonic import (
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
            "this H, so the full bound may need more heads: the value is a valid 'at least'")
    else:
        lines.append(f"  set by the bound: the degrees above {p['max_degree']} (energy <= "
                     f"{p['tail']:.3g}) cannot change it")
    if p["digits"] > 15:
        lines.append("  exact value: --json gives heads_needed (integer) and heads_needed_exact")
    if p["vacuous"]:
        lines.append(f"  {p['vacuous']}")
    meaning = ERROR_MEANING if t["name"] == "nearest" else TARGET_ERROR
    return "\n".join(lines + [f"  {meaning}"])


from workbench.commands.sandwich import sandwich_cmd  # noqa: E402

cli.add_command(sandwich_cmd)
