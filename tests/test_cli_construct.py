"""``workbench construct``: JSON contract, exit codes, one-line errors."""

from __future__ import annotations

import json

import pytest

from workbench.cli import main


def _run(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(["construct", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize(
    "args",
    [
        ["full-rank", "--d", "4", "--eps", "0.05"],
        ["full-rank", "--d", "3", "--N", "1", "--beta", "2"],
        ["random-features", "--d", "3", "--heads", "8", "--seeds", "2"],
        ["majority-vote", "--d", "4", "--heads", "7", "--seeds", "3", "--eval-samples", "500"],
        ["majority-vote", "--d", "4", "--heads", "3", "--N", "3", "--eval-samples", "300"],
        ["biased", "--d", "2"],
        ["biased", "--d", "2", "--normalizer", "softmax", "--beta", "50"],
    ],
)
def test_json_output(capsys, args):
    rc, out, err = _run(capsys, *args, "--eval-samples", "2000", "--json", "--seed", "3")
    assert rc == 0, err
    p = json.loads(out)
    assert p["construction"] == args[0]
    assert {"mean", "lo", "hi"} <= set(p["measured_error"])
    assert {"value", "relation", "method"} <= set(p["claimed_error"])
    assert p["params"]["seed"] == 3 and p["verdict"] in {"holds", "not_checked"}
    assert len(p["runs"]) == p["params"]["seeds"]


def test_human_output(capsys):
    rc, out, _ = _run(capsys, "biased", "--d", "2", "--eval-samples", "200")
    assert rc == 0 and "measured error" in out and "claimed error" in out


def test_same_seed_same_numbers(capsys):
    args = ["random-features", "--d", "3", "--heads", "4", "--eval-samples", "500", "--json"]
    a = json.loads(_run(capsys, *args)[1])
    b = json.loads(_run(capsys, *args)[1])
    assert a["measured_error"] == b["measured_error"]


@pytest.mark.parametrize(
    "args,name",
    [
        (["full-rank", "--d", "1"], "d"),
        (["full-rank", "--d", "3", "--N", "4"], "N"),
        (["random-features", "--law", "gauss"], "law"),
        (["random-features", "--heads", "0"], "H"),
        (["majority-vote", "--copy-style", "x"], "--copy-style"),
        (["biased", "--beta", "-2", "--normalizer", "softmax"], "beta"),
        (["biased", "--eval-samples", "1"], "--eval-samples"),
        (["full-rank", "--seeds", "0"], "seeds"),
        (["full-rank", "--d", "x"], "d"),
    ],
)
def test_bad_input_exit_2_one_line(capsys, args, name):
    rc, out, err = _run(capsys, *args)
    assert rc == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and name in err
