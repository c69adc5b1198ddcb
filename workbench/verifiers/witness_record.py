"""The record of best-known witnesses for the sandwich (docs/derivations/sandwich.md, "The record
of witnesses"): on ``D_2`` (N = 2, hardmax) and, keyed by their setting
(``workbench.constructions.witness_setting``: N keys, target and its parameters), on ``D_N``
for N >= 3 and for soft targets (docs/derivations/witnesses_beyond_two.md).

The shipped record is package data, ``RECORD_DIR``: ``record.json`` lists every entry (its
``(d, r, H)``, method, error with its interval, the evaluation stream and sample count it was
measured on, the seed, budget and code that made it) and names its weights, a compressed
``.npz`` of numbers in the layout of ``workbench.constructions.optimized.Witness`` (trained
weights as ``state.*`` arrays; read with ``allow_pickle=False`` only). Witnesses a user adds
(``workbench witness add``) go to a results store's ``witnesses`` table, weights included.

:func:`lookup` applies the inheritance of ``workbench.verifiers.sandwich_store``: a model with
``H' <= H`` heads of key-rank ``r' <= r`` is one with ``H`` heads of rank ``r`` (extra heads with
``M_h = 0``), so the best known at ``(d, r, H)`` is the entry of least interval upper end among
those. Nothing here imports torch.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from workbench.constructions.witness_setting import NEAREST_2, Setting
from workbench.core.safe_files import reading
from workbench.verifiers.store import Store

RECORD_DIR = Path(__file__).with_name("witness_record")
RECORD_FILE = RECORD_DIR / "record.json"
INTERVALS = ("normal", "bernstein", "exact")  # how an entry's interval was made
FIELDS = ("d", "r", "heads", "method", "error", "ci", "interval", "n_eval", "stream", "file")


@dataclass(frozen=True)
class Entry:
    """One witness of the record: ``ci`` holds its error at 99.9% (``interval``: a CLT
    interval, an empirical-Bernstein one, or an exact value within 1e-9) on ``n_eval`` samples
    of the evaluation stream ``stream``; ``file`` names its weights (in ``RECORD_DIR``, or the
    store's key for an added one)."""

    d: int
    r: int
    heads: int
    method: str
    error: float
    ci: tuple[float, float]
    interval: str
    n_eval: int
    stream: int
    file: str
    seed: int | None = None
    budget: dict[str, Any] = field(default_factory=dict)
    code: str = ""
    source: str = "record"  # the shipped record, or "store" (added by workbench witness add)
    setting: Setting = NEAREST_2  # N keys and the target (absent in the JSON for the default)

    @property
    def point(self) -> tuple[int, int, int]:
        return (self.d, self.r, self.heads)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ci"] = list(self.ci)
        out.pop("setting")
        if not self.setting.is_default:
            out["setting"] = self.setting.to_dict()
        return out


def _entry(raw: dict[str, Any], where: str, source: str) -> Entry:
    missing = [k for k in FIELDS if k not in raw]
    if missing:
        raise ValueError(f"{where} must list witnesses with {', '.join(FIELDS)} (missing "
                         f"{', '.join(missing)})")
    if raw["interval"] not in INTERVALS:
        raise ValueError(f"{where} names the interval {raw['interval']!r}, not one of "
                         f"{', '.join(INTERVALS)}")
    lo, hi = (float(x) for x in raw["ci"])
    setting = NEAREST_2 if raw.get("setting") is None else \
        Setting.from_dict(raw["setting"], f"{where}'s setting")
    return Entry(int(raw["d"]), int(raw["r"]), int(raw["heads"]), str(raw["method"]),
                 float(raw["error"]), (lo, hi), str(raw["interval"]), int(raw["n_eval"]),
                 int(raw["stream"]), str(raw["file"]), raw.get("seed"), raw.get("budget") or {},
                 str(raw.get("code", "")), source, setting)


def read_record(path: str | os.PathLike[str] = RECORD_FILE) -> list[Entry]:
    """The shipped record's entries (none when it has not been built)."""
    path = Path(path)
    if not path.exists():
        return []
    with reading("the witness record", path, "the record of witnesses the workbench ships"):
        data = json.loads(path.read_text())
        return [_entry(e, str(path), "record") for e in data["witnesses"]]


def record_grid(path: str | os.PathLike[str] = RECORD_FILE) -> list[tuple[int, int, int]]:
    """The grid points the record covers (``benchmarks/sandwich.py``'s grid)."""
    path = Path(path)
    if not path.exists():
        return []
    with reading("the witness record", path, "the record of witnesses the workbench ships"):
        return [(int(d), int(r), int(h)) for d, r, h in json.loads(path.read_text())["grid"]]


def lookup(entries: Sequence[Entry], d: int, r: int, H: int,
           setting: Setting = NEAREST_2) -> Entry | None:
    """The best known witness at ``(d, r, H)`` in ``setting``: least interval upper end among
    the entries of the same ``d`` and setting with ``r' <= r`` and ``H' <= H`` (ties: the
    point itself, then smaller)."""
    pool = [e for e in entries if e.d == d and e.r <= r and e.heads <= H
            and e.setting == setting]
    if not pool:
        return None
    return min(pool, key=lambda e: (e.ci[1], e.point != (d, r, H), e.r, e.heads))


def weights_bytes(entry: Entry, db: str | os.PathLike[str] | None = None) -> bytes:
    """The ``.npz`` bytes of an entry's weights: the record's file, or the store's blob."""
    if entry.source == "record":
        return (RECORD_DIR / entry.file).read_bytes()
    if db is None:
        raise ValueError(f"--db must name the store that holds the witness {entry.file}")
    with Store(db, readonly=True) as st:
        row = st.con.execute("SELECT weights FROM witnesses WHERE key = ?",
                             (entry.file,)).fetchone()
    if row is None:
        raise ValueError(f"--db holds no witness {entry.file}")
    return bytes(row[0])


def read_store(db: str | os.PathLike[str]) -> list[Entry]:
    """The witnesses added to the results store ``db`` (none for a store without the table)."""
    with Store(db, readonly=True) as st:
        tables = {r[0] for r in st.con.execute("SELECT name FROM sqlite_master")}
        if "witnesses" not in tables:
            return []
        rows = st.con.execute("SELECT payload FROM witnesses ORDER BY created, key").fetchall()
    with reading("--db", db, "an undamaged workbench results store (its witnesses table)"):
        return [_entry(json.loads(p), "--db", "store") for (p,) in rows]


def write_store(db: str | os.PathLike[str], entry: Entry, weights: bytes) -> Entry:
    """Add ``entry`` with its ``.npz`` ``weights`` to the store ``db`` (one transaction; the key
    is the weights' SHA-256, so a witness is stored once); the entry as stored."""
    key = hashlib.sha256(weights).hexdigest()
    stored = replace(entry, file=key, source="store")
    payload = json.dumps(stored.to_dict(), sort_keys=True, allow_nan=False)
    with Store(db) as st, st.con:
        st.con.execute(
            "INSERT OR IGNORE INTO witnesses (key, d, r, heads, method, error, lo, hi, payload, "
            "weights, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (key, entry.d, entry.r, entry.heads, entry.method, entry.error, *entry.ci, payload,
             weights, time.time()))
    return stored


def npz_bytes(arrays: dict[str, Any]) -> bytes:
    """``arrays`` as compressed ``.npz`` bytes."""
    import numpy as np

    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def save_state(state: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write a state dict as a compressed ``.npz`` of plain arrays (read back without pickle)."""
    from workbench.core.safe_files import write_file

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = npz_bytes({k: v.detach().cpu().numpy() for k, v in state.items()})
    return write_file(path, lambda fh: fh.write(data))


def load_state(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A state dict saved by :func:`save_state` (numbers only: ``allow_pickle=False``)."""
    import numpy as np
    import torch

    with np.load(path, allow_pickle=False) as z:
        return {k: torch.from_numpy(np.array(z[k])) for k in z.files}
