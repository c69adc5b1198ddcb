"""``workbench witness``: the record of best-known witnesses for the sandwich on ``D_2``, N = 2
(docs/derivations/sandwich.md, "The record of witnesses").

- ``list``: every point of the record's grid with its best known witness (inheritance from fewer
  heads and lower ranks), and the witnesses a store holds (``--db``);
- ``verify FILE|POINT``: replay a witness file, or the record's best at ``d,r,H``, on fresh
  samples; exit 1 unless its claim is reproduced and it lies above the certified bound;
- ``add FILE``: replay a user's witness (a witness ``.npz``, or a state dict of generalized
  attention with ``--d --rank --heads --claim``) and record it in the store ``--db`` when it
  beats the best known there. A file that would run code, does not match its architecture, or
  claims an error its replay does not reproduce is refused: exit 2, one line.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import click

from workbench.commands._arguments import SEED, IntIn
from workbench.commands._common import CheckFailed, emit, json_option, path_option
from workbench.commands._target import target_options
from workbench.commands.sandwich import MAX_D, MAX_HEADS
from workbench.core.validation import check_float, check_int

POINT = re.compile(r"^(\d+),(\d+),(\d+)(?:,(\d+))?$")
MAX_EVAL = 10**7


def _entries(db: str | None) -> list[Any]:
    from workbench.verifiers.witness_record import read_record, read_store

    return read_record() + (read_store(db) if db is not None else [])


def setting_of(target: str, params: tuple[str, ...], N: int) -> Any:
    """The record's setting (``workbench.constructions.witness_setting``) of ``--target`` with
    ``--target-param`` at ``N`` keys: hardmax at any N, soft-nearest (finite beta) at N = 2."""
    from workbench.commands._target import choose_target
    from workbench.constructions.witness_setting import Setting

    chosen = choose_target(target, params)
    if chosen.is_hardmax and target in ("nearest", "soft-nearest"):
        return Setting(N)
    if target != "soft-nearest":
        raise ValueError(f"--target must be nearest or soft-nearest, the targets the record "
                         f"holds witnesses for (got {target!r})")
    if N != 2:
        raise ValueError(f"--target soft-nearest is recorded at N = 2 only (got N = {N})")
    return Setting(2, "soft-nearest", (("beta", float(chosen.params["beta"])),))


def nkeys_lower(setting: Any, point: tuple[int, int, int]) -> tuple[Any, str] | None:
    """For N >= 3 the registered certified bound at N (``certified-n``: the largest
    sequence-length bound covering the point) as ``f(d, r, H)``, named with the part that
    decides at ``point``; ``None`` for N = 2 and where no bound is registered or covers it."""
    if setting.N < 3:
        return None
    from workbench.core.bounds.sequence_length.certified_n import NAME
    from workbench.plugins import get_bound

    try:
        b = get_bound(NAME)
    except ValueError:
        return None
    if b.outside(*point, setting.N) is not None:
        return None
    source = b.evaluate(*point, setting.N).source
    return (lambda d, r, H: b.evaluate(d, r, H, setting.N).certified), f"{NAME} ({source})"


def _cell(entries: list[Any], d: int, r: int, H: int, setting: Any = None) -> dict[str, Any] | None:
    from workbench.constructions.witness_setting import NEAREST_2
    from workbench.verifiers.witness_record import lookup

    setting = setting or NEAREST_2
    e = lookup(entries, d, r, H, setting)
    if e is None:
        return None
    return {"d": d, "r": r, "heads": H, **({} if setting.is_default else
                                           {"setting": setting.to_dict()}),
            "method": e.method, "error": e.error,
            "ci": list(e.ci), "interval": e.interval, "source": e.source, "file": e.file,
            "inherited_from": None if e.point == (d, r, H) else list(e.point[1:]),
            "seed": e.seed, "budget": e.budget, "code": e.code}


@click.group(name="witness")
def cli() -> None:
    """The record of best-known witnesses: list, replay (verify) and add."""


def _list_human(p: dict[str, Any]) -> str:
    lines = [f"{p['witnesses']} witnesses ({p['added']} added to the store) for "
             f"{len(p['points'])} points"]
    for c in p["points"]:
        src = "" if c["inherited_from"] is None else \
            f" (from r={c['inherited_from'][0]}, H={c['inherited_from'][1]})"
        s = c.get("setting")
        where = "" if s is None else f" N={s['N']} {s['target']}" + "".join(
            f" {k}={v:g}" for k, v in s["target_params"].items())
        lines.append(f"  d={c['d']:<3} r={c['r']:<3} H={c['heads']:<4} {c['error']:.4f} "
                     f"[{c['ci'][0]:.4f}, {c['ci'][1]:.4f}] {c['method']}{src}{where}"
                     + (" [store]" if c["source"] == "store" else ""))
    return "\n".join(lines)


@cli.command(name="list")
@path_option("--db", "Also list the witnesses added to this results store.", access="read")
@json_option
def list_cmd(db: str | None, as_json: bool) -> None:
    """Every point of the record with its best known witness."""
    if db is not None:  # refused before the record's modules (torch) are imported
        from workbench.verifiers.store import check_database

        check_database(db)
    from workbench.constructions.witness_setting import NEAREST_2
    from workbench.verifiers.witness_record import record_grid

    entries = _entries(db)
    keys = {(p, NEAREST_2.to_json()) for p in record_grid()} | \
        {(e.point, e.setting.to_json()) for e in entries}
    by_json = {e.setting.to_json(): e.setting for e in entries} | {NEAREST_2.to_json(): NEAREST_2}
    cells = [c for p, s in sorted(keys, key=lambda k: (k[1] != NEAREST_2.to_json(), k[1], k[0]))
             if (c := _cell(entries, p[0], p[1], p[2], by_json[s])) is not None]
    emit({"witnesses": len(entries), "added": sum(e.source == "store" for e in entries),
          "points": cells}, as_json, _list_human)


def _replay_human(p: dict[str, Any]) -> str:
    lo, hi = p["replayed_ci"]
    ok = "reproduced" if p["reproduced"] else "NOT reproduced"
    return "\n".join([
        f"d={p['d']} r={p['r']} H={p['heads']} {p['method']}",
        f"  claimed {p['claimed']:.6g}; replayed {p['replayed']:.6g} CI [{lo:.6g}, {hi:.6g}] "
        f"on {p['samples']} fresh samples (stream {p['stream']}): {ok} "
        f"(|difference| <= {p['tolerance']:.3g})",
        f"  lower bound ({p.get('bound', 'certified')}) at {tuple(p['certified_at'])}: "
        f"{p['certified']:.6g}: "
        + ("above it" if p["above_certified"] else "VIOLATED (the whole interval lies below)"),
        *([f"  {p['recorded']}"] if p.get("recorded") else []),
    ])


def _point(target: str) -> tuple[int, int, int, int] | None:
    m = POINT.match(target)
    if m is None:
        return None
    d, r, H = (int(x) for x in m.groups()[:3])
    N = int(m.group(4) or 2)
    check_int("POINT d", d, lo=2, hi=MAX_D)
    check_int("POINT r", r, lo=1, hi=d)
    check_int("POINT H", H, lo=1, hi=MAX_HEADS)
    check_int("POINT N", N, lo=2, hi=d)
    return d, r, H, N


def _target(target: str) -> tuple[int, int, int, int] | Path:
    """``verify``'s argument: a point ``d,r,H[,N]`` or a readable file."""
    pt = _point(target)
    if pt is not None:
        return pt
    from workbench.commands._paths import readable_file

    if "," in target and not Path(target).exists():
        raise ValueError(f"FILE|POINT must be a witness file or a point d,r,H[,N] of integers "
                         f"(d in 2..{MAX_D}, r in 1..d, H in 1..{MAX_HEADS}, N in 2..d; got "
                         f"{target!r})")
    return Path(readable_file("FILE|POINT", target))


