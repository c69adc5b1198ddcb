"""Sweeps, the results store, resume after SIGKILL, the Ray backend and the sweep CLI's bad input
Everything runs the seconds-long ``tiny`` preset on one torch thread."""

from __future__ import annotations

import csv
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from tests.plugin_registry import fresh_registry
from workbench.cli import main
from workbench.verifiers import presets, store, sweep
from workbench.verifiers.store import Store

ROOT = Path(__file__).resolve().parents[2]
TINY_GROUP = 6  # runs per stacked group of the tiny preset: 3 ranks x 2 seeds


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get(
        "PYTHONPATH", "")])}


def _one_layer(scale: str = "quick") -> list[presets.Run]:
    return [r for r in presets.plan("tiny", scale) if r.label_dict()["L"] == 1]


def test_keys_hash_config_code_and_seed() -> None:
    runs = presets.plan("tiny", "quick")
    keys = [k for k, _ in sweep.keyed(runs, "v1")]
    assert len(set(keys)) == len(runs)
    assert keys == [k for k, _ in sweep.keyed(runs, "v1")]
    assert set(keys).isdisjoint(k for k, _ in sweep.keyed(runs, "v2"))  # code version counts
    other = presets.plan("tiny", "quick", seed=1)  # seeds 1, 2 instead of 0, 1
    shared = set(keys) & {k for k, _ in sweep.keyed(other, "v1")}
    assert len(shared) == len(runs) // 2  # exactly the seed-1 runs coincide


def test_groups_are_shapes() -> None:
    groups = sweep.group_runs(sweep.keyed(presets.plan("tiny", "quick"), "v"))
    assert [len(g) for g in groups] == [TINY_GROUP] * 4  # (L, c) each one stacked call
    for g in groups:
        assert len({(r.label_dict()["L"], r.label_dict()["c"]) for _, r in g}) == 1


def test_every_preset_plans_both_scales() -> None:
    for name, p in presets.PRESETS.items():
        for scale in presets.SCALES:
            runs = p.runs(scale)
            assert runs and all(r.model_class == p.model_class for r in runs), name
            assert all(r.preset == name for r in runs)
    fig2 = presets.plan("fig2", "paper")
    assert len(fig2) == 3 * 3 * 7 * 5  # L x c x ranks 1..64 x 5 seeds
    assert {r.spec.heads * r.spec.rank for r in fig2} == {64, 512, 4096}  # H r d = c d^2


def test_sweep_stores_each_run_once_and_rerun_computes_nothing(tmp_path: Path) -> None:
    runs = _one_layer()
    with Store(tmp_path / "s.sqlite") as st:
        rep = sweep.run_sweep("tiny", "quick", st, runs=runs, threads=1)
        assert (rep.planned, rep.already, rep.computed, rep.groups) == (12, 0, 12, 2)
        rows = st.rows("tiny")
        assert len(rows) == 12 and {r["model_class"] for r in rows} == {"standard"}
        assert all(0 < r["heldout"] < 2 and r["heldout_lo"] <= r["heldout"] for r in rows)
        again = sweep.run_sweep("tiny", "quick", st, runs=runs, threads=1)
        assert (again.already, again.computed, again.groups) == (12, 0, 0)
        assert st.count() == 12
        best = sweep.best_of_seeds(rows)
        assert len(best) == 6 and all(b["seeds"] == 2 for b in best)
        for b in best:  # chosen by held-out error, not training loss
            assert b["heldout"] == min(b["all"]) and b["worst"] == max(b["all"])


def test_store_write_is_idempotent(tmp_path: Path) -> None:
    row = {"key": "k", "preset": "p", "model_class": "standard", "labels": {"r": 1}}
    with Store(tmp_path / "s.sqlite") as st:
        assert st.write([row]) == 1
        assert st.write([row, {**row, "key": "k2"}]) == 1
        assert st.count() == 2 and st.rows()[0]["labels"] == {"r": 1}


