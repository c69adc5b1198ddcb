"""The results store: one SQLite row per finished run (sweeps of docs/paper.md §7).

- A run's ``key`` is the SHA-256 of its full configuration, the code version and its seed; it
  is the table's primary key, so a run is stored at most once.
- Writes are transactions (``INSERT OR IGNORE`` of a whole group at once): a killed writer
  leaves either the whole group or none of it, and SQLite's journal rolls back the rest when
  the file is next opened.
- ``default_path()`` is under the user's data directory (``$XDG_DATA_HOME`` or
  ``~/.local/share``; ``%LOCALAPPDATA%`` on Windows, ``~/Library/Application Support`` on macOS).
- A store knows itself: ``PRAGMA application_id`` is ``APPLICATION_ID`` and ``PRAGMA
  user_version`` the schema version (``SCHEMA_VERSION``, the tables of ``TABLES``). Every open
  identifies the file first (``identify``) and refuses, before anything is written, another
  program's database, a newer schema version and tables of another layout; a store of the layout
  from before versioning (no marker, only the workbench's tables) is read as it is and stamped
  when it is first opened for writing (docs/sweeps.md, "The store").
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import json
import os
import sqlite3
import sys
from collections.abc import Callable, Iterable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

from workbench.core.safe_files import (
    WriteFailed,
    check_path_text,
    create_new,
    refuse_special,
    write_file,
)

T = TypeVar("T")
APP = "attention-rank-workbench"
COLUMNS: tuple[str, ...] = (
    "key", "preset", "scale", "kind", "model_class", "group_key", "seed", "labels", "config",
    "params_paper", "params_total", "best_loss", "final_loss", "heldout", "heldout_lo",
    "heldout_hi", "heldout_n", "extra", "seconds", "backend", "code_version", "created",
)
APPLICATION_ID = 0x41525742  # "ARWB" in the file's header: a workbench results store
SCHEMA_VERSION = 3  # PRAGMA user_version of the layout below
# every table of a store, with the statement that creates it: the sweep's runs, the runs and
# claim results of ``workbench check`` (schema version 1), and the points of the sandwich
# (schema version 2; ``workbench.verifiers.sandwich_store``) and the witnesses users added
# (schema version 3; ``workbench.verifiers.witness_record``)
TABLES: dict[str, str] = {
    "runs": "CREATE TABLE IF NOT EXISTS runs (key TEXT PRIMARY KEY, preset TEXT NOT NULL, "
    "scale TEXT, kind TEXT, model_class TEXT NOT NULL, group_key TEXT, seed INTEGER, "
    "labels TEXT, config TEXT, params_paper INTEGER, params_total INTEGER, best_loss REAL, "
    "final_loss REAL, heldout REAL, heldout_lo REAL, heldout_hi REAL, heldout_n INTEGER, "
    "extra TEXT, seconds REAL, backend TEXT, code_version TEXT, created REAL)",
    "check_runs": "CREATE TABLE IF NOT EXISTS check_runs (id INTEGER PRIMARY KEY, started REAL, "
    "scale TEXT, seed INTEGER, device TEXT, summary TEXT)",
    "claim_results": "CREATE TABLE IF NOT EXISTS claim_results (run_id INTEGER, "
    "claim_id TEXT, verdict TEXT, seconds REAL, payload TEXT)",
    "sandwich_points": "CREATE TABLE IF NOT EXISTS sandwich_points (key TEXT PRIMARY KEY, "
    "d INTEGER NOT NULL, r INTEGER NOT NULL, heads INTEGER NOT NULL, bound TEXT, "
    "certified REAL NOT NULL, best_error REAL NOT NULL, best_lo REAL NOT NULL, "
    "best_hi REAL NOT NULL, method TEXT, source TEXT, payload TEXT, created REAL)",
    "witnesses": "CREATE TABLE IF NOT EXISTS witnesses (key TEXT PRIMARY KEY, "
    "d INTEGER NOT NULL, r INTEGER NOT NULL, heads INTEGER NOT NULL, method TEXT NOT NULL, "
    "error REAL NOT NULL, lo REAL NOT NULL, hi REAL NOT NULL, payload TEXT NOT NULL, "
    "weights BLOB NOT NULL, created REAL)",
}
# the tables each schema version added: a store of an older version gets the later ones, and its
# new version, when it is first opened for writing (``Store._open_write``)
ADDED_IN: dict[int, tuple[str, ...]] = {
    1: ("runs", "check_runs", "claim_results"), 2: ("sandwich_points",), 3: ("witnesses",),
}
# the sources whose change changes a run's numbers (relative to the package ``workbench``)
_CODE = ("verifiers/train.py", "verifiers/train_checkpoint.py", "verifiers/models.py",
         "verifiers/tasks.py", "verifiers/estimate.py", "verifiers/chunked_ffn.py",
         "verifiers/sweep.py",
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
    root = Path(__file__).parents[1]  # the package workbench
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

    Creates nothing: the folder must exist and be writable, and an existing file must be a
    workbench store (``check_database``).
    """
    check_path_text(name, path)
    p = Path(path)
    refuse_special(name, p)
    parent = p.resolve().parent
    if p.is_dir() or not parent.is_dir() or not os.access(parent, os.W_OK):
        raise ValueError(f"{name} must be a file in an existing, writable folder (got {str(p)!r})")
    if p.is_symlink() and not p.exists():
        raise ValueError(f"{name} must be a results file or a new name, not a link to nothing "
                         f"(got {str(p)!r})")
    if p.exists():
        if not os.access(p, os.W_OK):
            raise ValueError(f"{name} must be a writable file (got {str(p)!r})")
        check_database(p, name)
    return p


