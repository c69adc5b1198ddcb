"""The results store knows its own files (workbench/verifiers/store.py; docs/sweeps.md, "The
store"): the
marker and schema version, what ``identify`` refuses, migration of the layout from before
versioning, read-only opening, and one-line errors naming ``--db``."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.planted_files import PRE_VERSIONING_SQL, sqlite_file, store_marker
from workbench.verifiers import store
from workbench.verifiers.store import APPLICATION_ID, SCHEMA_VERSION, Store

ROW = {"key": "k", "preset": "p", "model_class": "standard", "labels": {"r": 1}}

PRE_VERSIONING_RUNS = PRE_VERSIONING_SQL[0]


def test_a_new_store_is_marked_with_every_table(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    with Store(db) as st:
        assert st.write([ROW]) == 1 and st.version == SCHEMA_VERSION
    assert store_marker(db) == (APPLICATION_ID, SCHEMA_VERSION)
    con = sqlite3.connect(db)
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    con.close()
    assert tables == set(store.TABLES)
    with Store(db, readonly=True) as st:
        assert st.rows()[0]["labels"] == {"r": 1}


def test_the_earlier_layout_is_read_unchanged_then_stamped_on_write(tmp_path: Path) -> None:
    db = sqlite_file(tmp_path / "old.sqlite", PRE_VERSIONING_RUNS,
             "INSERT INTO runs (key, preset, model_class, labels) VALUES "
             "('old', 'p', 'standard', '{\"r\": 2}')")
    before = db.read_bytes()
    with Store(db, readonly=True) as st:
        assert st.version == 0 and [r["labels"] for r in st.rows()] == [{"r": 2}]
    store.check_database(db)
    assert db.read_bytes() == before and store_marker(db) == (0, 0)
    with Store(db) as st:
        st.write([ROW])
        assert {r["key"] for r in st.rows()} == {"old", "k"}
    assert store_marker(db) == (APPLICATION_ID, SCHEMA_VERSION)


def test_a_store_with_check_tables_only_reads_as_having_no_runs(tmp_path: Path) -> None:
    db = sqlite_file(tmp_path / "c.sqlite", *PRE_VERSIONING_SQL[1:])
    with Store(db, readonly=True) as st:
        assert st.rows() == [] and st.count() == 0 and st.done_keys(["k"]) == set()
    assert store.last_check(db) is None


@pytest.mark.parametrize("sql, why", [
    (("CREATE TABLE notes (body TEXT)",), "another SQLite database: it holds table 'notes'"),
    (("CREATE TABLE runs (key TEXT)",), "table 'runs' of another layout"),
    ((PRE_VERSIONING_RUNS, "CREATE VIEW v AS SELECT key FROM runs"), "view 'v'"),
    (("PRAGMA user_version = 3",), "application_id 0, user_version 3"),
    (("PRAGMA application_id = 7",), "application_id 7"),
    ((f"PRAGMA application_id = {APPLICATION_ID}", f"PRAGMA user_version = {SCHEMA_VERSION + 1}"),
     f"schema version {SCHEMA_VERSION + 1}: written by a newer workbench"),
    ((f"PRAGMA application_id = {APPLICATION_ID}",), "has schema version 0"),
    ((f"PRAGMA application_id = {APPLICATION_ID}", f"PRAGMA user_version = {SCHEMA_VERSION}",
      "CREATE TABLE extra (x)"), "a damaged workbench store: it holds table 'extra'"),
])
def test_other_files_are_refused_before_anything_is_written(tmp_path: Path, sql: tuple[str, ...],
                                                             why: str) -> None:
    db = sqlite_file(tmp_path / "x.sqlite", *sql)
    before = db.read_bytes()
    for open_it in (lambda: Store(db), lambda: Store(db, readonly=True),
                    lambda: store.check_database(db), lambda: store.check_writable(db)):
        with pytest.raises(ValueError, match="^--db must be ") as e:
            open_it()
        assert why in str(e.value) and "\n" not in str(e.value)
    assert store.last_check(db) is None
    assert db.read_bytes() == before and sorted(tmp_path.iterdir()) == [db]


def test_errors_name_the_given_flag(tmp_path: Path) -> None:
    db = sqlite_file(tmp_path / "x.sqlite", "CREATE TABLE notes (body TEXT)")
    with pytest.raises(ValueError, match="^--store must be a workbench results store"):
        Store(db, name="--store")
    (tmp_path / "junk").write_text("not a database " * 100)
    with pytest.raises(ValueError, match="^--db must be an SQLite database file"):
        Store(tmp_path / "junk")


def test_a_damaged_json_cell_names_the_store(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    with Store(db) as st:
        st.con.execute("INSERT INTO runs (key, preset, model_class, labels) VALUES "
                       "('k', 'p', 'standard', '{not json')")
        st.con.commit()
        with pytest.raises(ValueError, match="^--db must be an undamaged .*runs.labels"):
            st.rows()


def test_a_killed_writers_journal_does_not_block_the_checks(tmp_path: Path) -> None:
    """A hot journal (a writer killed inside a transaction) is rolled back on first read, so
    the checks before a resumed sweep accept the store."""
    import os
    import signal
    import subprocess
    import sys
    import textwrap

    db = tmp_path / "w.sqlite"
    with Store(db) as st:
        st.write([ROW])
    code = textwrap.dedent(f"""
        import os, signal, sqlite3
        con = sqlite3.connect({str(db)!r})
        con.execute("PRAGMA cache_size = 1")  # spill pages: the journal is hot on disk
        con.execute("BEGIN IMMEDIATE")
        for i in range(3000):
            con.execute("INSERT INTO runs (key, preset, model_class) VALUES (?, 'p', ?)",
                        (str(i), 'x' * 200))
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    assert subprocess.run([sys.executable, "-c", code]).returncode == -signal.SIGKILL
    assert os.path.exists(f"{db}-journal")
    store.check_writable(db)
    with Store(db, readonly=True) as st:
        assert [r["key"] for r in st.rows()] == ["k"]
