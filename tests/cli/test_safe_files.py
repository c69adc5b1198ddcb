"""Files a user hands the CLI (docs/sweeps.md, "Files the workbench reads"): a ``--checkpoint``
that is a program, damaged, foreign or of another run, and a ``--db`` that is another program's
database, of a newer schema version or of the layout from before versioning. Bad files exit 2
with one stderr line naming the flag, run nothing they hold and leave the folder as it was."""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import pickle
from pathlib import Path

import pytest
import torch

from tests.cli.bad_input_contract import json_error_problems
from tests.planted_files import PRE_VERSIONING_SQL, RunsCode, sqlite_file, store_marker
from workbench.cli import main
from workbench.verifiers.store import APPLICATION_ID, SCHEMA_VERSION, Store

TRAIN = ["train", "--d", "4", "--N", "2", "--rank", "1", "--heads", "2", "--steps", "6",
         "--batch", "16", "--eval-samples", "200", "--device", "cpu", "--json"]
FAST_CLAIM = "setting.sphere_law"
LABELS = {"L": 1, "c": 1, "r": 1}  # a run of the tiny preset

def _snapshot(folder: Path) -> dict[str, str]:
    """Everything below ``folder``: each file with the digest of its bytes, each folder."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            if p.is_file() else "folder" for p in sorted(folder.rglob("*"))}


def _refused(capsys: pytest.CaptureFixture[str], argv: list[str], flag: str) -> str:
    """Run ``argv``: it must exit 2 with one stderr line naming ``flag``; the line."""
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith("error: "), err
    if "--json" in argv:  # the error object on stdout
        assert json_error_problems(out, flag, 2) == [], out
    else:
        assert out == "", out
    assert f"{flag} must" in err and "Traceback" not in err
    return err


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The bytes of a finished checkpoint of ``TRAIN``."""
    path = tmp_path_factory.mktemp("ck") / "ck.pt"
    assert main([*TRAIN, "--checkpoint", str(path)]) == 0
    return path.read_bytes()


def _planted(kind: str, path: Path, marker: Path) -> None:
    if kind == "torch archive":  # what torch.save writes, with code in its pickle
        torch.save({"fingerprint": RunsCode(marker), "step": 0, "seconds": 0.0,
                    "groups": []}, path)
    else:  # a bare pickle, protocol 2 (the one torch's legacy format reads)
        path.write_bytes(pickle.dumps(RunsCode(marker), protocol=2))


