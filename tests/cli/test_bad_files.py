"""Every kind of file the workbench reads, truncated, damaged or emptied, gets the bad-input answer
(docs/sweeps.md, "Files the workbench reads"): exit 2, one stderr line naming the flag or
argument, no traceback, nothing written (the results store included), and with ``--json`` the
error object on stdout. The kinds: the results store (``--db`` of every command that takes it),
a witness ``.npz`` (``witness add``, ``witness verify``), a ``torch.save`` file (``witness add``,
``train --checkpoint``), and the files the workbench ships (the witness record, the fiber table).

The cases run through ``workbench.cli.main`` in child processes, by the runner of
``test_bad_inputs.py``; a file is read by the code it is for, which may import torch."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cli.bad_input_contract import problems, run_cases
from tests.cli.test_bad_inputs import _RUNNER
from workbench.core.safe_files import ReadFailed

RECORD_DIR = Path(__file__).parents[2] / "workbench" / "verifiers" / "witness_record"
WITNESS = RECORD_DIR / "d4_r1_H2_trained_generalized.npz"


def truncated(data: bytes) -> bytes:
    return data[: len(data) // 2]


def damaged(data: bytes) -> bytes:
    """A quarter overwritten after the first 100 bytes (a zip member's data, an SQLite file's
    schema page): a parser reads the header, then meets garbage."""
    n = len(data)
    return data[:100] + bytes((i * 37 + 11) % 256 for i in range(n // 4)) + \
        data[100 + n // 4:]


def foreign_head(data: bytes) -> bytes:
    """The right magic number, then nothing the format allows."""
    return data[:16] + b"\x00" * 48


DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "truncated": truncated, "damaged": damaged, "foreign": foreign_head}


def _store(path: Path) -> None:
    """A results store as the workbench creates it."""
    from workbench.verifiers.store import Store

    with Store(path):
        pass


def _torch_file(path: Path) -> None:
    import torch

    torch.save({"weight": torch.arange(4096, dtype=torch.float32)}, path)


KINDS: dict[str, Callable[[Path], None]] = {
    "store.sqlite": _store,
    "witness.npz": lambda p: shutil.copyfile(WITNESS, p),
    "state.pt": _torch_file,
}

# (argv with {K} for the damaged file of kind K, the flag the line must name)
READERS: list[tuple[str, list[str], str]] = [
    ("store.sqlite", ["graph", "--db", "{K}"], "--db"),
    ("store.sqlite", ["report", "--db", "{K}", "--out", "{W}/r"], "--db"),
    ("store.sqlite", ["sweep", "tiny", "--db", "{K}", "--dry-run"], "--db"),
    ("store.sqlite", ["witness", "list", "--db", "{K}"], "--db"),
    ("store.sqlite", ["check", "--only", "setting.sphere_law", "--db", "{K}"], "--db"),
    ("witness.npz", ["witness", "verify", "{K}"], "FILE"),
    ("witness.npz", ["witness", "add", "{K}", "--db", "{W}/s.sqlite"], "FILE"),
    ("state.pt", ["witness", "add", "{K}", "--d", "4", "--rank", "1", "--heads", "2",
                  "--claim", "0.5", "--db", "{W}/s.sqlite"], "FILE"),
    ("state.pt", ["train", "--d", "4", "--N", "2", "--rank", "1", "--heads", "1", "--steps", "1",
                  "--device", "cpu", "--checkpoint", "{K}"], "--checkpoint"),
]
CASES: list[tuple[list[str], str, str]] = [
    ([a.replace("{K}", "{F}/" + f"{how}-{kind}") for a in argv] + json, flag, kind)
    for kind, argv, flag in READERS for how in DAMAGE
    for json in ([], ["--json"])
    if not (how != "damaged" and json)  # --json on one damage of each is enough
]


def _fixtures(root: Path) -> None:
    for d in ("data", "home"):
        (root / d).mkdir()
    _fixtures_into(root)


def _fixtures_into(root: Path) -> None:
    """Each kind of file, whole and with each damage, in ``root``."""
    for kind, make in KINDS.items():
        whole = root / f"whole-{kind}"
        make(whole)
        for how, damage in DAMAGE.items():
            (root / f"{how}-{kind}").write_bytes(damage(whole.read_bytes()))


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[int, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("files")
    fixtures, work = tmp / "fixtures", tmp / "work"
    fixtures.mkdir()
    work.mkdir()
    _fixtures(fixtures)
    return run_cases(_RUNNER, fixtures, work, [(i, argv) for i, (argv, _, _) in enumerate(CASES)])


def test_every_kind_of_file_is_read_by_some_case() -> None:
    assert {kind for _, _, kind in CASES} == set(KINDS)
    assert {k for k, _, _ in READERS} == set(KINDS)


@pytest.mark.parametrize("i", range(len(CASES)), ids=[" ".join(a)[:80] for a, _, _ in CASES])
def test_a_damaged_file_gets_one_line_naming_its_flag(i: int,
                                                      results: dict[int, Any]) -> None:
    argv, flag, kind = CASES[i]
    found = problems(results[i], flag, "--json" in argv)
    found = [p for p in found if p != "imported torch"]  # a file is read by the code it feeds
    assert found == [], (argv, results[i]["err"], results[i]["out"][:200])


@pytest.mark.parametrize("how", sorted(DAMAGE))
def test_the_shipped_witness_record_damaged_is_one_line(how: str, tmp_path: Path) -> None:
    from workbench.verifiers.witness_record import RECORD_FILE, read_record, record_grid

    bad = tmp_path / "record.json"
    bad.write_bytes(DAMAGE[how](RECORD_FILE.read_bytes()))
    for read in (read_record, record_grid):
        with pytest.raises(ReadFailed, match=r"^the witness record must be .*record\.json") as e:
            read(bad)
        assert "\n" not in str(e.value)


@pytest.mark.parametrize("how", sorted(DAMAGE))
def test_the_shipped_fiber_table_damaged_is_one_line(how: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.core.bounds.fiber_bound import fiber_enclosure

    bad = tmp_path / "fiber_table.json"
    bad.write_bytes(DAMAGE[how](fiber_enclosure.TABLE_FILE.read_bytes()))
    monkeypatch.setattr(fiber_enclosure, "TABLE_FILE", bad)
    fiber_enclosure._table.cache_clear()
    try:
        with pytest.raises(ReadFailed, match=r"^the fiber table must be .*fiber_table\.json"):
            fiber_enclosure._table()
    finally:
        fiber_enclosure._table.cache_clear()


def test_a_damaged_witness_file_is_a_traceback_without_the_reading_guard(
        tmp_path: Path) -> None:
    """The guard is what answers: without it, a truncated ``.npz`` escapes as the zip
    reader's own exception."""
    from workbench.testing import plant, replaced
    from workbench.verifiers import witness_replay

    bad = tmp_path / "w.npz"
    bad.write_bytes(truncated(WITNESS.read_bytes()))
    with pytest.raises(ValueError, match="^FILE must be"):
        witness_replay.read_user_file(bad, d=None, r=None, H=None, claim=None)
    with plant("workbench.verifiers.witness_replay:read_user_file",
               replaced(witness_replay._read_user_file)):
        with pytest.raises(Exception) as e:
            witness_replay.read_user_file(bad, d=None, r=None, H=None, claim=None)
        assert not str(e.value).startswith("FILE must be")
