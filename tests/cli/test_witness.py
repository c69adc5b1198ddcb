"""``workbench witness list|verify|add`` and the record of best-known witnesses
(docs/derivations/sandwich.md, "The record of witnesses"): the record covers the grid, a record
witness replays on fresh samples, a user's state dict is recorded only when its claim is
reproduced, and a file that would run code, does not fit its architecture or claims what its
replay does not give is refused with exit 2 and one line. Every check is seen to fail on a
planted fault."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from tests.cli.run_cli import run_cli
from workbench.constructions.optimized import Witness
from workbench.testing import plant
from workbench.verifiers.train import ModelSpec, build_model
from workbench.verifiers.trained_witness import _task, replay_trained
from workbench.verifiers.witness_record import RECORD_DIR, read_record, record_grid
from workbench.verifiers.witness_replay import FRESH

N = 20_000  # fresh samples per replay: seconds at d <= 5


def test_the_record_covers_the_grid_with_safe_files() -> None:
    """Every grid point (benchmarks/sandwich.py: d in 3..32, its ranks, H in 1..256) and the
    issue's table has a witness; every file named is a numbers-only .npz of that witness."""
    grid = record_grid()
    assert len(grid) >= 148
    entries = read_record()
    for d, r, H in grid:
        assert any(e.d == d and e.r <= r and e.heads <= H for e in entries), (d, r, H)
    for e in entries:
        w = Witness.load(RECORD_DIR / e.file)  # allow_pickle=False, layout checked
        assert (w.d, w.r, w.heads, w.method) == (e.d, e.r, e.heads, e.method)
        assert w.error == e.error and w.seed == e.stream and e.ci[0] <= e.error <= e.ci[1]
        assert e.code and e.budget