@cli.command(name="verify")
@click.argument("spot", metavar="FILE|POINT")
@target_options
@click.option("--eval-samples", "n_eval", type=IntIn(1000, MAX_EVAL), default=None,
              help="Fresh samples of the replay [default: max(the witness's, 100000)].")
@path_option("--db", "Also look the point up among the witnesses added to this store.",
             access="read")
@click.option("--seed", type=SEED, default=0, show_default=True,
              help="The replay's stream is 7000000 + seed (never a witness's own).")
@json_option
def verify_cmd(spot: str, n_eval: int | None, db: str | None, seed: int,
               as_json: bool, target: str, target_params: tuple[str, ...]) -> None:
    """Replay a witness file, or the record's best at POINT = d,r,H[,N] (N keys, default 2;
    --target nearest or soft-nearest with --target-param beta=B), on fresh samples."""
    if n_eval is not None:
        check_int("--eval-samples", n_eval, lo=1000, hi=MAX_EVAL)
    where = _target(spot)
    if db is not None:
        from workbench.verifiers.store import check_database

        check_database(db)
    from workbench.verifiers.witness_replay import entry_witness, replay

    if isinstance(where, Path):
        from workbench.constructions.optimized import Witness

        try:
            w = Witness.load(where)
            if w.method == "trained_generalized" and not w.params:  # weights beside it (.pt)
                w.params = _weights_beside(where)
        except ValueError as e:
            raise ValueError(f"FILE|POINT {e}") from None
        low = nkeys_lower(w.setting, (w.d, w.r, w.heads))
        rep = replay(w, seed=seed, n_eval=n_eval, claimed_ci=w.ci,
                     **({} if low is None else {"lower": low[0], "lower_name": low[1]}))
        payload = rep.to_dict()
        payload["file"] = str(where)
    else:
        entries = _entries(db)
        from workbench.verifiers.witness_record import lookup

        setting = setting_of(target, target_params, where[3])
        best = lookup(entries, *where[:3], setting)
        if best is None:
            raise ValueError(f"POINT {spot} has no witness in the record for "
                             f"{setting.label()} (workbench witness list shows the points)")
        w = entry_witness(best, db)
        low = nkeys_lower(setting, where[:3])
        rep = replay(w, seed=seed, n_eval=n_eval, claimed_ci=best.ci, point=where[:3],
                     **({} if low is None else {"lower": low[0], "lower_name": low[1]}))
        payload = {**rep.to_dict(), "entry": best.to_dict()}
    emit(payload, as_json, _replay_human)
    if not rep.reproduced:
        raise CheckFailed("the witness's claimed error is not reproduced by its replay")
    if not rep.above_certified:
        raise CheckFailed("the witness lies below the lower bound beyond its CI")


