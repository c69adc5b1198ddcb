"""The sandwich's points in the results store (table ``sandwich_points``, schema version 2).

A point is one measurement at ``(d, r, H)`` on ``D_2`` (N = 2): the certified lower bound (the
larger of the harmonic count and the fiber bound, docs/derivations/fiber_bound.md) and the best
witness found, with its interval (docs/derivations/lower_bound.md, "The sandwich"). Records come
from ``workbench bounds sandwich --db`` and from ``benchmarks/sandwich.py --db``; only the fields
``d``, ``r``, ``heads``, ``certified``, ``best_error``, ``best_ci`` and ``method`` are required,
and the whole record is kept as JSON.

A point of another target (``workbench bounds sandwich --target``: the harmonic count of the
target's profile against the midpoint and trained layers, docs/derivations/soft_targets.md)
records its ``target`` (name and parameters) and ``N``; ``point_task`` names what its errors are
measured against, and that name is part of the point's key, so points of two targets, or of
one target at two parameters, never replace or inherit from each other. Points of the
nearest neighbour with N = 2 keep the key they had before targets were stored.

``best_witnesses`` applies inheritance: a model with ``H' <= H`` heads of key rank ``r' <= r``
is also a model with ``H`` heads of rank ``r`` (the extra heads get ``M_h = 0``), so the best
witness at ``(d, r, H)`` is the smallest interval upper end among those points of the same
task.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.verifiers.store import Store

REQUIRED: tuple[str, ...] = ("d", "r", "heads", "certified", "best_error", "best_ci", "method")
COLUMNS: tuple[str, ...] = ("key", "d", "r", "heads", "bound", "certified", "best_error",
                            "best_lo", "best_hi", "method", "source", "payload", "created")


NEAREST = "nearest"  # the task of the certified sandwich: the nearest neighbour, N = 2, D_2


def point_task(p: Mapping[str, Any]) -> str:
    """What a point's errors are measured against: ``nearest`` (N = 2 on ``D_2``), or its
    ``target``'s name with its parameters (``soft-nearest(beta=4)``), with ``, N=..`` where
    ``N`` is not 2."""
    t = p.get("target")
    name = NEAREST
    if isinstance(t, Mapping) and str(t.get("name", NEAREST)) != NEAREST:
        params = ", ".join(f"{k}={v}" for k, v in sorted((t.get("params") or {}).items()))
        name = f"{t['name']}({params})" if params else str(t["name"])
    N = int(p.get("N", 2))
    return name if N == 2 else f"{name}, N={N}"


def _row(p: Mapping[str, Any], source: str, now: float) -> tuple[Any, ...]:
    missing = [k for k in REQUIRED if k not in p]
    if missing:
        raise ValueError(f"sandwich point must hold {', '.join(REQUIRED)} (missing "
                         f"{', '.join(missing)})")
    lo, hi = (float(x) for x in p["best_ci"])
    numbers = (float(p["certified"]), float(p["best_error"]), lo, hi)
    if not all(math.isfinite(x) for x in numbers):
        raise ValueError(f"sandwich point must hold finite numbers (got {numbers})")
    payload = json.dumps(dict(p), sort_keys=True, default=str, allow_nan=False)
    bound = str(p.get("bound", "certified"))
    task = point_task(p)
    ident = json.dumps([int(p["d"]), int(p["r"]), int(p["heads"]), bound, *numbers,
                        str(p["method"]), *([task] if task != NEAREST else [])])
    key = hashlib.sha256(ident.encode()).hexdigest()
    return (key, int(p["d"]), int(p["r"]), int(p["heads"]), bound, *numbers, str(p["method"]),
            source, payload, now)


def write_points(store: Store, points: Iterable[Mapping[str, Any]], source: str) -> int:
    """Store ``points`` (sandwich records) in one transaction; a measurement already stored
    (same point, bound, numbers and method) is left alone. ``source`` names the writer. The
    count written."""
    now = time.time()
    rows = [_row(p, source, now) for p in points]
    if not rows:
        return 0
    with store.con:
        cur = store.con.executemany(
            f"INSERT OR IGNORE INTO sandwich_points ({','.join(COLUMNS)}) "
            f"VALUES ({','.join('?' * len(COLUMNS))})", rows)
    return cur.rowcount


def read_points(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every stored point, whatever its lower side (``bound``: ``certified`` or the bound
    given), oldest first (the JSON record, with ``bound``, ``source`` and ``created``); none
    for a store of schema version 1. Writes nothing."""
    with Store(path, readonly=True) as st:
        tables = {r[0] for r in st.con.execute("SELECT name FROM sqlite_master")}
        if "sandwich_points" not in tables:
            return []
        rows = st.con.execute("SELECT payload, bound, source, created FROM sandwich_points "
                              "ORDER BY created, key").fetchall()
    out = []
    for payload, bound, source, created in rows:
        try:
            rec = json.loads(payload)
        except (TypeError, ValueError):
            raise ValueError("--db must be an undamaged workbench results store (a "
                             "sandwich_points.payload cell is not JSON)") from None
        out.append({**rec, "bound": bound or "certified", "source": source, "created": created})
    return out


