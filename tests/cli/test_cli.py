"""The CLI contract (README, "The CLI"): --json, --seed, --version, exit codes, one-line errors."""

import json
import sqlite3
import subprocess
import sys

import click
import pytest

from workbench import __version__
from workbench.cli import app, main
from workbench.commands.registry import CONTRACT


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_version(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and __version__ in out


def test_check_json_schema(capsys):
    code, out, err = run(capsys, "check", "--json", "--only", "fact1.soft_representation")
    assert code == 0, err
    data = json.loads(out)
    ids = [c["id"] for c in data["claims"]]
    assert ids == ["fact1.soft_representation"]
    c = data["claims"][0]
    assert {"id", "kind", "depends_on", "verdict", "evidence"} <= set(c)
    assert c["verdict"] == "holds" and c["evidence"]
    e = c["evidence"][0]
    assert {"value", "bound", "relation", "ci", "params", "method", "seconds", "verdict"} <= set(e)
    assert data["summary"]["holds"] == 1 and data["summary"]["total"] == 1


def test_only_with_deps_pulls_in_dependencies(capsys):
    code, out, _ = run(capsys, "check", "--json", "--only", "fact1.hard_limit", "--with-deps")
    ids = [c["id"] for c in json.loads(out)["claims"]]
    assert code == 0
    assert ids == ["fact1.soft_representation", "fact1.pointwise_bound", "fact1.hard_limit"]


def test_check_records_to_sqlite(tmp_path, capsys):
    db = tmp_path / "runs.db"
    code, _, _ = run(capsys, "check", "--only", "setting.sphere_law", "--db", str(db))
    assert code == 0
    con = sqlite3.connect(db)
    (n_runs,) = con.execute("SELECT COUNT(*) FROM check_runs").fetchone()
    rows = con.execute("SELECT claim_id, verdict FROM claim_results").fetchall()
    assert n_runs == 1 and rows == [("setting.sphere_law", "holds")]


@pytest.mark.parametrize(
    "args,needle",
    [
        (["check", "--only", "no.such.claim"], "--only"),
        (["check", "--scale", "huge"], "--scale"),
        (["check", "--seed", "-3"], "--seed"),
        (["check", "--seed", "abc"], "--seed"),
        (["check", "--device", "tpu"], "--device"),
        (["no-such-command"], "no-such-command"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, args, needle):
    code, out, err = run(capsys, *args)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("error: ") and needle in err
    assert "Traceback" not in err


def _leaves(cmd, path):
    if isinstance(cmd, click.Group):
        for name, sub in cmd.commands.items():
            yield from _leaves(sub, [*path, name])
    else:
        yield path, cmd


# the commands that draw nothing at random, so take no --seed (every other one does)
SEEDLESS = {("graph",), ("report",), ("harmonics", "sign"), ("harmonics", "dim"),
            ("kernel", "head-vs-target"), ("bounds", "list"), ("bounds", "lower"),
            ("bounds", "heads-needed"), ("witness", "list")}


def test_every_contract_command_exists_and_takes_json_and_seed_where_it_draws(capsys):
    ctx = click.Context(app)
    assert app.list_commands(ctx) == [name for name, _ in CONTRACT]
    leaves = [
        leaf for n in app.list_commands(ctx) for leaf in _leaves(app.get_command(ctx, n), [n])
    ]
    assert len(leaves) >= len(CONTRACT)
    for path, cmd in leaves:
        opts = {o for p in cmd.params for o in getattr(p, "opts", [])}
        assert "--json" in opts, path
        assert ("--seed" in opts) == (tuple(path) not in SEEDLESS), path
        code, out, _ = run(capsys, *path, "--help")
        assert code == 0 and "--json" in out, path


def test_console_script_runs_without_traceback():
    proc = subprocess.run(
        [sys.executable, "-m", "workbench.cli", "check", "--scale", "x"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("error:") and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--only", "setting.sphere_law", "--db", "/nonexistent-dir/x.db"],
        [
            "train",
            "--d",
            "4",
            "--N",
            "2",
            "--rank",
            "1",
            "--heads",
            "1",
            "--layers",
            "1",
            "--steps",
            "1",
            "--seeds",
            "1",
            "--checkpoint",
            "/nonexistent-dir/ck.pt",
        ],
    ],
)
def test_unusable_paths_are_bad_input(capsys, args):
    code, _, err = run(capsys, *args)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err


def test_db_that_is_not_sqlite_is_rejected_before_running(tmp_path, capsys):
    db = tmp_path / "junk.db"
    db.write_text("not a database")
    code, out, err = run(capsys, "check", "--only", "setting.sphere_law", "--db", str(db))
    assert code == 2 and "--db" in err and out == ""
    assert db.read_text() == "not a database"