def _weights_beside(path: Path) -> dict[str, Any]:
    """The ``.pt`` state dict beside a trained witness of ``bounds sandwich --witness-dir``,
    as ``state.*`` arrays (read with ``torch.load(weights_only=True)``)."""
    from workbench.constructions.optimized import STATE_PREFIX
    from workbench.verifiers.witness_replay import torch_state

    pt = path.with_suffix(".pt")
    if not pt.is_file():
        raise ValueError(f"witness {str(path)!r} is trained, and its weights {str(pt)!r} are "
                         "missing")
    return {STATE_PREFIX + k: v for k, v in torch_state(pt, repr(str(pt))).items()}


@cli.command(name="add")
@click.argument("file", metavar="FILE", type=click.Path())
@click.option("--d", "d", type=IntIn(2, MAX_D), default=None,
              help=f"A state dict's d in 2..{MAX_D}.")
@click.option("--rank", "r", type=IntIn(1, MAX_D), default=None,
              help="A state dict's key rank r in 1..d.")
@click.option("--heads", type=IntIn(1, MAX_HEADS), default=None,
              help=f"A state dict's heads H in 1..{MAX_HEADS}.")
@click.option("--claim", type=float, default=None,
              help="A state dict's claimed error on D_2 (N = 2).")
@click.option("--arch", default="generalized", show_default=True,
              help="A state dict's architecture (generalized: Eq. 2 with learned scores).")