def test_killed_sweep_resumes_without_duplicates(tmp_path: Path) -> None:
    db = tmp_path / "kill.sqlite"
    cmd = [sys.executable, "-c", "from workbench.cli import main; import sys; "
           f"sys.exit(main(['sweep', 'tiny', '--db', {str(db)!r}, '--threads', '1']))"]
    proc = subprocess.Popen(cmd, env=_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    n = 0
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if db.exists():
            try:
                con = sqlite3.connect(db, timeout=0.01)
                n = con.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
                con.close()
            except sqlite3.OperationalError:
                n = 0
        if n >= TINY_GROUP:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with Store(db) as st:
        assert st.integrity() == "ok"
        killed_at = st.count()
    assert TINY_GROUP <= killed_at < 24, "the kill must land between the first and last group"
    assert killed_at % TINY_GROUP == 0, "a group is written whole or not at all"
    with Store(db) as st:
        rep = sweep.run_sweep("tiny", "quick", st, threads=1)
        assert rep.already == killed_at and rep.computed == 24 - killed_at
        rows = st.rows()
        assert len(rows) == 24 and len({r["key"] for r in rows}) == 24
        assert {r["key"] for r in rows} == set(rep.keys)
        assert sweep.run_sweep("tiny", "quick", st, threads=1).computed == 0


def test_database_of_a_killed_writer_opens_cleanly(tmp_path: Path) -> None:
    db = tmp_path / "w.sqlite"
    with Store(db) as st:
        st.write([{"key": "kept", "preset": "p", "model_class": "standard"}])
    code = textwrap.dedent(f"""
        import os, signal, sqlite3
        con = sqlite3.connect({str(db)!r})
        con.execute("BEGIN IMMEDIATE")
        for i in range(2000):
            con.execute("INSERT INTO runs (key, preset, model_class) VALUES (?, 'p', 'x')",
                        (str(i),))
        os.kill(os.getpid(), signal.SIGKILL)  # dies inside the transaction
    """)
    r = subprocess.run([sys.executable, "-c", code], env=_env())
    assert r.returncode == -signal.SIGKILL
    with Store(db) as st:
        assert st.integrity() == "ok"
        assert [row["key"] for row in st.rows()] == ["kept"]


def test_export_csv(tmp_path: Path) -> None:
    out = tmp_path / "runs.csv"
    db = tmp_path / "s.sqlite"
    with Store(db) as st:
        sweep.run_sweep("tiny", "quick", st, runs=_one_layer()[:6], threads=1)
    with Store(db) as st:
        store.export(st.rows(), out)
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 6 and set(rows[0]) == set(store.COLUMNS)
    assert all(float(r["heldout"]) > 0 for r in rows)


@pytest.mark.skipif(sweep.ray_available(), reason="checks the error without ray installed")
def test_ray_missing_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", "tiny", "--backend", "ray", "--db", str(tmp_path / "x.sqlite")]) == 2
    assert "ray" in capsys.readouterr().err


@pytest.mark.skipif(not sweep.ray_available(), reason="ray is not installed (pip install .[ray])")
def test_ray_backend_matches_local(tmp_path: Path) -> None:
    runs = _one_layer()[:TINY_GROUP]  # one stacked group: one Ray task
    with Store(tmp_path / "local.sqlite") as a:
        sweep.run_sweep("tiny", "quick", a, runs=runs, threads=1)
        local = {r["key"]: r for r in a.rows()}
    with Store(tmp_path / "ray.sqlite") as b:
        rep = sweep.run_sweep("tiny", "quick", b, runs=runs, backend="ray", cpus_per_task=1,
                              threads=1)
        assert rep.computed == TINY_GROUP
        remote = {r["key"]: r for r in b.rows()}
    assert set(local) == set(remote)
    assert {r["backend"] for r in remote.values()} == {"ray"}
    for k, r in local.items():
        for col in ("heldout", "heldout_lo", "heldout_hi", "best_loss", "final_loss"):
            assert remote[k][col] == pytest.approx(r[col], rel=1e-6, abs=1e-9), (k, col)


@pytest.mark.parametrize("args, msg", [
    (["nope"], "preset must be one of"),
    (["tiny", "--db", "{tmp}/missing/x.sqlite"], "--db must be"),
    (["tiny", "--db", "{tmp}"], "--db must be"),
    (["tiny", "--db", "{tmp}/junk.sqlite"], "--db must be an SQLite"),
    (["tiny", "--db", "{tmp}/x.sqlite", "--export", "{tmp}/runs.txt"], "--export must"),
    (["tiny", "--db", "{tmp}/x.sqlite", "--export", "{tmp}/missing/runs.csv"], "--export must"),
    (["tiny", "--db", "{tmp}/x.sqlite", "--address", "127.0.0.1:9"], "--address must"),
    (["tiny", "--db", "{tmp}/x.sqlite", "--backend", "ray", "--address", "auto"],
     "--address must"),
    (["tiny", "--db", "{tmp}/x.sqlite", "--jobs", "0"], "--jobs must be an integer in 1.."),
    (["tiny", "--db", "{tmp}/x.sqlite", "--jobs", "2", "--backend", "ray"], "--jobs must be 1"),
])
def test_sweep_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                         msg: str) -> None:
    (tmp_path / "junk.sqlite").write_text("not a database " * 100)
    before = sorted(p.name for p in tmp_path.iterdir())
    argv = ["sweep", *[a.format(tmp=tmp_path) for a in args]]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and msg in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written


