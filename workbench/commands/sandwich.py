"""``workbench bounds sandwich``: the certified lower bound (Eq. 2: the larger of the harmonic
count and the fiber bound) against the best explicit model found (docs/derivations/lower_bound.md,
"The sandwich"; docs/derivations/fiber_bound.md); exit 1 if a witness beats it.

By default the record of best-known witnesses (``workbench witness list``; with ``--db``, the
witnesses added to that store too) is a candidate: best = min(record, computed now), and the
output says which won and how to replay it (``--no-record``: computed now only).

``--bound NAME`` puts any registered bound (``workbench.plugins.get_bound``, or
``module:function``) on the lower side instead; ``--witness NAME`` (repeatable) adds a registered
construction (or ``module:function``) to the built-in witnesses, measured by the public runner
(docs/extending.md). Names are resolved here and passed down as objects: the verifiers layer
never imports ``workbench.plugins``."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import click

from workbench.commands._arguments import IntIn
from workbench.commands._bound_labels import label_fields, labels_text
from workbench.commands._common import (
    AliasCommand,
    CheckFailed,
    aliases,
    common_options,
    emit,
    path_option,
    plugin_errors,
)
from workbench.commands._target import (
    TARGET_ERROR,
    ChosenTarget,
    choose_target,
    require_profile,
    target_options,
)
from workbench.core.validation import check_int

MAX_D = 256  # the witnesses solve and train at this size within minutes
MAX_HEADS = 4096


def _certified_labels(p: dict[str, Any]) -> dict[str, Any]:
    """The labels of the point's certified bound, as the fields of ``labels_text``."""
    return {"status": "proved", "rigorous": p["rigorous"], "certified": p["certified_rigorous"],
            "source": p["certified_source"]}


def _bound_labels(p: dict[str, Any]) -> dict[str, Any]:
    """The labels of the bound given with --bound."""
    return {"status": p["bound_status"], "rigorous": p["bound_rigorous"],
            "certified": p["bound_certified"], "source": p["bound_source"]}


def _human(p: dict[str, Any]) -> str:
    lo, hi = p["best_ci"]
    other = p["bound"] != "certified"
    lines = [
        f"d={p['d']} r={p['r']} H={p['heads']}",
        *([f"  bound {p['bound']}:  error >= {p['bound_value']:.6g}",
           f"    {labels_text(_bound_labels(p))}"] if other else []),
        f"  lower bound (Eq. 2):                 error >= {p['certified']:.6g}  "
        f"(harmonic count {p['certified_harmonic']:.6g}, fiber {p['certified_fiber']:.6g})",
        f"    {labels_text(_certified_labels(p))}",
        f"  lower bound (query-dependent values): error >= {p['certified_query_values']:.6g}",
        f"  best achievable: {p['best_error']:.6g}  CI [{lo:.6g}, {hi:.6g}]  "
        f"({p['method']}; witness {p['witness_file'] or 'not saved'})",
        *([f"  won by the record's witness (replay: {p['record']['replay']})"]
          if p.get("best_source") == "record" else
          [f"  computed now beats the record ({p['record']['error']:.6g}, replay: "
           f"{p['record']['replay']})"] if p.get("record") else []),
        f"  enclosure of the optimum: [{p['certified']:.6g}, {hi:.6g}]  "
        f"ratio best / {'bound' if other else 'lower bound'} = {p['ratio']:.4g}",
    ]
    for c in p["candidates"]:
        lines.append(f"    candidate {c['method']:<22} {c['error']:.6g}"
                     + (f"  (replay: {c['replay']})" if c.get("replay") else ""))
    for why in p["skipped"]:
        lines.append(f"    left out: {why}")
    if p["violated"]:
        what = f"bound {p['bound']}" if other else "lower bound"
        lines.append(f"  VIOLATED: a witness lies below the {what} beyond its CI")
    return "\n".join(lines)


def _build(c: Any, d: int, r: int, heads: int, seed: int) -> Any:
    """The construction ``c`` at ``(d, r, H, N = 2)`` with its default parameters."""
    return c.build(d, r, heads, 2, seed, **c.params)