def test_list_prints_every_point(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run_cli(capsys, "witness", "list", "--json")
    assert rc == 0 and len([c for c in out["points"] if "setting" not in c]) == len(record_grid())
    cell = next(c for c in out["points"] if (c["d"], c["r"], c["heads"]) == (3, 1, 256))
    assert cell["inherited_from"] is not None and cell["method"] == "trained_generalized"


def test_verify_replays_a_record_point_and_fails_on_a_wrong_claim(
        capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run_cli(capsys, "witness", "verify", "3,1,4", "--eval-samples", str(N), "--json")
    assert rc == 0 and out["reproduced"] and out["above_certified"]
    assert out["stream"] != out["entry"]["stream"]  # fresh samples
    # the replay a few percent off (a normalisation fault): the claim is no longer reproduced
    with plant("workbench.verifiers.trained_witness:replay_trained",
               lambda f: lambda *a, **k: (f(*a, **k)[0] * 1.06, tuple(
                   x * 1.06 for x in f(*a, **k)[1]))):
        rc, out, _ = run_cli(capsys, "witness", "verify", "3,1,4", "--eval-samples", str(N),
                          "--json")
    assert rc == 1 and not out["reproduced"]


def test_verify_fails_when_the_certified_bound_is_above(
        capsys: pytest.CaptureFixture[str]) -> None:
    with plant("workbench.core.bounds.certified:certified_lower_bound",
               lambda f: lambda *a, **k: type("B", (), {"value": 0.5})()):
        rc, out, _ = run_cli(capsys, "witness", "verify", "3,1,4", "--eval-samples", str(N),
                          "--json")
    assert rc == 1 and out["reproduced"] and not out["above_certified"]


@pytest.fixture(scope="module")
def user_model(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, float]:
    """A state dict of generalized attention at (5, 1, 8), off the record's grid, and its error
    on the replay's stream computed here (the independent computation)."""
    torch.manual_seed(0)
    model = build_model(ModelSpec(arch="generalized", rank=1, heads=8,
                                  options={"score": "dot"}), _task(5))
    with torch.no_grad():
        model.M.mul_(0.3)
    path = tmp_path_factory.mktemp("user") / "model.pt"
    torch.save(model.state_dict(), path)
    err, _ = replay_trained(5, 1, 8, model.state_dict(), N, FRESH)
    return path, err


def _add(path: Path, db: Path, claim: float, d: int = 5) -> list[str]:
    return ["witness", "add", str(path), "--d", str(d), "--rank", "1", "--heads", "8",
            "--claim", repr(claim), "--eval-samples", str(N), "--db", str(db)]


def test_add_records_a_reproduced_model_that_beats_the_record(
        capsys: pytest.CaptureFixture[str], user_model: tuple[Path, float],
        tmp_path: Path) -> None:
    path, err = user_model
    db = tmp_path / "s.sqlite"
    rc, out, _ = run_cli(capsys, *_add(path, db, err), "--json")
    assert rc == 0 and out["reproduced"] and out["beats_best_known"]
    rc, out, _ = run_cli(capsys, "witness", "list", "--db", str(db), "--json")
    cell = next(c for c in out["points"] if (c["d"], c["r"], c["heads"]) == (5, 1, 8))
    assert cell["source"] == "store" and abs(cell["error"] - err) < 1e-12
    # the store's witness replays from its blob on another fresh stream
    rc, out, _ = run_cli(capsys, "witness", "verify", "5,1,8", "--db", str(db), "--eval-samples",
                      str(N), "--json")
    assert rc == 0 and out["reproduced"]
    # the same model again does not beat itself: nothing more is written
    rc, out, _ = run_cli(capsys, *_add(path, db, err), "--json")
    assert rc == 0 and not out["beats_best_known"]
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM witnesses").fetchone()[0] == 1


def test_add_refuses_a_claim_its_replay_does_not_reproduce(
        capsys: pytest.CaptureFixture[str], user_model: tuple[Path, float],
        tmp_path: Path) -> None:
    path, err = user_model
    db = tmp_path / "s.sqlite"
    for wrong in (err * 0.95, err * 1.05):  # five percent off either way
        rc, _, line = run_cli(capsys, *_add(path, db, wrong))
        assert rc == 2 and line.count("\n") == 1 and "does not reproduce" in line
    assert not db.exists()


def test_add_refuses_a_file_that_would_run_code(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    evil = tmp_path / "evil.pt"
    torch.save({"W": _Evil(str(marker))}, evil)
    rc, _, line = run_cli(capsys, *_add(evil, tmp_path / "s.sqlite", 0.3))
    assert rc == 2 and line.count("\n") == 1 and "run code" in line and not marker.exists()
    obj = tmp_path / "obj.npz"
    np.savez(obj, W=np.array([{"a": 1}], dtype=object))
    rc, _, line = run_cli(capsys, *_add(obj, tmp_path / "s.sqlite", 0.3))
    assert rc == 2 and line.count("\n") == 1 and "never unpickled" in line


class _Evil:
    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.touch, (Path(self.path),))


def test_add_refuses_a_state_dict_of_another_architecture(
        capsys: pytest.CaptureFixture[str], user_model: tuple[Path, float],
        tmp_path: Path) -> None:
    path, err = user_model
    rc, _, line = run_cli(capsys, *_add(path, tmp_path / "s.sqlite", err, d=6))
    assert rc == 2 and line.count("\n") == 1 and "of generalized attention at d=6" in line
    state = torch.load(path, weights_only=True)
    state.pop("M")
    torch.save(state, tmp_path / "short.pt")
    rc, _, line = run_cli(capsys, *_add(tmp_path / "short.pt", tmp_path / "s.sqlite", err))
    assert rc == 2 and "not the weights" in line


def test_sandwich_counts_the_record_and_says_which_won(
        capsys: pytest.CaptureFixture[str]) -> None:
    args = ["bounds", "sandwich", "--d", "3", "--rank", "1", "--heads", "8", "--json"]
    rc, out, _ = run_cli(capsys, *args)
    rec = out["record"]
    assert rc == 0 and out["best_source"] == "record" and rec["replay"].endswith("3,1,8")
    assert out["best_ci"] == rec["ci"] and out["method"] == f"record:{rec['method']}"
    rc, out, _ = run_cli(capsys, *args, "--no-record")
    assert out["best_source"] == "computed" and out["record"] is None
    assert out["best_ci"][1] > rec["ci"][1]  # the constructions alone are worse here


def test_verify_replays_a_file_saved_by_bounds_sandwich(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc, out, _ = run_cli(capsys, "bounds", "sandwich", "--d", "4", "--rank", "1", "--heads", "1",
                      "--no-record", "--witness-dir", str(tmp_path), "--json")
    assert rc == 0 and out["method"] == "one_head_bayes"
    rc, rep, _ = run_cli(capsys, "witness", "verify", out["witness_file"], "--eval-samples",
                      str(N), "--json")
    assert rc == 0 and rep["reproduced"] and rep["stream"] != 0
    # a claim 5 % off, written into the file: not reproduced
    w = Witness.load(out["witness_file"])
    w.error *= 1.05
    w.ci = (w.error, w.error)
    w.save(tmp_path / "off.npz")
    rc, rep, _ = run_cli(capsys, "witness", "verify", str(tmp_path / "off.npz"), "--eval-samples",
                      str(N), "--json")
    assert rc == 1 and not rep["reproduced"]