def check_database(path: str | os.PathLike[str], name: str = "--db") -> Path:
    """Fail (``ValueError`` naming ``name``) unless ``path`` is an existing workbench store
    (``identify``); writes nothing."""
    check_path_text(name, path)
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{name} must be an existing results file (got {str(p)!r})")
    con = _connect(p, name)
    try:
        _guarded(lambda: identify(con, name, str(p)), name, p)
    finally:
        con.close()
    return p


def _connect(p: Path, name: str, create: bool = False) -> sqlite3.Connection:
    """A connection to the file ``p`` that never creates it unless ``create``. It may write
    (a killed writer's journal is rolled back when the file is first read), but the workbench
    writes only through ``Store``."""
    uri = f"{p.resolve().as_uri()}?mode={'rwc' if create else 'rw'}"
    try:
        return sqlite3.connect(uri, uri=True, timeout=30.0)
    except sqlite3.DatabaseError as e:
        raise ValueError(f"{name} must be an SQLite database file ({str(p)!r}: {e})") from None


def _guarded(read: Callable[[], T], name: str, p: Path) -> T:
    """``read()``, with SQLite's errors as one-line ``ValueError`` naming ``name``: a full disk
    or a file it may not write is a ``WriteFailed`` (the transaction was rolled back, so the
    store holds what it held)."""
    try:
        return read()
    except sqlite3.DatabaseError as e:
        why = str(e)
        if isinstance(e, sqlite3.OperationalError) and ("full" in why or "readonly" in why
                                                        or "disk I/O" in why):
            raise WriteFailed(name, p, "the disk is full" if "full" in why else why) from None
        raise ValueError(f"{name} must be an SQLite database file ({str(p)!r}: {e})") from None


def _create(p: Path, name: str) -> None:
    """Make a new, empty store at ``p`` whole or not at all (``create_new``): its tables and
    marker are written into a temporary file beside it, then linked into place. A full disk or
    a folder it may not write leaves nothing behind."""

    def fill(tmp: str) -> None:
        con = sqlite3.connect(tmp)
        try:
            for sql in TABLES.values():
                con.execute(sql)
            con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            con.commit()
        except sqlite3.OperationalError as e:
            raise WriteFailed(name, p, "the disk is full" if "full" in str(e) else str(e)) \
                from None
        finally:
            con.close()

    create_new(p, fill, name)