@dataclass(frozen=True)
class SandwichCell:
    """The sandwich at one ``(d, r, H)`` for one lower side: ``bound`` (``certified``, or the
    name of the bound given) of value ``bound_value``, the certified bound, and the best
    witness, measured here or inherited from ``inherited_from = (r', H')``."""

    d: int
    r: int
    heads: int
    certified: float
    best_error: float
    best_ci: tuple[float, float]
    method: str
    inherited_from: tuple[int, int] | None
    bound: str = "certified"
    bound_value: float = math.nan  # the lower side's value (the certified bound's by default)
    task: str = NEAREST  # what the errors are measured against (``point_task``)

    @property
    def lower(self) -> float:
        """The lower side drawn: the certified bound, or the value of the bound given."""
        return self.certified if self.bound == "certified" else self.bound_value


def best_witnesses(points: Sequence[Mapping[str, Any]]) -> list[SandwichCell]:
    """One cell per measured ``(task, bound, d, r, H)``, sorted (the nearest neighbour's
    certified bound first): the newest record's lower side, and the witness with the smallest
    interval upper end among every point of the same task and ``d`` with ``r' <= r`` and
    ``H' <= H``, whatever its lower side (ties: the point itself, then the smaller
    ``(r', H')``)."""
    own: dict[tuple[str, int, int, int], Mapping[str, Any]] = {}
    lower: dict[tuple[str, str, int, int, int], tuple[float, float]] = {}
    for p in points:  # oldest first: a later record's bound replaces an earlier one
        k = (point_task(p), int(p["d"]), int(p["r"]), int(p["heads"]))
        bound = str(p.get("bound", "certified"))
        lower[(k[0], bound, k[1], k[2], k[3])] = (float(p["certified"]),
                                        float(p.get("bound_value", p["certified"])))
        if k not in own or float(p["best_ci"][1]) < float(own[k]["best_ci"][1]):
            own[k] = p
    cells = []
    order = sorted(lower, key=lambda b: (b[0] != NEAREST, b[1] != "certified", b))
    for task, bound, d, r, H in order:
        pool = [(float(q["best_ci"][1]), (r2, H2) != (r, H), r2, H2)
                for (t2, d2, r2, H2), q in own.items()
                if t2 == task and d2 == d and r2 <= r and H2 <= H]
        _, _, r2, H2 = min(pool)
        src = own[(task, d, r2, H2)]
        cert, value = lower[(task, bound, d, r, H)]
        cells.append(SandwichCell(d, r, H, cert, float(src["best_error"]),
                                  (float(src["best_ci"][0]), float(src["best_ci"][1])),
                                  str(src["method"]), None if (r2, H2) == (r, H) else (r2, H2),
                                  bound, value, task))
    return cells
