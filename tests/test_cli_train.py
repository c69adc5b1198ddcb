"""``workbench train`` (issue 5): JSON contract, one-line bad-input errors, resumable runs."""

from __future__ import annotations

import json

import pytest

from workbench.cli import main

ARGS = ["train", "--d", "6", "--N", "2", "--rank", "1", "--heads", "3", "--steps", "15",
        "--batch", "32", "--eval-samples", "500", "--device", "cpu"]


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_json_per_seed_and_best(capsys) -> None:
    code, out, err = run(capsys, *ARGS, "--seeds", "3", "--seed", "4", "--json")
    assert code == 0, err
    p = json.loads(out)
    assert [s["seed"] for s in p["seeds"]] == [4, 5, 6]
    assert p["params"]["paper"] == 3 * 1 * 6 and p["params"]["total"] == 4 * 3 * 6
    for s in p["seeds"]:
        h = s["heldout"]
        assert h["lo"] <= h["mean"] <= h["hi"] and h["n"] == 500 and h["level"] == 0.95
    assert p["best_of_seeds"]["best_loss"] == min(s["best_loss"] for s in p["seeds"])
    assert p["task"] == {"name": "nearest", "d": 6, "N": 2, "points": "iid",
                         "queries": "uniform"}


@pytest.mark.parametrize("extra", [["--task", "farthest", "--layers", "2"],
                                   ["--task", "regression", "--layers", "2"],
                                   ["--distribution", "orthonormal"]])
def test_other_tasks_run(capsys, extra: list[str]) -> None:
    code, out, err = run(capsys, *ARGS, *extra, "--json")
    assert code == 0, err
    assert json.loads(out)["seeds"][0]["heldout"]["mean"] > 0


@pytest.mark.parametrize("flag,value,name", [("--rank", "7", "--rank"), ("--steps", "0", "--steps"),
                                             ("--d", "1", "--d"), ("--seeds", "0", "--seeds"),
                                             ("--lr", "-1", "--lr"), ("--N", "9", "--N")])
def test_bad_input_one_line_exit_2(capsys, flag: str, value: str, name: str) -> None:
    args = list(ARGS)
    if flag in args:
        args[args.index(flag) + 1] = value
    else:
        args += [flag, value]
    if flag == "--N":
        args += ["--distribution", "orthonormal"]
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and name in err and "Traceback" not in err


def test_checkpoint_rerun_gives_same_result(capsys, tmp_path) -> None:
    ck = str(tmp_path / "ck.pt")
    code, first, err = run(capsys, *ARGS, "--checkpoint", ck, "--json")
    assert code == 0, err
    code, second, err = run(capsys, *ARGS, "--checkpoint", ck, "--json")
    assert code == 0, err
    assert json.loads(first)["seeds"] == json.loads(second)["seeds"]
    code, _, err = run(capsys, *ARGS, "--seed", "3", "--checkpoint", ck, "--json")
    assert code == 2 and "checkpoint" in err


def test_human_output(capsys) -> None:
    code, out, err = run(capsys, *ARGS)
    assert code == 0, err
    assert "held-out" in out and "best of seeds" in out
