"""The results store: one SQLite row per finished run (sweeps of docs/paper.md §7).

- A run's ``key`` is the SHA-256 of its full configuration, the code version and its seed; it
  is the table's primary key, so a run is stored at most once.
- Writes are transactions (``INSERT OR IGNORE`` of a whole group at once): a killed writer
  leaves either the whole group or none of it, and SQLite's journal rolls back the rest when
  the file is next opened.
- ``default_path()`` is under the user's data directory (``$XDG_DATA_HOME`` or
  ``~/.local/share``; ``%LOCALAPPDATA%`` on Windows, ``~/Library/Application Support`` on macOS).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import sqlite3
import sys
from collections.abc import Iterable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

APP = "attention-rank-workbench"
COLUMNS: tuple[str, ...] = (
    "key", "preset", "scale", "kind", "model_class", "group_key", "seed", "labels", "config",
    "params_paper", "params_total", "best_loss", "final_loss", "heldout", "heldout_lo",
    "heldout_hi", "heldout_n", "extra", "seconds", "backend", "code_version", "created",
)
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS runs (key TEXT PRIMARY KEY, preset TEXT NOT NULL, scale TEXT, "
    "kind TEXT, model_class TEXT NOT NULL, group_key TEXT, seed INTEGER, labels TEXT, "
    "config TEXT, params_paper INTEGER, params_total INTEGER, best_loss REAL, final_loss REAL, "
    "heldout REAL, heldout_lo REAL, heldout_hi REAL, heldout_n INTEGER, extra TEXT, "
    "seconds REAL, backend TEXT, code_version TEXT, created REAL)"
)
# the sources whose change changes a run's numbers (relative to the package ``workbench``)
_CODE = ("verifiers/train.py", "verifiers/models.py", "verifiers/tasks.py",
         "verifiers/estimate.py", "verifiers/chunked_ffn.py", "verifiers/sweep.py",
         "constructions/random_features.py", "constructions/_kernel_solve.py",
         "core/montecarlo.py", "core/intervals.py")


def default_path() -> Path:
    """``runs.sqlite`` in this package's folder under the user's data directory."""
    if sys.platform.startswith("win"):
        base = Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local"))
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / APP / "runs.sqlite"


def code_version() -> str:
    """The package version plus a digest of the sources that produce a run's numbers."""
    try:
        version = metadata.version(APP)
    except metadata.PackageNotFoundError:
        version = "unknown"
    root = Path(__file__).parents[1]  # the package workbench (verifiers/ is linked into it)
    h = hashlib.sha256()
    for rel in _CODE:
        p = root / rel
        h.update(rel.encode())
        h.update(p.read_bytes() if p.exists() else b"")
    for p in sorted((root / "models").glob("*.py")):
        h.update(p.name.encode() + p.read_bytes())
    return f"{version}+{h.hexdigest()[:12]}"


