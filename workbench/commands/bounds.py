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

from workbench.commands._arguments import IntIn, IntUpToD
from workbench.commands._bound_labels import label_fields, labels_text, part_fields, part_text
from workbench.commands._bounds_common import (
    CERTIFIED,
    CLASS_TEXT,
    MAX_D,
    POINTS_TEXT,
    SOFT_IID_TEXT,
    check_common,
    check_covered,
    point_error,
    resolve_bound,
    vacuous_reason,
)
from workbench.commands._common import (
    ERROR_MEANING,
    AliasCommand,
    CheckFailed,
    aliases,
    emit,
    json_option,
)
from workbench.commands._target import (
    TARGET_ERROR,
    ChosenTarget,
    choose_target,
    require_profile,
    target_options,
)
from workbench.commands._truncation import truncation_line, truncation_payload
from workbench.core.bounds import VALUE_CLASSES  # imports nothing: fast
from workbench.core.validation import check_heads, check_int


@click.group(name="bounds")
def cli() -> None:
    """Lower bounds on the error: the certified one for nearest neighbour (N = 2, D_2) against
    generalized attention, and every registered bound."""


def _answer_text(lines: list[str], note: str | None) -> str:
    """A human answer: ``lines``, then ``note`` where there is one, then what the error means."""
    return "\n".join([*lines, *([f"  {note}"] if note else []), f"  {ERROR_MEANING}"])


def _human_lower(p: dict[str, Any]) -> str:
    hc, fb = p["harmonic_count"], p["fiber"]
    lines = [
        f"d={p['d']} rank={p['r']} heads={p['heads']}: every model of the class below "
        f"has error >= {p['lower_bound']:.6g}  (the larger of the two bounds)",
        f"  {labels_text(p)}",
        f"  {part_text(hc)} (the full series)",
        truncation_line(p["truncation"]),
        f"  {part_text(fb)}, keys span r* = {fb['span_rank']} of d = {p['d']}"
        + ("" if fb["span_rank"] < p["d"] else " (no fiber)"),
        f"  covers: {p['covers']}",
        f"  law of the keys: {p['law_text']}",
    ]
    return _answer_text(lines, p["vacuous"])


@aliases({"--r": "--rank"})
@cli.command(name="lower", cls=AliasCommand)
@click.option("--d", "d", type=IntIn(2, MAX_D), required=True,
              help=f"Ambient dimension d in 2..{MAX_D} (every bound, plug-ins included).")
@click.option("--rank", "rank", type=IntIn(1), required=True, help="Key rank r in 1..d.")
@click.option("--heads", type=IntIn(1), required=True, help="Number of heads H >= 1.")
@click.option("--bound", "bound", default="certified", show_default=True,
              help="A registered bound (workbench bounds list) or module:function "
              "f(d, rank, heads, N).")