def resolve_bound(name: str, d: int, r: int, heads: int) -> Any:
    """``--bound``: a lower bound on the nearest-neighbour error that covers ``(d, r, H, N = 2)``
    on two orthonormal keys."""
    from workbench.plugins import get_bound

    try:
        b = get_bound(name)
    except ValueError as e:
        raise ValueError(f"--bound: {e}") from None
    why = b.outside(d, r, heads, 2)
    if why is None and (b.side != "lower" or b.target != "nearest" or b.law == "iid"):
        why = (f"({b.side} bound, {b.target} target, {b.law} keys) does not fit: the "
               "sandwich needs a lower bound on the nearest neighbour for orthonormal keys")
    if why is not None:
        raise ValueError(f"--bound {name} {why}")
    return b


def resolve_witness(name: str) -> Any:
    """``--witness``: a construction measured on ``D_2`` (N = 2, orthonormal keys, uniform
    queries, nearest neighbour)."""
    from workbench.plugins import get_construction

    try:
        c = get_construction(name)
    except ValueError as e:
        raise ValueError(f"--witness: {e}") from None
    law = c.params.get("points", c.law)
    if (law, c.queries, c.target) != ("orthonormal", "uniform", "nearest"):
        raise ValueError(f"--witness {name} is measured on {law} keys, {c.queries} queries, "
                         f"against the {c.target} target; the sandwich needs N = 2 on D_2 "
                         "(orthonormal keys, uniform queries, nearest neighbour)")
    return c


@aliases({"--r": "--rank", "--budget": "--scale"})
@click.command(name="sandwich", cls=AliasCommand)
@click.option("--d", "d", type=IntIn(2, MAX_D), required=True,
              help=f"Ambient dimension d in 2..{MAX_D}.")
@click.option("--rank", "r", type=IntIn(1, MAX_D), required=True, help="Key rank r in 1..d.")
@click.option("--heads", type=IntIn(1, MAX_HEADS), required=True,
              help=f"Number of heads H in 1..{MAX_HEADS}.")
@click.option(
    "--scale",
    "budget",
    type=click.Choice(["quick", "full"]),
    default="quick",
    show_default=True,
    help="quick: constructions only; full: also trained models (old spelling: --budget).",
)
@path_option("--witness-dir", "Save the best witness here (.npz, trained weights as .pt).",
             folder=True, access="write")
@click.option("--bound", "bound", default=None, metavar="NAME",
              help="The lower side: a registered bound (workbench bounds list) or "
              "module:function  [default: certified]")
@click.option("--witness", "witness", multiple=True, metavar="NAME",
              help="Also measure this construction (registered, or module:function) as a "
              "witness (repeatable).")
@path_option("--db", "Also store the point in this results store (workbench report draws it; a "
             "--target point is kept apart per target and parameters); the witnesses added "
             "to it (workbench witness add) join the hardmax sandwich's record.")
@click.option("--record/--no-record", "use_record", default=True, show_default=True,
              help="Count the record's best known witness here (workbench witness list).")
@click.option("--N", "N", type=IntIn(2, MAX_D), default=2, show_default=True,
              help="Keys on D_N: 2, or 3..d where a bound covers (hardmax; certified-n against "
              "the record's "
              "trained witnesses and the one-head Bayes witness).")
