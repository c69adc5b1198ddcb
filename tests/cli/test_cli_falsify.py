"""``workbench falsify``: finds a planted wrong bound, prints a replay command that
reproduces the counterexample, finds none against the certified bound, validates its input."""

from __future__ import annotations

import json
import shlex

import pytest

from workbench.cli import main

FAST = ["--steps", "30", "--eval-samples", "2000", "--budget", "2"]


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_planted_bound_is_found_and_replays(capsys) -> None:
    code, out, err = run(capsys, "falsify", "--bound", "constant:0.9", "--d", "4", "--rank", "1",
                         "--heads", "2", *FAST, "--json")
    assert code == 1 and "counterexample" in err
    p = json.loads(out)
    cx = p["counterexample"]
    assert p["violated"] and cx["estimate"]["hi"] < 0.9
    cmd = shlex.split(p["replay"])
    assert cmd[:4] == ["workbench", "falsify", "--bound", "constant:0.9"]
    code, out, _ = run(capsys, *cmd[1:], "--json")
    again = json.loads(out)["replayed"]
    assert code == 1 and again["estimate"] == cx["estimate"]  # bit for bit
    code, out, _ = run(capsys, "falsify", "--bound", "constant:0.9", "--d", "4", "--rank", "1",
                       "--heads", "2", *FAST)
    assert "COUNTEREXAMPLE" in out and "replay: workbench falsify" in out


def test_certified_bound_survives_a_small_search(capsys) -> None:
    from workbench.core.bounds.certified import certified_lower_bound
    from workbench.core.bounds.harmonic_count.harmonic import harmonic_bound

    code, out, err = run(capsys, "falsify", "--d", "4:6", "--rank", "1", "--heads", "1:3", *FAST,
                         "--json")
    p = json.loads(out)
    assert code == 0, err
    assert p["attacks"] == ["generalized", "train"]  # the class the bound covers comes first
    assert not p["violated"] and p["replay"] is None and len(p["trials"]) == 2 * 2
    for t in p["trials"]:
        a = t["attempt"]
        assert t["bound"] == certified_lower_bound(a["d"], a["r"], a["H"]).value
        assert t["bound"] >= harmonic_bound(a["d"], a["r"], a["H"]).enclosure[0]


@pytest.mark.parametrize("args,flag", [
    (["--bound", "tight"], "--bound"),
    (["--bound", "constant:1.5"], "--bound"),
    (["--N", "3"], "--N"),
    (["--d", "8:4"], "--d"),
    (["--rank", "x"], "--rank"),
    (["--budget", "0"], "--budget"),
    (["--alpha", "1"], "--alpha"),
    (["--replay", "d=4,r=1"], "--replay"),
    (["--attack", "gradient"], "--attack"),
])
def test_bad_input(capsys, args: list[str], flag: str) -> None:
    code, out, err = run(capsys, "falsify", *args)
    assert code == 2 and out == "" and err.count("\n") == 1 and flag in err


def too_strong(d: int, rank: int, heads: int, N: int) -> float:
    """A plug-in bound for the test below: 1.5 x the certified bound (false at d = 6, r = 1)."""
    from workbench.core.bounds.certified import certified_lower_bound

    return 1.5 * certified_lower_bound(d, rank, heads).value


def test_a_module_function_bound_is_attacked_named_and_replayed(capsys) -> None:
    spec = "tests.cli.test_cli_falsify:too_strong"
    code, out, err = run(capsys, "falsify", "--bound", spec, "--d", "6", "--rank", "1",
                         "--heads", "1", "--budget", "1", "--steps", "150", "--json")
    p = json.loads(out)
    assert code == 1 and p["violated"], err
    assert p["bound"] == spec and p["bound_info"]["status"] == "conjectured"
    assert p["replay"].startswith(f"workbench falsify --bound {spec} --replay ")
    cx = p["counterexample"]
    fields = p["replay"].split("--replay ", 1)[1]
    code2, out2, _ = run(capsys, "falsify", "--bound", spec, "--replay", fields, "--json")
    q = json.loads(out2)
    assert code2 == 1 and q["bound"] == spec
    assert q["replayed"]["estimate"] == cx["estimate"] and q["replayed"]["bound"] == cx["bound"]


def test_an_unknown_bound_is_refused_naming_the_flag(capsys) -> None:
    code, _, err = run(capsys, "falsify", "--bound", "no-such-bound")
    assert code == 2 and err.count("\n") == 1 and "--bound" in err and "certified" in err


def test_the_command_offers_the_falsifiers_attacks() -> None:
    """One attack list, one home: ``workbench.verifiers.attacks`` (torch-free)."""
    from workbench.commands import falsify as command
    from workbench.verifiers import falsify

    option = next(p for p in command.cli.params if p.name == "attacks")
    assert tuple(option.type.choices) == falsify.ATTACKS
    assert command.DEFAULT_ATTACKS is falsify.DEFAULT_ATTACKS


def test_n_keys_bound_is_attacked_beyond_two_keys(capsys) -> None:
    """--bound n-keys at N = 3, 4: every trial is scored against the registered bound's lower
    end at its own (d, r, H, N), and the trained models stay above it."""
    from workbench.plugins import get_bound

    code, out, err = run(capsys, "falsify", "--bound", "n-keys", "--d", "8", "--N", "3:4",
                         "--rank", "1", "--heads", "1:2", *FAST, "--json")
    assert code == 0, err
    p = json.loads(out)
    assert p["bound_info"]["name"] == "n-keys" and len(p["trials"]) == 2 * 2
    b = get_bound("n-keys")
    for t in p["trials"]:
        a = t["attempt"]
        assert 3 <= a["N"] <= 4 and t["bound"] == b.interval(a["d"], a["r"], a["H"], a["N"])[0]
        assert 0 < t["bound"] < 1 - 1 / a["N"]


def test_a_planted_n_keys_bound_four_times_too_large_is_found(capsys) -> None:
    from workbench.testing import plant

    def four_times(f):
        def value(*args, **kw):
            from workbench.core.bounds.value import N_KEYS, BoundValue

            v = f(*args, **kw)
            return BoundValue((N_KEYS.at((4 * v.value, 4 * v.value), "x4"),))

        return value

    with plant("workbench.core.bounds.sequence_length.n_keys:n_keys_bound", four_times):
        code, out, _ = run(capsys, "falsify", "--bound", "n-keys", "--d", "8", "--N", "3",
                           "--rank", "1", "--heads", "1", "--budget", "1", "--steps", "150",
                           "--eval-samples", "2000", "--json")
    assert code == 1 and json.loads(out)["violated"]


@pytest.mark.parametrize("args", [["--N", "2"], ["--d", "6", "--N", "3:5"], ["--d", "4:8",
                                                                               "--N", "3"]])
def test_n_keys_search_box_must_lie_where_the_bound_applies(capsys, args) -> None:
    code, out, err = run(capsys, "falsify", "--bound", "n-keys", *args)
    assert code == 2 and out == "" and err.count("\n") == 1 and "--N" in err and "--d" in err