@click.option("--N", "N", type=IntUpToD(2), default=2, show_default=True,
              help="Number of keys N in 2..d (orthonormal keys, D_N): the certified bound at "
              "N = 2; at 3..d the largest sequence-length bound that covers (d, N) (workbench "
              "bounds list: certified-n).")
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
    bound_given = click.get_current_context().get_parameter_source(
        "bound") is ParameterSource.COMMANDLINE
    if _beyond_two_keys(bound, N, bound_given):
        from workbench.commands.bounds_certified_n import lower_certified_n
        from workbench.core.bounds.sequence_length.certified_n import NAME, SEQUENCE_BOUNDS

        if bound == f"{NAME}-query-values":
            value_class = "query-dependent-values"
        registered = NAME if value_class == "eq2" else f"{NAME}-query-values"
        names = [bound] if bound_given and bound in {e.name for e in SEQUENCE_BOUNDS} else None
        lower_certified_n(d, rank, heads, N, max_degree, value_class, points, as_json,
                          bound if names else registered, names)
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
    b = resolve_bound(name)  # every bound, built-in or plug-in, through the registry
    if bound not in CERTIFIED and class_given:
        raise ValueError(f"--class applies to --bound certified only (--bound {bound} has the "
                         f"class {b.value_class})")
    if b.source == "workbench":
        check_int("--d", d, lo=2, hi=MAX_D)
    if points == "iid" and N != 2:
        raise ValueError(f"--N must be 2 with --points iid (the i.i.d. transfer of the certified "
                         f"bound is proved for N = 2 only; got --N {N})")
    check_covered(b, name, d, rank, heads, N)  # the one check of (d, rank, heads, N)
    if name not in CERTIFIED:
        _lower_other(b, name, d, rank, heads, N, as_json)
        return
    if max_degree is not None:
        check_int("--max-degree", max_degree, lo=1, hi=20001)
    from workbench.core.bounds.certified import certified_lower_bound

    cb = certified_lower_bound(d, rank, heads, value_class, max_degree=max_degree)
    lb, fb, bv = cb.harmonic, cb.fiber, cb.bound_value
    payload = {
        "d": lb.d,
        "r": lb.r,
        "heads": lb.heads,
        **label_fields(bv),
        "harmonic_count": part_fields(bv.part("harmonic count")),
        "fiber": {**part_fields(bv.part("fiber")), "span_rank": fb.span_rank},
        "degrees_summed": lb.degrees_summed,
        "tail": lb.tail,
        "truncation": truncation_payload(lb.truncation),  # the harmonic count's
        "method": bv.chosen.method,
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


def _beyond_two_keys(bound: str, N: int, bound_given: bool) -> bool:
    """Whether ``bounds lower`` answers with the certified bound at N >= 3: ``--N`` other than 2
    without ``--bound`` (the default is the largest valid bound there), ``--bound certified-n``
    (or its query-values twin), or ``--bound`` one of its entries (that one alone)."""
    from workbench.core.bounds.sequence_length.certified_n import NAME, SEQUENCE_BOUNDS

    ours = {NAME, f"{NAME}-query-values", *(e.name for e in SEQUENCE_BOUNDS)}
    return N != 2 and (not bound_given or bound in ours)


def _lower_profile(chosen: ChosenTarget, bound: str, d: int, rank: int, heads: int, N: int,
                   max_degree: int | None, value_class: str, points: str, as_json: bool) -> None:
    """``bounds lower --target T`` for a target other than hardmax: the harmonic count of its
    profile (docs/derivations/soft_targets.md)."""
    if bound not in CERTIFIED:
        raise ValueError(f"--target {chosen.spec} applies to --bound certified or "
                         f"certified-query-values (got --bound {bound}, a bound for its own "
                         "target)")
    if bound != "certified":
        value_class = CERTIFIED[bound]
    d, rank = check_common(d, rank, max_degree)
    check_heads(heads, "--heads")
    if check_int("--N", N, lo=1) != 2:
        raise ValueError(f"--N must be 2 with --target {chosen.spec} (its profile bound covers "
                         f"N = 2 on D_2; got --N {N})")
    profile = require_profile(chosen, "the harmonic count")
    if points != "orthonormal":
        if max_degree is not None:
            raise ValueError(f"--points iid with --target {chosen.spec}: the i.i.d. mixture "
                             "(docs/derivations/soft_targets.md, step T) sets its own "
                             "truncation; leave out --max-degree or use --points orthonormal")
        if not chosen.target.iid_scales:
            raise ValueError(f"--points iid with --target {chosen.spec}: the target does not "
                             "declare that it is its profile's target on every pair of keys "
                             "(Target(iid_scales=True), docs/extending.md), which the i.i.d. "
                             "mixture needs; use --points orthonormal")
        from workbench.core.bounds.profiles.profile_iid_scale import profile_iid_bound

        bv = profile_iid_bound(profile, d, rank, heads, value_class, label=chosen.spec)
    else:
        from workbench.core.bounds.profiles.profile_fiber import profile_lower_bound

        bv = profile_lower_bound(profile, d, rank, heads, value_class, max_degree=max_degree)
    hb = bv.chosen if points != "orthonormal" else bv.part("harmonic count")
    fiber = next((part_fields(q) for q in bv.parts if q.name == "fiber"), None)
    payload: dict[str, Any] = {
        "d": d, "r": rank, "heads": heads, "target": chosen.describe(),
        **label_fields(bv), "truncation": truncation_payload(bv.truncation or hb.truncation),
        "degrees_summed": None if hb.truncation is None else hb.truncation.degrees_summed,
        "tail": None if hb.truncation is None else hb.truncation.tail,
        "method": bv.chosen.method, "class": value_class, "covers": CLASS_TEXT[value_class],
        "fiber": fiber, "vacuous": vacuous_reason(d, rank),
        "error_meaning": TARGET_ERROR, "bound": bound, "law": points,
        "law_text": POINTS_TEXT[points] if points == "orthonormal" else SOFT_IID_TEXT,
    }
    emit(payload, as_json, _human_profile)


def _human_profile(p: dict[str, Any]) -> str:
    t = p["target"]
    head = (f"every model of the class below has error >= {p['lower_bound']:.6g}"
            if p["rigorous"] else f"estimated bound {p['lower_bound']:.6g}")
    lines = [
        f"d={p['d']} rank={p['r']} heads={p['heads']}, target {t['name']} (profile "
        f"{t['profile']}): {head}",
        f"  {labels_text(p)}",
        *[f"  {part_text(q)}" for q in p["parts"]],
        truncation_line(p["truncation"]),
        f"  covers: {p['covers']}",
        f"  law of the keys: {p['law_text']}",
    ]
    if p["vacuous"]:
        lines.append(f"  {p['vacuous']}")
    return "\n".join(lines + [f"  {p['error_meaning']}"])


def _lower_other(b: Any, spec: str, d: int, rank: int, heads: int, N: int,
                 as_json: bool) -> None:
    """``bounds lower --bound NAME`` for a bound other than the certified one, on a point it
    covers: its value, its enclosure where it has one, and which bound it is."""
    from workbench.plugins import PluginFailed

    try:
        bv = b.evaluate(d, rank, heads, N)
        value = bv.value if b.evaluator is not None else b(d, rank, heads, N)
    except PluginFailed as e:  # the user's bound raised, exited or gave no finite number
        raise ValueError(f"--bound {spec} {e}") from None
    except ValueError as e:
        raise point_error(str(e), spec, d, rank, heads, N) from None
    except Exception as e:  # the bound's own code failed: not bad input
        raise CheckFailed(f"--bound {spec} failed at d={d}, rank={rank}, heads={heads}, N={N}: "
                          f"{type(e).__name__}: {e}") from None
    info = b.describe()
    payload: dict[str, Any] = {
        "bound": spec, "d": d, "r": rank, "heads": heads, "N": N, "value": value,
        **label_fields(bv), "side": b.side, "target": b.target, "law": b.law,
        "class": b.value_class, "covers_N": info["N"], "package": b.source,
        "description": b.description, "ref": b.ref, "bound_info": info,
        "error_meaning": ERROR_MEANING,
    }
    reasons = {}
    if not b.has_enclosure:  # the value twice is no enclosure
        payload["enclosure"] = None
        reasons["enclosure"] = f"--bound {spec} gives a value only, no enclosure"
    if b.side != "lower":
        payload["lower_bound"] = None
    if b.N is None:
        reasons["covers_N"] = "the bound covers every N"
    if b.side != "lower":
        reasons["lower_bound"] = f"--bound {spec} is an upper bound: see value"
    if reasons:
        payload["null_reasons"] = reasons
    emit(payload, as_json, _human_other)


def _human_other(p: dict[str, Any]) -> str:
    side = "a lower" if p["side"] == "lower" else "an upper"
    proved = (f"proved (docs/{p['ref']})" if p["ref"] else "proved") \
        if p["status"] == "proved" else \
        f"conjectured: not proved (workbench falsify --bound {p['bound']} tests it)"
    lines = [
        f"d={p['d']} rank={p['r']} heads={p['heads']} N={p['N']}: bound {p['bound']} = "
        f"{p['value']:.6g}  ({side} bound on the error; from {p['package']})",
        f"  {labels_text(p)}",
        "  enclosure: " + ("none (the bound gives a value only)" if p["enclosure"] is None else
                           f"[{p['enclosure'][0]:.17g}, {p['enclosure'][1]:.17g}]"),
        f"  which bound: status {p['status']}, target {p['target']}, law of the keys "
        f"{p['law']}, value class {p['class']}, covers N = {p['bound_info']['N_text']}",
        f"  {proved}",
    ]
    return _answer_text(lines, p["description"])

from workbench.commands.bounds_list import list_cmd  # noqa: E402
from workbench.commands.heads_needed import heads_needed_cmd  # noqa: E402
from workbench.commands.sandwich import sandwich_cmd  # noqa: E402

cli.add_command(list_cmd)
cli.add_command(heads_needed_cmd)
cli.add_command(sandwich_cmd)
