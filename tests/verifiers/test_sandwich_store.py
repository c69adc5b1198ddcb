"""The store's sandwich points (``workbench/verifiers/sandwich_store.py``) and the schema-version-2
migration of ``workbench/verifiers/store.py``."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from workbench.testing import edited, plant, replaced
from workbench.verifiers.sandwich_store import best_witnesses, read_points, write_points
from workbench.verifiers.store import APPLICATION_ID, SCHEMA_VERSION, Store

# schema version 1 as it was written: the three tables, the marker, user_version 1
V1_TABLES = (
    "CREATE TABLE runs (key TEXT PRIMARY KEY, preset TEXT NOT NULL, scale TEXT, kind TEXT, "
    "model_class TEXT NOT NULL, group_key TEXT, seed INTEGER, labels TEXT, config TEXT, "
    "params_paper INTEGER, params_total INTEGER, best_loss REAL, final_loss REAL, heldout REAL, "
    "heldout_lo REAL, heldout_hi REAL, heldout_n INTEGER, extra TEXT, seconds REAL, "
    "backend TEXT, code_version TEXT, created REAL)",
    "CREATE TABLE check_runs (id INTEGER PRIMARY KEY, started REAL, scale TEXT, seed INTEGER, "
    "device TEXT, summary TEXT)",
    "CREATE TABLE claim_results (run_id INTEGER, claim_id TEXT, verdict TEXT, seconds REAL, "
    "payload TEXT)",
)


def _v1_store(path: Path) -> None:
    con = sqlite3.connect(path)
    with con:
        for sql in V1_TABLES:
            con.execute(sql)
        con.execute("INSERT INTO runs (key, preset, model_class, labels) VALUES "
                    "('k1', 'tiny', 'standard', '{\"r\": 1}')")
        con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        con.execute("PRAGMA user_version = 1")
    con.close()


def _version_and_tables(path: Path) -> tuple[int, set[str]]:
    con = sqlite3.connect(path)
    try:
        version = int(con.execute("PRAGMA user_version").fetchone()[0])
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        con.close()
    return version, tables


def _migrates(path: Path) -> None:
    """A v1 store is read as it is, and migrated to the current version (its sandwich points and
    added witnesses) when opened for writing."""
    _v1_store(path)
    before = path.read_bytes()
    assert read_points(path) == [] and path.read_bytes() == before  # reading writes nothing
    with Store(path) as st:
        assert st.version == SCHEMA_VERSION and [r["key"] for r in st.rows()] == ["k1"]
        write_points(st, [_pt(4, 1, 1, 0.40)], "test")
    version, tables = _version_and_tables(path)
    assert version == SCHEMA_VERSION and {"sandwich_points", "witnesses"} <= tables
    assert [(p["d"], p["r"], p["heads"]) for p in read_points(path)] == [(4, 1, 1)]


def test_a_version_1_store_migrates_to_the_current_version(tmp_path: Path) -> None:
    _migrates(tmp_path / "v1.sqlite")


def test_the_migration_test_fails_without_the_migration(tmp_path: Path) -> None:
    with plant("workbench.verifiers.store:migrate", replaced(lambda con, found: None)):
        with pytest.raises((AssertionError, sqlite3.OperationalError)):
            _migrates(tmp_path / "v1.sqlite")


def _pt(d: int, r: int, H: int, hi: float, **extra: Any) -> dict[str, Any]:
    return {"d": d, "r": r, "heads": H, "certified": 0.1, "best_error": hi - 0.01,
            "best_ci": [hi - 0.02, hi], "method": f"m{r}{H}", **extra}


# (r, H) -> the upper CI end of the witness measured there, at d = 4
MEASURED = {(1, 1): 0.40, (1, 2): 0.30, (1, 4): 0.35, (2, 1): 0.38, (2, 2): 0.32, (2, 4): 0.20}
# by hand: (1, 4) and (2, 2) do worse than (1, 2), which they contain; every other point is best
INHERITED = {(1, 4): (1, 2), (2, 2): (1, 2)}


def _inheritance_is_right() -> None:
    cells = best_witnesses([_pt(4, r, H, hi) for (r, H), hi in MEASURED.items()])
    assert [(c.r, c.heads) for c in cells] == sorted(MEASURED)
    for c in cells:
        src = INHERITED.get((c.r, c.heads))
        assert c.inherited_from == src
        assert c.best_ci[1] == MEASURED[src or (c.r, c.heads)]
        r, H = src or (c.r, c.heads)
        assert c.method == f"m{r}{H}"


def test_best_witnesses_inherit_from_fewer_heads_and_lower_rank() -> None:
    _inheritance_is_right()


def test_the_inheritance_test_fails_on_a_planted_fault() -> None:
    with plant("workbench.verifiers.sandwich_store:best_witnesses",
               edited("H2 <= H]", "H2 == H]")):
        with pytest.raises(AssertionError):
            _inheritance_is_right()


def test_points_are_read_tolerantly_and_stored_once(tmp_path: Path) -> None:
    """Extra fields ride along in the record; a measurement written twice is stored once; a
    record lacking a required field is refused, naming the fields."""
    path = tmp_path / "s.sqlite"
    with Store(path) as st:
        new = _pt(3, 1, 2, 0.3, best={"from": [3, 1, 1]}, some_future_field=[1, 2])
        assert write_points(st, [new, _pt(3, 1, 1, 0.4)], "test") == 2
        assert write_points(st, [_pt(3, 1, 1, 0.4, ratio=2.0)], "test") == 0
        with pytest.raises(ValueError, match="missing best_ci, method"):
            write_points(st, [{"d": 3, "r": 1, "heads": 1, "certified": 0.1,
                               "best_error": 0.2}], "test")
        other = _pt(3, 1, 4, 0.1, bound="optimistic")  # another lower side: read, and named
        write_points(st, [other], "test")
    pts = read_points(path)
    assert sorted((p["heads"], p["bound"]) for p in pts) == [(1, "certified"), (2, "certified"),
                                                             (4, "optimistic")]
    assert next(p for p in pts if p["heads"] == 2)["some_future_field"] == [1, 2]