@target_options
@common_options
def sandwich_cmd(
    d: int, r: int, heads: int, budget: str, witness_dir: str | None, bound: str | None,
    witness: tuple[str, ...], db: str | None, use_record: bool, N: int, target: str,
    target_params: tuple[str, ...], as_json: bool, seed: int
) -> None:
    """Certified lower bound vs the best achievable error at (d, r, H), N = 2 on D_2; with
    --N, on D_N; with --target, the profile's bound vs the midpoint, the one-head Bayes witness,
    trained Eq. 2 layers and the record's witnesses."""
    d = check_int("--d", d, lo=2, hi=MAX_D)
    check_int("--rank", r, lo=1, hi=d)
    check_int("--heads", heads, lo=1, hi=MAX_HEADS)
    check_int("--N", N, lo=2, hi=d)
    chosen = choose_target(target, target_params)
    if not chosen.is_hardmax or N != 2:
        what = f"--target {target}" if not chosen.is_hardmax else f"--N {N}"
        for flag, given in (("--bound", bound), ("--witness", witness),
                            ("--db", db if N != 2 else None), ("--witness-dir", witness_dir)):
            if given:
                raise ValueError(f"{flag} applies to the hardmax sandwich at N = 2 only (got "
                                 f"{what})")
        if N != 2:
            if not chosen.is_hardmax:
                raise ValueError(f"--N {N} applies to the hardmax target only (got --target "
                                 f"{target}; soft targets are covered at N = 2)")
            _nkeys_sandwich(d, r, heads, N, budget, use_record, as_json, seed)
            return
        _target_sandwich(chosen, d, r, heads, budget, use_record, as_json, seed,
                         _writable_store(db))
        return
    lower = None if bound is None else resolve_bound(bound, d, r, heads)
    named = {name: resolve_witness(name) for name in witness}
    _writable_store(db)
    from workbench.verifiers.sandwich import ConstructionWitness, sandwich

    extra = [ConstructionWitness(name, functools.partial(_build, c, d, r, heads))
             for name, c in named.items()]
    record = []
    if use_record:
        from workbench.verifiers.witness_record import read_record, read_store

        record = read_record() + (read_store(db) if db is not None and Path(db).exists() else [])
    with plugin_errors({"bound": "--bound", "construction": "--witness"}):
        if lower is not None:  # called before any witness is measured or saved
            lower(d, r, heads, 2)
        p = sandwich(d, r, heads, budget=budget, witness_dir=witness_dir, seed=seed,
                     bound=lower, bound_name=bound, witnesses=extra,
                     record=record).to_dict()
    for c in p["candidates"]:  # the construct command measures a named witness again
        if c["method"] in witness:
            c["replay"] = (f"workbench construct {c['method']} --d {d} --rank {r} --heads "
                           f"{heads} --N 2 --seed {seed} --eval-samples {c['samples']}")
    _store_point(db, p)
    emit(p, as_json, _human)
    if p["violated"]:
        what = "the certified lower bound" if bound is None else f"the bound {p['bound']}"
        raise CheckFailed(f"a witness beats {what} beyond its CI")


def _writable_store(db: str | None) -> str | None:
    """``--db``, checked to be a results store it can write before anything is measured."""
    if db is not None:
        from workbench.verifiers.store import check_writable

        check_writable(db)
    return db


def _store_point(db: str | None, p: dict[str, Any]) -> None:
    """Store the point ``p`` in ``db`` (``sandwich_store.write_points``; nothing without one)."""
    if db is None:
        return
    from workbench.verifiers.sandwich_store import write_points
    from workbench.verifiers.store import Store

    with Store(db) as st:
        write_points(st, [p], "workbench bounds sandwich")


def target_point(p: dict[str, Any]) -> dict[str, Any]:
    """A target sandwich's payload as a sandwich point (``sandwich_store``): its lower side is
    the certified bound of the target's profile (``bound_value``, also the required
    ``certified`` field), its best witness the best candidate, and ``target`` with its
    parameters and ``N`` make it a point of its own (``sandwich_store.point_task``)."""
    return {**p, "bound": "certified bound of the target", "bound_value": p["bound"],
            "certified": p["bound"], "best_error": p["best"]["error"],
            "best_ci": p["best"]["ci"], "method": p["best"]["method"], "N": 2}


def _record(use: bool) -> list[Any]:
    if not use:
        return []
    from workbench.verifiers.witness_record import read_record

    return read_record()


def _nkeys_sandwich(d: int, r: int, heads: int, N: int, budget: str, use_record: bool,
                    as_json: bool, seed: int) -> None:
    """The sandwich on D_N, N >= 3 (workbench.verifiers.nkeys_sandwich): below, the registered
    certified bound at N >= 3 (certified-n: every sequence-length bound covering the point)."""
    from workbench.core.bounds.sequence_length.certified_n import NAME
    from workbench.plugins import get_bound

    try:
        b = get_bound(NAME)
    except ValueError:
        raise ValueError(f"--N {N}: no lower bound for N >= 3 is registered ({NAME})") from None
    why = b.outside(d, r, heads, N)
    if why is not None:
        raise ValueError(f"--N {N}: no certified bound covers it ({why})")
    from workbench.verifiers.nkeys_sandwich import nkeys_sandwich

    with plugin_errors({"bound": "--N"}):
        bv = b.evaluate(d, r, heads, N)
        s = nkeys_sandwich(d, r, heads, N, lambda d_, r_, h_: bv.value,
                           bound_name=b.name, bound_rigorous=bv.rigorous,
                           record=_record(use_record), scale=budget, seed=seed)
    p = {**s.to_dict(), "labels": label_fields(bv), "decided_by": bv.source}
    emit(p, as_json, _human_nkeys)
    if p["violated"]:
        raise CheckFailed(f"a witness beats the bound {b.name} ({bv.source}) beyond its CI")