def run_key(config: dict[str, Any], version: str, seed: int) -> str:
    """SHA-256 of the full configuration, the code version and the seed."""
    blob = json.dumps({"config": config, "code": version, "seed": seed}, sort_keys=True,
                      default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def check_writable(path: str | os.PathLike[str], name: str = "--db") -> Path:
    """Fail (``ValueError`` naming ``name``) unless ``path`` can hold an SQLite store.

    Creates nothing: the folder must exist and be writable, and an existing file must be an
    SQLite database.
    """
    p = Path(path)
    parent = p.resolve().parent
    if p.is_dir() or not parent.is_dir() or not os.access(parent, os.W_OK):
        raise ValueError(f"{name} must be a file in an existing, writable folder (got {str(p)!r})")
    if p.exists():
        if not os.access(p, os.W_OK):
            raise ValueError(f"{name} must be a writable file (got {str(p)!r})")
        check_database(p, name)
    return p


def check_database(path: str | os.PathLike[str], name: str = "--db") -> Path:
    """Fail (``ValueError`` naming ``name``) unless ``path`` is an existing SQLite file."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{name} must be an existing results file (got {str(p)!r})")
    try:
        con = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
        try:
            con.execute("PRAGMA schema_version").fetchone()
        finally:
            con.close()
    except sqlite3.DatabaseError as e:
        raise ValueError(f"{name} must be an SQLite database file ({str(p)!r}: {e})") from None
    return p


class Store:
    """The SQLite results store (``runs`` table); usable as a context manager."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.con = sqlite3.connect(self.path, timeout=30.0)
        self.con.row_factory = sqlite3.Row
        with self.con:
            self.con.execute(_SCHEMA)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.con.close()

    def done_keys(self, keys: Iterable[str]) -> set[str]:
        """The subset of ``keys`` already stored."""
        ks = list(keys)
        out: set[str] = set()
        for i in range(0, len(ks), 500):
            part = ks[i : i + 500]
            q = f"SELECT key FROM runs WHERE key IN ({','.join('?' * len(part))})"
            out |= {r[0] for r in self.con.execute(q, part)}
        return out

    def write(self, rows: Sequence[dict[str, Any]]) -> int:
        """Insert ``rows`` in one transaction (rows already stored are left alone); the count."""
        if not rows:
            return 0
        cols = ",".join(COLUMNS)
        vals = [tuple(_cell(r.get(c)) for c in COLUMNS) for r in rows]
        with self.con:
            cur = self.con.executemany(
                f"INSERT OR IGNORE INTO runs ({cols}) VALUES ({','.join('?' * len(COLUMNS))})",
                vals)
        return cur.rowcount

    def rows(self, preset: str | None = None, scale: str | None = None,
             keys: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """Stored runs (JSON columns decoded), optionally filtered, oldest first."""
        q, args = "SELECT * FROM runs WHERE 1=1", list[str]()
        if preset is not None:
            q, args = q + " AND preset = ?", [*args, preset]
        if scale is not None:
            q, args = q + " AND scale = ?", [*args, scale]
        out = [_decode(dict(r)) for r in self.con.execute(q + " ORDER BY created, key", args)]
        if keys is not None:
            wanted = set(keys)
            out = [r for r in out if r["key"] in wanted]
        return out

    def count(self) -> int:
        return int(self.con.execute("SELECT COUNT(*) FROM runs").fetchone()[0])

    def integrity(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` (``'ok'`` for a sound file)."""
        return str(self.con.execute("PRAGMA integrity_check").fetchone()[0])


# Claim ids renamed since a store could have recorded them: old id -> current id. The one place
# old ids are still understood: ``last_check`` reads an old store's claims under their current
# ids (the claims graph and the report look verdicts up by id). Nothing else accepts them.
RENAMED_CLAIMS: dict[str, str] = {
    "thm2.certified_bound": "thm2.harmonic_bound",  # it checks the harmonic count alone
}


def _current_ids(claim: dict[str, Any]) -> dict[str, Any]:
    """A stored claim result with its id and ``depends_on`` under the current claim ids."""
    claim["id"] = RENAMED_CLAIMS.get(claim["id"], claim["id"])
    if isinstance(claim.get("depends_on"), list):
        claim["depends_on"] = [RENAMED_CLAIMS.get(c, c) for c in claim["depends_on"]]
    return claim


def last_check(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The latest ``workbench check --db`` run in the file at ``path`` (tables ``check_runs`` and
    ``claim_results``, written by ``workbench.commands.check``), or None if there is none. Claim
    ids renamed since (``RENAMED_CLAIMS``) come back under their current ids."""
    if not Path(path).is_file():
        return None
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        run = con.execute("SELECT id, started, scale, seed, device, summary FROM check_runs "
                          "ORDER BY id DESC LIMIT 1").fetchone()
        if run is None:
            return None
        claims = [_current_ids(json.loads(p)) for (p,) in con.execute(
            "SELECT payload FROM claim_results WHERE run_id = ? ORDER BY rowid", (run[0],))]
    except sqlite3.DatabaseError:  # no check tables in this file, or not a database
        return None
    finally:
        con.close()
    return {"id": run[0], "started": run[1], "scale": run[2], "seed": run[3], "device": run[4],
            "summary": json.loads(run[5]), "claims": claims}


def _cell(v: Any) -> Any:
    return json.dumps(v, sort_keys=True, default=str) if isinstance(v, (dict, list)) else v


def _decode(row: dict[str, Any]) -> dict[str, Any]:
    for c in ("labels", "config", "extra"):
        if isinstance(row.get(c), str):
            row[c] = json.loads(row[c])
    return row


EXPORT_FORMATS: tuple[str, ...] = (".csv", ".parquet")


def check_export_path(path: str | os.PathLike[str]) -> Path:
    """Fail unless ``path`` ends in ``.csv`` or ``.parquet`` (pyarrow installed) in a writable
    existing folder. Writes nothing."""
    p = Path(path)
    if p.suffix.lower() not in EXPORT_FORMATS or p.name.startswith(".") or p.is_dir():
        raise ValueError(f"--export must be a file name ending in .csv or .parquet "
                         f"(got {str(p)!r})")
    parent = p.resolve().parent
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise ValueError(f"--export must be a file in an existing, writable folder "
                         f"(got {str(p)!r})")
    if p.suffix.lower() == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ValueError("--export must end in .csv: .parquet needs pyarrow "
                             "(pip install pyarrow)") from None
    return p


def export(rows: Sequence[dict[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Write ``rows`` (JSON columns as JSON text) to a CSV or Parquet file, atomically."""
    p = check_export_path(path)
    flat = [{c: _cell(r.get(c)) for c in COLUMNS} for r in rows]
    tmp = p.with_name(p.name + ".tmp")
    try:
        if p.suffix.lower() == ".csv":
            with open(tmp, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(COLUMNS))
                w.writeheader()
                w.writerows(flat)
        else:
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pylist(flat), tmp)
        os.replace(tmp, p)
    finally:
        if tmp.exists():
            tmp.unlink()
    return p