@pytest.mark.parametrize("kind", ["torch archive", "bare pickle"])
def test_a_checkpoint_that_runs_code_is_refused_unrun(tmp_path: Path, kind: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    # the plant works: loading it the unsafe way runs it
    probe = tmp_path / "probe"
    probe.mkdir()
    _planted(kind, probe / "ck.pt", probe / "marker")
    with contextlib.suppress(RuntimeError):  # a bare pickle fails torch's check, having run
        torch.load(probe / "ck.pt", weights_only=False)
    assert (probe / "marker").read_text() == "ran"
    # the workbench never loads it so
    ck, marker = tmp_path / "ck.pt", tmp_path / "marker"
    _planted(kind, ck, marker)
    before = _snapshot(tmp_path)
    err = _refused(capsys, [*TRAIN, "--checkpoint", str(ck)], "--checkpoint")
    assert "other than tensors and plain data" in err
    assert not marker.exists() and _snapshot(tmp_path) == before


@pytest.mark.parametrize("case, why", [
    ("three bytes of text", "is not a PyTorch checkpoint"),
    ("empty", "is empty"),
    ("truncated", "is truncated or damaged"),
    ("foreign", "has no 'fingerprint' entry"),
    ("a tensor", "holds a Tensor, not a dict"),
    ("another configuration", "belong to this run's configuration"),
    ("other groups", "checkpoint of this run"),
])
def test_a_bad_checkpoint_is_one_line_and_left_alone(tmp_path: Path, checkpoint: bytes,
                                                      capsys: pytest.CaptureFixture[str],
                                                      case: str, why: str) -> None:
    ck = tmp_path / "ck.pt"
    argv = [*TRAIN, "--checkpoint", str(ck)]
    if case == "three bytes of text":
        ck.write_text("abc")
    elif case == "empty":
        ck.write_bytes(b"")
    elif case == "truncated":
        ck.write_bytes(checkpoint[: len(checkpoint) // 2])
    elif case == "foreign":
        torch.save({"weights": torch.ones(3)}, ck)
    elif case == "a tensor":
        torch.save(torch.ones(3), ck)
    elif case == "another configuration":
        ck.write_bytes(checkpoint)
        argv[argv.index("--heads") + 1] = "3"
    else:  # the right fingerprint, but the losses of another number of steps
        ck.write_bytes(checkpoint)
        saved = torch.load(ck, weights_only=True)
        saved["groups"][0]["losses"] = torch.zeros(3, 1)
        torch.save(saved, ck)
    before = _snapshot(tmp_path)
    err = _refused(capsys, argv, "--checkpoint")
    assert why in err and str(ck) in err
    if case == "another configuration":
        assert "specs[0].heads: 2 (saved) != 3" in err
    assert _snapshot(tmp_path) == before


def test_a_real_checkpoint_still_resumes_bit_for_bit(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    trainer = importlib.import_module("workbench.verifiers.train")  # the module, not train()
    ck = tmp_path / "ck.pt"
    step = trainer._Group.step

    def dies_at_step_3(self, t, task, cfg):  # killed after the checkpoint of step 3
        if t == 3:
            raise KeyboardInterrupt
        step(self, t, task, cfg)

    monkeypatch.setattr(trainer._Group, "step", dies_at_step_3)
    assert main([*TRAIN, "--checkpoint", str(ck)]) == 130  # interrupted, as by SIGINT
    monkeypatch.undo()
    capsys.readouterr()
    assert torch.load(ck, weights_only=True)["step"] == 3
    assert main([*TRAIN, "--checkpoint", str(ck)]) == 0
    resumed = json.loads(capsys.readouterr().out)
    assert main(TRAIN) == 0
    fresh = json.loads(capsys.readouterr().out)
    assert resumed["seeds"] == fresh["seeds"]  # bit for bit: every loss and interval equal


def _foreign(path: Path) -> None:
    sqlite_file(path, "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)",
                "INSERT INTO users (name) VALUES ('ada')")


def _runs_of_another_layout(path: Path) -> None:
    sqlite_file(path, "CREATE TABLE runs (id INTEGER PRIMARY KEY, started REAL, status TEXT)",
                "INSERT INTO runs (started, status) VALUES (1.0, 'done')")


def _other_application(path: Path) -> None:
    sqlite_file(path, "PRAGMA application_id = 1179011410")  # another program's marker


def _newer(path: Path) -> None:
    with Store(path) as st:
        st.con.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")


COMMANDS = {
    "report": ["report", "--out", "{tmp}/out", "--db", "{db}"],
    "sweep": ["sweep", "tiny", "--dry-run", "--db", "{db}"],
    "check": ["check", "--only", FAST_CLAIM, "--db", "{db}"],
    "graph": ["graph", "--db", "{db}"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("make, why", [
    (_foreign, "another SQLite database: it holds table 'users'"),
    (_runs_of_another_layout, "table 'runs' of another layout"),
    (_other_application, "another program's SQLite database: application_id 1179011410"),
    (_newer, f"has schema version {SCHEMA_VERSION + 1}: written by a newer workbench"),
])
def test_a_database_not_of_this_workbench_is_refused_and_left_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, make, why: str) -> None:
    db = tmp_path / "other.sqlite"
    make(db)
    before = _snapshot(tmp_path)
    argv = [a.format(tmp=tmp_path, db=db) for a in COMMANDS[command]]
    err = _refused(capsys, argv, "--db")
    assert why in err and str(db) in err
    assert _snapshot(tmp_path) == before  # byte-identical, and nothing beside it


def _pre_versioning_store(path: Path) -> None:
    """A store as the workbench wrote it before versioning: one run and one check."""
    payload = {"id": FAST_CLAIM, "kind": "fact", "verdict": "holds", "depends_on": [],
               "evidence": []}
    sqlite_file(path, *PRE_VERSIONING_SQL,
                ("INSERT INTO runs (key, preset, scale, model_class, seed, labels, heldout, "
                 "heldout_lo, heldout_hi, heldout_n, code_version, created) VALUES ('old', "
                 "'tiny', 'quick', 'standard', 0, ?, 0.25, 0.2, 0.3, 100, 'old', 1.0)",
                 (json.dumps(LABELS),)),
                "INSERT INTO check_runs VALUES (1, 1.0, 'quick', 0, 'cpu', '{\"holds\": 1}')",
                ("INSERT INTO claim_results VALUES (1, ?, 'holds', 0.1, ?)",
                 (FAST_CLAIM, json.dumps(payload))))


def test_a_store_from_before_versioning_is_read_then_migrated(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "old.sqlite"
    _pre_versioning_store(db)
    assert store_marker(db) == (0, 0)
    before = db.read_bytes()
    # read as it is: report and graph see its run and its check, and write nothing to it
    assert main(["report", "--db", str(db), "--out", str(tmp_path / "rep"), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["runs"] == 1 and rep["check"] == {"holds": 1} and "tiny_quick.png" in rep["files"]
    assert main(["graph", "--db", str(db)]) == 0
    nodes = {n["id"]: n["verdict"] for n in json.loads(capsys.readouterr().out)["nodes"]}
    assert nodes[FAST_CLAIM] == "holds"
    assert db.read_bytes() == before
    # the first write stamps it, and keeps what it held
    assert main(["check", "--only", FAST_CLAIM, "--db", str(db), "--json"]) == 0
    capsys.readouterr()
    assert store_marker(db) == (APPLICATION_ID, SCHEMA_VERSION)
    with Store(db, readonly=True) as st:
        assert [r["key"] for r in st.rows()] == ["old"] and st.rows()[0]["labels"] == LABELS
        assert st.con.execute("SELECT COUNT(*) FROM check_runs").fetchone()[0] == 2
    assert main(["sweep", "tiny", "--dry-run", "--db", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["planned"] == 24


def test_a_dry_run_sweep_creates_no_store(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "new.sqlite"
    assert main(["sweep", "tiny", "--dry-run", "--db", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["planned"] == 24 and not db.exists()


@pytest.mark.parametrize("command", ["check"])
def test_a_new_store_gets_the_marker(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     command: str) -> None:
    db = tmp_path / "new.sqlite"
    argv = [a.format(tmp=tmp_path, db=db) for a in COMMANDS[command]]
    assert main([*argv, "--json"]) == 0
    capsys.readouterr()
    assert store_marker(db) == (APPLICATION_ID, SCHEMA_VERSION)
    assert main(["report", "--db", str(db), "--out", str(tmp_path / "rep")]) == 0