def _human_nkeys(p: dict[str, Any]) -> str:
    word = "error >=" if p["bound_rigorous"] else "estimated bound (not rigorous):"
    ratio = "n/a (bound 0)" if p["ratio"] is None else f"{p['ratio']:.4g}"
    lo, hi = p["best"]["ci"]
    lines = [f"d={p['d']} r={p['r']} H={p['heads']} N={p['N']} (D_N, hardmax)",
             f"  lower bound {p['bound_name']} (decided by {p['decided_by']}): {word} "
             f"{p['bound']:.6g}",
             f"  {labels_text(p['labels'])}",
             f"  best model: {p['best']['error']:.6g}  CI [{lo:.6g}, {hi:.6g}] "
             f"({p['best']['method']}, {p['best_source']}); ratio best / bound = {ratio}"]
    for c in p["candidates"]:
        lines.append(f"    candidate {c['method']:<30} {c['error']:.6g}  "
                     + (f"(replay: {c['replay']})" if c.get("replay") else f"({c['note']})"))
    if p["violated"]:
        lines.append("  VIOLATED: a witness lies below the bound beyond its CI")
    return "\n".join(lines)


def target_bound(profile: Any, d: int, r: int, heads: int) -> Any:
    """The lower side of the target sandwich, in one place (``benchmarks/sandwich_settings.py``
    reads it here too): the profile's certified bound, a ``BoundValue`` (the larger of its
    harmonic count and fiber parts, docs/derivations/soft_targets.md)."""
    from workbench.core.bounds.profiles.profile_fiber import profile_lower_bound

    return profile_lower_bound(profile, d, r, heads)


def _target_sandwich(chosen: ChosenTarget, d: int, r: int, heads: int, budget: str,
                     use_record: bool, as_json: bool, seed: int, db: str | None = None) -> None:
    """The sandwich for a non-hardmax target (workbench.verifiers.target_sandwich), stored in
    ``db`` when one is given (``target_point``)."""
    profile = require_profile(chosen, "the target sandwich (the harmonic count)")
    from workbench.verifiers.target_sandwich import target_sandwich
    from workbench.verifiers.tasks import TargetTask

    bv = target_bound(profile, d, r, heads)
    task = TargetTask("nearest", d=d, N=2, points="orthonormal", target=chosen.spec,
                      target_params=tuple(sorted(chosen.params.items())), fn=chosen.map())
    s = target_sandwich(task, profile, r, heads, bv.value, bv.rigorous,
                        steps=200 if budget == "quick" else 1000,
                        seeds=1 if budget == "quick" else 3, seed=seed,
                        record=_record(use_record))
    labels = label_fields(bv)
    t = bv.part("harmonic count").truncation
    p = {**s.to_dict(), "target": chosen.describe(), "rigorous": labels["rigorous"],
         "labels": labels, "degrees_summed": None if t is None else t.degrees_summed,
         "tail": None if t is None else t.tail, "error_meaning": TARGET_ERROR}
    _store_point(db, target_point(p))
    emit(p, as_json, _human_target)
    if p["violated"]:
        raise CheckFailed("a witness beats the bound of the target beyond its CI")


def _human_target(p: dict[str, Any]) -> str:
    t = p["target"]
    word = "error >=" if p["rigorous"] else "estimated bound"
    ratio = "n/a (bound 0)" if p["ratio"] is None else f"{p['ratio']:.4g}"
    lo, hi = p["best"]["ci"]
    lines = [f"d={p['d']} r={p['r']} H={p['heads']}, target {t['name']} ({t['profile']})",
             f"  lower bound for the profile: {word} {p['bound']:.6g} (the larger of its "
             f"parts: {p['labels']['source']})",
             f"    {labels_text(p['labels'])}",
             f"  best model: {p['best']['error']:.6g}  CI [{lo:.6g}, {hi:.6g}] "
             f"({p['best']['method']}, {p['best_source']}); ratio best / bound = {ratio}"]
    for c in p["candidates"]:
        lines.append(f"    candidate {c['method']:<22} {c['error']:.6g}  ({c['note']})")
    if p["violated"]:
        lines.append("  VIOLATED: a witness lies below the bound beyond its CI")
    return "\n".join(lines + [f"  {p['error_meaning']}"])