@pytest.mark.skipif(not sweep.ray_available(), reason="ray is not installed (pip install .[ray])")
def test_unreachable_address_is_bad_input(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "x.sqlite"
    assert main(["sweep", "tiny", "--backend", "ray", "--address", "127.0.0.1:9",
                 "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--address must be a reachable" in err
    assert not db.exists()


def test_sweep_cli_dry_run_then_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "c.sqlite")
    assert main(["sweep", "tiny", "--db", db, "--dry-run", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"planned": 24' in out and '"already": 0' in out and '"computed": 0' in out


def test_default_store_is_under_the_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    if sys.platform.startswith(("win", "darwin")):
        pytest.skip("XDG_DATA_HOME is the Linux data directory")
    assert store.default_path() == tmp_path / "data" / store.APP / "runs.sqlite"
    assert main(["sweep", "tiny", "--dry-run", "--json"]) == 0  # a dry run creates no store
    assert not store.default_path().exists()
    assert str(store.default_path()) in capsys.readouterr().out


def test_parquet_export_needs_pyarrow(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        argv = ["sweep", "tiny", "--db", str(tmp_path / "x.sqlite"), "--export",
                str(tmp_path / "runs.parquet")]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "pyarrow" in err
        assert list(tmp_path.iterdir()) == []
    else:
        with Store(tmp_path / "s.sqlite") as st:
            st.write([{"key": "k", "preset": "p", "model_class": "standard", "heldout": 0.5}])
            store.export(st.rows(), tmp_path / "runs.parquet")
        import pyarrow.parquet as pq

        assert pq.read_table(tmp_path / "runs.parquet").num_rows == 1


# --- the head law of random-features runs, and presets through the registry --------------------

PLUGIN_PRESET = '''
from workbench.verifiers.presets import Preset, random_features_runs

def _small(scale, seed):
    return [r for r in random_features_runs("rf_tied", scale, seed, law="tied")
            if r.task.d == 8 and r.spec.heads <= 16]

RF_TIED = Preset("rf_tied", "random features with tied heads (q = k)", "generalized",
                 "a plug-in's grid", "H", ("d", "law"), True, _small)
'''


@pytest.fixture
def plugin_preset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A user's module holding a Preset (six random-features runs, tied heads)."""
    (tmp_path / "my_presets.py").write_text(PLUGIN_PRESET)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "my_presets", raising=False)
    import my_presets  # type: ignore[import-not-found]

    return my_presets


def _old_key(run: presets.Run, version: str) -> str:
    """The store key as it was computed before the head law was a parameter."""
    from dataclasses import asdict

    config = {"preset": run.preset, "kind": run.kind, "task": run.task.to_dict(),
              "spec": asdict(run.spec), "train": asdict(run.config), "labels": run.label_dict()}
    return store.run_key(config, version, run.seed)


def test_the_default_head_law_keeps_the_keys_of_stored_runs() -> None:
    runs = presets.plan("random_features", "quick") + presets.plan("tiny", "quick")
    assert all(r.law == presets.RF_LAW == "cosine_uniform" for r in runs)
    assert [k for k, _ in sweep.keyed(runs, "v1")] == [_old_key(r, "v1") for r in runs]
    tied = presets.random_features_runs("random_features", "quick", 0, law="tied")
    default = presets.random_features_runs("random_features", "quick", 0)
    assert [(r.task, r.spec) for r in tied] == [(r.task, r.spec) for r in default]
    assert all(r.config_dict()["law"] == "tied" and r.label_dict()["law"] == "tied"
               for r in tied)
    assert {k for k, _ in sweep.keyed(tied, "v1")}.isdisjoint(k for k, _ in sweep.keyed(
        default, "v1"))


def test_a_random_features_run_draws_its_heads_from_its_law() -> None:
    from workbench.constructions.random_features import random_features

    runs = [r for law in ("cosine_uniform", "tied", "independent")
            for r in presets.random_features_runs("rf", "quick", 3, law)
            if r.task.d == 8 and r.spec.heads == 16 and r.seed == 3]
    rows = sweep.compute(runs, threads=1)
    errors = {r["config"].get("law", "cosine_uniform"): r["heldout"] for r in rows}
    for law, err in errors.items():
        assert err == random_features(8, 16, law, generator=3, build_model=False)[1].value
    assert len(set(errors.values())) == 3  # three laws, three different draws


def test_runs_refuse_a_law_they_do_not_have() -> None:
    rf = presets.plan("random_features", "quick")[0]
    with pytest.raises(ValueError, match="law must be one of"):
        replace(rf, law="gaussian")
    tiny = presets.plan("tiny", "quick")[0]
    with pytest.raises(ValueError, match="law must be 'cosine_uniform' for a train run"):
        replace(tiny, law="tied")
    with pytest.raises(ValueError, match="kind must be one of"):
        replace(tiny, kind="construction")
    with pytest.raises(ValueError, match="law must be one of"):
        presets.random_features_preset("x", "gaussian")
    built_in = presets.PRESETS["random_features"]
    assert presets.random_features_preset().runs("quick") == built_in.runs("quick")


def test_sweep_runs_a_preset_named_module_colon_attr(tmp_path: Path, plugin_preset,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "p.sqlite")
    assert main(["sweep", "my_presets:RF_TIED", "--db", db, "--threads", "1", "--json"]) == 0
    p = json.loads(capsys.readouterr().out)
    assert (p["preset"], p["planned"], p["computed"], p["model_class"]) == (
        "rf_tied", 6, 6, "generalized")
    with Store(db) as st:
        rows = st.rows("rf_tied")
    assert len(rows) == 6 and {r["config"]["law"] for r in rows} == {"tied"}
    assert main(["sweep", "my_presets:RF_TIED", "--db", db, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["computed"] == 0


def test_sweep_runs_a_preset_registered_by_an_installed_package(
        tmp_path: Path, plugin_preset, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    fresh_registry(monkeypatch, EntryPoint("rf-tied", "my_presets:RF_TIED", "workbench.presets"))
    db = str(tmp_path / "e.sqlite")
    assert main(["sweep", "rf_tied", "--db", db, "--dry-run", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["planned"] == 6
    assert main(["sweep", "nope", "--db", db]) == 2
    err = capsys.readouterr().err
    assert "preset must be one of" in err and "rf_tied" in err and "module:attr" in err


def test_sweep_refuses_a_module_attr_that_is_not_a_preset(
        tmp_path: Path, plugin_preset, capsys: pytest.CaptureFixture[str]) -> None:
    before = sorted(p.name for p in tmp_path.iterdir())
    for name in ("my_presets:_small", "my_presets:NOTHING", "no_such_module:P"):
        assert main(["sweep", name, "--db", str(tmp_path / "x.sqlite")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and name in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_dry_run_lists_the_grid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``sweep vary_n --dry-run``: one entry per configuration, with its task, model and
    training settings (the quick error-against-N grid of docs/sweeps.md)."""
    db = str(tmp_path / "g.sqlite")
    assert main(["sweep", "vary_n", "--db", db, "--dry-run", "--json"]) == 0
    grid = json.loads(capsys.readouterr().out)["grid"]
    runs = presets.plan("vary_n", "quick")
    assert len(grid) == len({repr(sorted(r.label_dict().items())) for r in runs}) == 6
    assert {(g["N"], g["rank"], g["heads"]) for g in grid} == {
        (N, r, 16 * 16 // r) for N in (4, 8, 16) for r in (1, 16)}
    assert all(g["d"] == 16 and g["layers"] == 1 and g["task"] == "farthest"
               and g["seeds"] == [0, 1] for g in grid)
    assert main(["sweep", "vary_n", "--db", db, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "grid (6 configurations):" in out and "farthest d=16 N=16 (iid keys)" in out
