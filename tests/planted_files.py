"""Files a user could hand the workbench, shared by the tests of the file checks
(docs/sweeps.md, "Files the workbench reads"): a pickle that runs code when it is unpickled, and
SQLite files built statement by statement, among them a store of the layout from before schema
versioning."""

from __future__ import annotations

import builtins
import sqlite3
from pathlib import Path
from typing import Any

# The store layout from before schema versioning, as the workbench created it then (the CREATE
# statements of workbench/verifiers/store.py and workbench/commands/check.py of that time):
# data, not
# the current schema, and no marker.
PRE_VERSIONING_SQL = (
    "CREATE TABLE IF NOT EXISTS runs (key TEXT PRIMARY KEY, preset TEXT NOT NULL, scale TEXT, "
    "kind TEXT, model_class TEXT NOT NULL, group_key TEXT, seed INTEGER, labels TEXT, "
    "config TEXT, params_paper INTEGER, params_total INTEGER, best_loss REAL, final_loss REAL, "
    "heldout REAL, heldout_lo REAL, heldout_hi REAL, heldout_n INTEGER, extra TEXT, "
    "seconds REAL, backend TEXT, code_version TEXT, created REAL)",
    "CREATE TABLE IF NOT EXISTS check_runs (id INTEGER PRIMARY KEY, "
    "started REAL, scale TEXT, seed INTEGER, device TEXT, summary TEXT)",
    "CREATE TABLE IF NOT EXISTS claim_results (run_id INTEGER, claim_id TEXT, "
    "verdict TEXT, seconds REAL, payload TEXT)",
)


class RunsCode:
    """Unpickled, it writes ``marker``: what a shared file could do to whoever loads it."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return builtins.exec, (f"open({str(self.marker)!r}, 'w').write('ran')",)


def sqlite_file(path: Path, *statements: str | tuple[str, tuple[Any, ...]]) -> Path:
    """An SQLite file made by ``statements`` (SQL, or SQL with its parameters), committed."""
    con = sqlite3.connect(path)
    try:
        for s in statements:
            sql, args = s if isinstance(s, tuple) else (s, ())
            con.execute(sql, args)
        con.commit()
    finally:
        con.close()
    return path


def store_marker(path: Path) -> tuple[int, int]:
    """``(PRAGMA application_id, PRAGMA user_version)`` of the file at ``path``."""
    con = sqlite3.connect(path)
    try:
        return (con.execute("PRAGMA application_id").fetchone()[0],
                con.execute("PRAGMA user_version").fetchone()[0])
    finally:
        con.close()