def _layout(con: sqlite3.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Each table's columns: ``(name, declared type, not null, primary key)``."""
    tables = [r[0] for r in con.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    return {t: [tuple(c) for c in con.execute(
        'SELECT name, type, "notnull", pk FROM pragma_table_info(?)', (t,))] for t in tables}


@functools.cache
def _expected_layout() -> dict[str, list[tuple[Any, ...]]]:
    con = sqlite3.connect(":memory:")
    try:
        for sql in TABLES.values():
            con.execute(sql)
        return _layout(con)
    finally:
        con.close()


def identify(con: sqlite3.Connection, name: str = "--db", shown: str = "") -> int:
    """The schema version of the store behind ``con``: ``SCHEMA_VERSION``, or 0 for an empty
    database or a store of the layout from before versioning (no marker, nothing but the
    workbench's tables). Reads only. Anything else raises a one-line ``ValueError`` naming
    ``name``: another program's database (another application id, or other tables or objects),
    an unknown (newer) schema version, or a workbench table of another layout."""
    where = repr(shown)
    app = int(con.execute("PRAGMA application_id").fetchone()[0])
    version = int(con.execute("PRAGMA user_version").fetchone()[0])
    ours = app == APPLICATION_ID
    if not ours and (app != 0 or version != 0):
        raise ValueError(f"{name} must be a workbench results store ({where} is another "
                         f"program's SQLite database: application_id {app}, user_version "
                         f"{version})")
    if ours and not 1 <= version <= SCHEMA_VERSION:
        known = "1" if SCHEMA_VERSION == 1 else f"1 to {SCHEMA_VERSION}"
        newer = ": written by a newer workbench" if version > SCHEMA_VERSION else ""
        raise ValueError(f"{name} must be a results store of schema version {known} ({where} "
                         f"has schema version {version}{newer})")
    want, have = _expected_layout(), _layout(con)
    objects = con.execute("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
    wrong = [f"{kind} {obj!r}" for kind, obj in objects if kind != "table" or obj not in want]
    wrong += [f"table {t!r} of another layout" for t in have if t in want and have[t] != want[t]]
    if wrong:
        what = "a damaged workbench store" if ours else "another SQLite database"
        more = f" and {len(wrong) - 3} more" if len(wrong) > 3 else ""
        raise ValueError(f"{name} must be a workbench results store ({where} is {what}: it "
                         f"holds {', '.join(wrong[:3])}{more})")
    check_sound(con, name, shown)
    return version


def check_sound(con: sqlite3.Connection, name: str = "--db", shown: str = "") -> None:
    """A one-line ``ValueError`` naming ``name`` unless the store behind ``con`` passes
    SQLite's ``PRAGMA quick_check`` (its pages and records are whole) and every text cell of
    the workbench's tables decodes as UTF-8, so a damaged store is refused before anything is
    read from it or written into it. Reads only."""
    found = con.execute("PRAGMA quick_check(1)").fetchone()
    if found is None or found[0] != "ok":
        why = " ".join(str(found[0] if found else "no answer").replace(
            "*** in database main ***", "").split())[:80]
        raise ValueError(f"{name} must be an undamaged workbench results store ({shown!r} fails "
                         f"SQLite's quick_check: {why})")
    have = _layout(con)
    for table, cols in have.items():
        for col in (c[0] for c in cols if str(c[1]).upper() == "TEXT"):
            try:
                for _ in con.execute(f'SELECT "{col}" FROM "{table}"'):
                    pass
            except sqlite3.OperationalError as e:
                if "decode" not in str(e):
                    raise
                raise ValueError(f"{name} must be an undamaged workbench results store "
                                 f"({shown!r} has a {table}.{col} cell that is not UTF-8 text)"
                                 ) from None


def migrate(con: sqlite3.Connection, found: int) -> None:
    """Bring a store of schema version ``found`` (0: empty, or from before versioning) to the
    tables of ``SCHEMA_VERSION``: create the tables of every later version (``ADDED_IN``), and
    any table of an earlier one that is missing. The caller stamps the version in the same
    transaction."""
    for version in sorted(ADDED_IN):
        for table in ADDED_IN[version]:
            con.execute(TABLES[table])


class Store:
    """The SQLite results store (``TABLES``); usable as a context manager.

    Opening identifies the file (``identify``) and refuses anything but a workbench store of a
    known schema version before writing. For writing (the default) the file is created if
    missing, its tables are created and an empty file or a store from before versioning gets
    the marker and ``SCHEMA_VERSION``, all in one transaction; ``readonly=True`` writes nothing
    (a store without a ``runs`` table then has no runs). Errors name ``name``.
    """

    def __init__(self, path: str | os.PathLike[str], *, readonly: bool = False,
                 name: str = "--db") -> None:
        self.path, self.name = Path(path), name
        if readonly and not self.path.is_file():
            raise ValueError(f"{name} must be an existing results file (got {str(self.path)!r})")
        if not readonly:
            check_writable(self.path, name)
            if not os.path.lexists(self.path):
                _create(self.path, name)
        self.con = _connect(self.path, name, create=not readonly)
        self.con.row_factory = sqlite3.Row
        try:
            self.version = _guarded(self._open_read if readonly else self._open_write, name,
                                    self.path)
        except BaseException:
            self.con.close()
            raise
        self.has_runs = "runs" in _layout(self.con)

    def _open_read(self) -> int:
        return identify(self.con, self.name, str(self.path))

    def _open_write(self) -> int:
        self.con.execute("BEGIN IMMEDIATE")  # nobody writes between the check and the stamp
        try:
            found = identify(self.con, self.name, str(self.path))
            migrate(self.con, found)
            if found < SCHEMA_VERSION:
                self.con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                self.con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            self.con.commit()
        except BaseException:
            self.con.rollback()
            raise
        return SCHEMA_VERSION

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
        for i in range(0, len(ks) if self.has_runs else 0, 500):
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

        def insert() -> int:
            with self.con:
                return self.con.executemany(
                    f"INSERT OR IGNORE INTO runs ({cols}) VALUES "
                    f"({','.join('?' * len(COLUMNS))})", vals).rowcount

        return _guarded(insert, self.name, self.path)

    def record_check(self, started: float, head: dict[str, Any], summary: dict[str, Any],
                     claims: Sequence[dict[str, Any]]) -> int:
        """Store one ``workbench check`` run (``head``: scale, seed, device) and its claims'
        JSON records in one transaction, so nothing is half-written; the run's id."""

        def insert() -> int:
            with self.con:
                cur = self.con.execute(
                    "INSERT INTO check_runs (started, scale, seed, device, summary) "
                    "VALUES (?,?,?,?,?)",
                    (started, head["scale"], head["seed"], head["device"], json.dumps(summary)))
                self.con.executemany(
                    "INSERT INTO claim_results VALUES (?,?,?,?,?)",
                    [(cur.lastrowid, c["id"], c["verdict"], c["seconds"], json.dumps(c))
                     for c in claims])
            return int(cur.lastrowid or 0)

        return _guarded(insert, self.name, self.path)

    def rows(self, preset: str | None = None, scale: str | None = None,
             keys: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """Stored runs (JSON columns decoded), optionally filtered, oldest first."""
        if not self.has_runs:
            return []
        q, args = "SELECT * FROM runs WHERE 1=1", list[str]()
        if preset is not None:
            q, args = q + " AND preset = ?", [*args, preset]
        if scale is not None:
            q, args = q + " AND scale = ?", [*args, scale]
        out = [_decode(dict(r), self.name) for r in
               self.con.execute(q + " ORDER BY created, key", args)]
        if keys is not None:
            wanted = set(keys)
            out = [r for r in out if r["key"] in wanted]
        return out

    def count(self) -> int:
        if not self.has_runs:
            return 0
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
    """The latest ``workbench check`` run in the store at ``path`` (tables ``check_runs``
    and ``claim_results``, written by ``Store.record_check``), or None if there is none, or if
    the file is no workbench store. Claim ids renamed since (``RENAMED_CLAIMS``) come back under
    their current ids. Writes nothing."""
    try:
        st = Store(path, readonly=True)
    except ValueError:  # no such file, or not a workbench store
        return None
    try:
        tables = _layout(st.con)
        if "check_runs" not in tables or "claim_results" not in tables:
            return None
        run = st.con.execute("SELECT id, started, scale, seed, device, summary FROM check_runs "
                             "ORDER BY id DESC LIMIT 1").fetchone()
        if run is None:
            return None
        claims = [_current_ids(_json(p, "claim_results.payload", st.name)) for (p,) in
                  st.con.execute("SELECT payload FROM claim_results WHERE run_id = ? "
                                 "ORDER BY rowid", (run[0],))]
        summary = _json(run[5], "check_runs.summary", st.name)
    finally:
        st.close()
    return {"id": run[0], "started": run[1], "scale": run[2], "seed": run[3], "device": run[4],
            "summary": summary, "claims": claims}


def _json(text: Any, column: str, name: str) -> Any:
    """A JSON cell of the store, decoded; a cell that is not JSON is a damaged store."""
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an undamaged workbench results store (a {column} "
                         f"cell is not JSON: {str(text)[:40]!r})") from None


def _cell(v: Any) -> Any:
    return json.dumps(v, sort_keys=True, default=str) if isinstance(v, (dict, list)) else v


def _decode(row: dict[str, Any], name: str = "--db") -> dict[str, Any]:
    for c in ("labels", "config", "extra"):
        if isinstance(row.get(c), str):
            row[c] = _json(row[c], f"runs.{c}", name)
    return row


EXPORT_FORMATS: tuple[str, ...] = (".csv", ".parquet")


def check_export_path(path: str | os.PathLike[str]) -> Path:
    """Fail unless ``path`` ends in ``.csv`` or ``.parquet`` (pyarrow installed) in a writable
    existing folder. Writes nothing."""
    p = Path(path)
    if p.suffix.lower() not in EXPORT_FORMATS or p.name.startswith(".") or p.is_dir():
        raise ValueError(f"--export must be a file name ending in .csv or .parquet "
                         f"(got {str(p)!r})")
    refuse_special("--export", p)
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
    """Write ``rows`` (JSON columns as JSON text) to a CSV or Parquet file, atomically and
    never through a link (``workbench.core.safe_files``); errors name ``--export``."""
    p = check_export_path(path)
    flat = [{c: _cell(r.get(c)) for c in COLUMNS} for r in rows]

    def write(fh: Any) -> None:
        if p.suffix.lower() == ".csv":
            text = io.TextIOWrapper(fh, newline="", encoding="utf-8")
            w = csv.DictWriter(text, fieldnames=list(COLUMNS))
            w.writeheader()
            w.writerows(flat)
            text.flush()
            text.detach()
        else:
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pylist(flat), fh)

    return write_file(p, write, "--export")