@click.option("--eval-samples", "n_eval", type=IntIn(1000, MAX_EVAL), default=100_000,
              show_default=True,
              help="Fresh samples of the replay.")
@path_option("--db", "The results store the witness is recorded in (default: runs.sqlite "
             "under the user's data directory).", access="write")
@click.option("--seed", type=SEED, default=0, show_default=True,
              help="The replay's stream is 7000000 + seed.")
@json_option
def add_cmd(file: str, d: int | None, r: int | None, heads: int | None, claim: float | None,
            arch: str, n_eval: int, db: str | None, seed: int, as_json: bool) -> None:
    """Replay a user's witness and record it in the store if it beats the best known."""
    from workbench.commands._paths import readable_file
    from workbench.verifiers.store import check_writable, default_path

    path = readable_file("FILE", file)
    if d is not None:
        check_int("--d", d, lo=2, hi=MAX_D)
        if r is not None:
            check_int("--rank", r, lo=1, hi=d)
    elif r is not None:
        check_int("--rank", r, lo=1)
    if heads is not None:
        check_int("--heads", heads, lo=1, hi=MAX_HEADS)
    if claim is not None:
        check_float("--claim", claim, lo=0.0)
    if arch != "generalized":
        raise ValueError(f"--arch must be generalized, the registered architecture a witness "
                         f"may have (got {arch!r})")
    check_int("--eval-samples", n_eval, lo=1000, hi=MAX_EVAL)
    store = check_writable(db if db is not None else default_path())
    from workbench.verifiers.witness_record import Entry, lookup, write_store
    from workbench.verifiers.witness_replay import (
        interval_of,
        read_user_file,
        replay,
        witness_bytes,
    )

    w = read_user_file(path, d=d, r=r, H=heads, claim=claim, arch=arch)
    own_ci = w.ci if w.ci != (w.error, w.error) else None
    rep = replay(w, seed=seed, n_eval=n_eval, claimed_ci=own_ci)
    if not rep.reproduced:
        raise ValueError(f"FILE claims the error {w.error:.6g}, which its replay does not "
                         f"reproduce ({rep.error:.6g}, CI [{rep.ci[0]:.6g}, {rep.ci[1]:.6g}] on "
                         f"{rep.n_eval} fresh samples)")
    payload = rep.to_dict()
    if not rep.above_certified:
        emit(payload, as_json, _replay_human)
        raise CheckFailed("the witness lies below the certified lower bound beyond its CI")
    from workbench.verifiers.witness_record import read_record, read_store

    known = lookup(read_record() + (read_store(store) if store.exists() else []),
                   w.d, w.r, w.heads, w.setting)
    beats = known is None or rep.ci[1] < known.ci[1]
    payload["best_known"] = None if known is None else known.to_dict()
    if beats:
        measured = Entry(w.d, w.r, w.heads, w.method, rep.error, rep.ci, interval_of(w.method),
                         rep.n_eval, rep.stream, "", None, {}, f"workbench witness add {file}",
                         setting=w.setting)
        fresh = type(w)(w.method, w.d, w.r, w.heads, rep.error, rep.ci, w.params, rep.n_eval,
                        rep.stream)
        stored = write_store(store, measured, witness_bytes(fresh))
        payload["recorded"] = f"recorded in {store} as {stored.file[:12]}"
    else:
        payload["recorded"] = (f"not recorded: the best known at {w.d, w.r, w.heads} has CI "
                               f"upper end {known.ci[1]:.6g} <= {rep.ci[1]:.6g}"
                               if known is not None else "")
    payload["beats_best_known"] = beats
    payload["store"] = str(store)
    if not math.isfinite(rep.error):
        raise ValueError("FILE replays to a non-finite error")
    emit(payload, as_json, _replay_human)
