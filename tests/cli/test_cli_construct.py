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
    m, c = p["measured_error"], p["claimed_error"]
    resolved = c["relation"] == "<=" or (m["hi"] - m["lo"]) / 2 <= p["resolution"]
    assert p["params"]["seed"] == 3 and p["verdict"] == ("holds" if resolved else "inconclusive")
    assert len(p["runs"]) == p["params"]["seeds"]
    assert p["measured_error"]["level"] == 0.95 and "nan" not in out.lower()


@pytest.mark.parametrize("args", [
    ["random-features", "--d", "8", "--heads", "64", "--eval-samples", "10"],
    ["random-features", "--d", "3", "--heads", "8", "--eval-samples", "4000"],
    ["random-features", "--d", "3", "--heads", "8", "--eval-samples", "2000",
     "--resolution", "0.5"],
    ["full-rank", "--d", "4", "--eps", "0.05", "--eval-samples", "500"],
])
def test_construct_and_check_give_the_same_verdict_on_the_same_intervals(capsys, args):
    """The verdict ``construct`` prints is the one ``Evidence`` (and so ``check``) gives on the
    same measured and claimed intervals: one rule, ``workbench.core.verdict.decide``."""
    from workbench.proofs.claim import Evidence

    rc, out, err = _run(capsys, *args, "--json")
    assert rc in (0, 1), err
    p = json.loads(out)
    m, c = p["measured_error"], p["claimed_error"]
    ev = Evidence(m["mean"], c["value"], c["relation"], "monte_carlo", ci=(m["lo"], m["hi"]),
                  ci_level=m["level"], resolution=p["resolution"],
                  bound_ci=(c["lo"], c["hi"]) if c.get("method") == "monte_carlo" else None)
    assert p["verdict"] == ev.verdict


def test_a_wide_interval_does_not_confirm_an_equality(capsys):
    """Ten samples give an interval about 0.26 wide: it cannot confirm the claimed error."""
    rc, out, _ = _run(capsys, "random-features", "--d", "8", "--heads", "64", "--eval-samples",
                      "10", "--json")
    p = json.loads(out)
    assert rc == 0 and p["measured_error"]["hi"] - p["measured_error"]["lo"] > 0.1
    assert p["verdict"] == "inconclusive"


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
        (["full-rank", "--d", "3", "--N", "4"], "--N"),
        (["random-features", "--law", "gauss"], "law"),
        (["random-features", "--heads", "0"], "--heads"),
        (["majority-vote", "--copy-style", "x"], "--copy-style"),
        (["biased", "--beta", "-2", "--normalizer", "softmax"], "--beta"),
        (["full-rank", "--eps", "1.5"], "--eps"),
        (["majority-vote", "--seeds", "1"], "--seeds"),
        (["majority-vote", "--points", "grid"], "--points"),
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


def test_majority_vote_defaults_reach_a_documented_verdict(capsys):
    rc, out, err = _run(capsys, "majority-vote", "--eval-samples", "400", "--json")
    p = json.loads(out)
    assert p["params"]["seeds"] >= 2  # the default pools several head draws
    m = p["measured_error"]
    assert m["lo"] is not None and m["lo"] <= m["mean"] <= m["hi"]
    assert p["verdict"] in {"holds", "violated", "inconclusive"}
    assert rc == (1 if p["verdict"] == "violated" else 0), err


def test_eps_range_agrees_with_heads_needed(capsys):
    for args in (["construct", "full-rank", "--eps", "1.01"],
                 ["bounds", "heads-needed", "--d", "8", "--rank", "1", "--eps", "1.01"]):
        rc = main(args)
        err = capsys.readouterr().err
        assert rc == 2 and "--eps" in err and "(0, 1]" in err
    rc = main(["construct", "full-rank", "--d", "3", "--eps", "1", "--eval-samples", "200",
               "--json"])
    assert rc == 0 and json.loads(capsys.readouterr().out)["params"]["eps"] == 1.0


def test_cli_choices_match_the_library():
    from workbench.commands.construct import _run as run_mod
    from workbench.commands.construct import biased as b_cmd
    from workbench.commands.construct import majority_vote as mv_cmd
    from workbench.commands.construct import random_features as rf_cmd
    from workbench.constructions import biased, majority_vote, random_features
    from workbench.constructions._kernel_solve import SOLVERS
    from workbench.core.sphere import POINT_LAWS

    assert set(run_mod.POINTS) == set(POINT_LAWS)
    assert set(rf_cmd.LAWS) == set(random_features.HEAD_LAWS)
    assert set(rf_cmd.SOLVERS) == set(SOLVERS)
    assert set(mv_cmd.COPY_STYLES) == set(majority_vote.COPY_STYLES)
    assert set(b_cmd.NORMALIZERS) == set(biased.NORMALIZERS)
    assert set(b_cmd.COEFFICIENTS) == set(biased.COEFFICIENT_LAWS)
