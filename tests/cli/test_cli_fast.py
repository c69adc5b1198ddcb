"""Fast, safe answers: bad input is answered before torch is imported, JSON holds
``null`` with a reason instead of ``"nan"``, ``--help`` imports no command module."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from workbench.commands._common import exact_decimal, int_digits, readable_int, to_jsonable

BAD = [
    ["bounds", "lower", "--d", "1", "--rank", "1", "--heads", "1"],
    ["bounds", "heads-needed", "--d", "8", "--rank", "1", "--eps", "2"],
    ["bounds", "lower", "--bound", "harmonic", "--d", "1", "--rank", "1", "--heads", "1"],
    ["bounds", "lower", "--bound", "certified", "--d", "8", "--rank", "1", "--heads", "1",
     "--N", "3"],
    ["harmonics", "dim", "--d", "0", "--degree", "1"],
    ["harmonics", "sign", "--d", "5", "--max-degree", "-1"],
    ["kernel", "head-vs-target", "--d", "4", "--theta", "9"],
    ["train", "--d", "4", "--N", "2", "--rank", "9", "--heads", "1", "--steps", "1"],
    ["train", "--d", "4", "--N", "2", "--rank", "1", "--heads", "0", "--steps", "1"],
    ["construct", "full-rank", "--eps", "3"],
    ["construct", "majority-vote", "--heads", "0"],
    ["construct", "biased", "--d", "1"],
    ["construct", "random-features", "--heads", "-1"],
    ["construct", "hardmax-rank1", "--param", "nope=1"],
    ["construct", "bayes-heads", "--rank", "0"],
    ["bounds", "sandwich", "--d", "6", "--rank", "1", "--heads", "1", "--bound", "fiber",
     "--witness", "biased"],
    ["falsify", "--bound", "certified", "--budget", "0"],
    ["check", "--seed", "-1"],
]

_PROBE = (
    "import sys, json; from workbench.cli import main; rc = main(json.loads(sys.argv[1])); "
    "print(json.dumps({'rc': rc, 'torch': 'torch' in sys.modules, "
    "'sympy': 'sympy' in sys.modules, 'scipy': 'scipy' in sys.modules}))"
)


@pytest.mark.parametrize("args", BAD, ids=lambda a: " ".join(a[:2]))
def test_bad_input_is_answered_before_torch_is_imported(args: list[str]) -> None:
    proc = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(args)], capture_output=True,
                          text=True, timeout=120)
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["rc"] == 2, proc.stderr
    assert not res["torch"] and not res["sympy"], args
    err = proc.stderr.strip()
    assert err.startswith("error: --") and "\n" not in err, err  # names the flag, one line


def test_help_imports_no_command_module() -> None:
    probe = ("import sys; from workbench.cli import main; main(['--help']); "
             "print(sorted(m for m in sys.modules if m.startswith('workbench.commands.')))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120).stdout
    assert out.strip().splitlines()[-1] == "['workbench.commands._arguments', " \
        "'workbench.commands._common', 'workbench.commands._error_meaning', " \
        "'workbench.commands._interrupts', 'workbench.commands._paths', " \
        "'workbench.commands.registry']"
    assert "falsify" in out and "check" in out


def test_nan_becomes_null_with_a_reason() -> None:
    out = to_jsonable({"a": math.nan, "ci": [math.nan, 1.0], "b": 2.0, "inner": {"x": math.inf}})
    assert out["a"] is None and out["ci"] == [None, 1.0] and out["b"] == 2.0
    assert set(out["null_reasons"]) == {"a", "ci"} and out["inner"]["x"] is None
    assert "inf" in out["inner"]["null_reasons"]["x"]
    given = to_jsonable({"a": math.nan, "null_reasons": {"a": "one draw only"}})
    assert given["null_reasons"] == {"a": "one draw only"}
    text = json.dumps(out)
    assert "\"nan\"" not in text and "NaN" not in text


def test_big_integers_print_readably() -> None:
    for n in (0, 7, 10, 999, 10**15 - 1, 10**15, 99999999999999999999, 3 * 10**5000 + 1):
        assert int_digits(n) == len(exact_decimal(n))
    assert readable_int(1234567) == "1,234,567"
    assert readable_int(99999999999999999999) == "1.0000e+20 (20 digits)"
    assert readable_int(3 * 10**5000 + 1) == "3.0000e+5000 (5001 digits)"


ANSWERS = [
    ["bounds", "lower", "--d", "8", "--rank", "1", "--heads", "2"],
    ["bounds", "lower", "--d", "12", "--rank", "2", "--heads", "4"],  # the fiber bound wins
    ["bounds", "heads-needed", "--d", "8", "--rank", "1", "--eps", "0.3"],
    ["harmonics", "sign", "--d", "5", "--max-degree", "7"],
    ["harmonics", "dim", "--d", "3", "--degree", "2"],
    ["kernel", "head-vs-target", "--d", "4", "--theta", "1"],
    ["bounds", "lower", "--d", "8", "--rank", "1", "--heads", "2", "--help"],
]


@pytest.mark.parametrize("args", ANSWERS, ids=lambda a: " ".join(a[:2]))
def test_the_mathematics_answers_without_torch_sympy_or_scipy(args: list[str]) -> None:
    """bounds, harmonics and kernels compute with numpy, mpmath and exact integers only (scipy's
    special functions alone cost a few tenths of a second to import)."""
    proc = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(args)], capture_output=True,
                          text=True, timeout=120)
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["rc"] == 0, proc.stderr
    assert not res["torch"] and not res["sympy"] and not res["scipy"], args


def test_only_the_program_freezes_its_objects_before_exit() -> None:
    """``main()`` as the program freezes the collector's objects (its exit skips them); a
    caller of ``main(argv)`` keeps its collector as it was."""
    import gc

    from workbench.cli import main

    before = gc.get_freeze_count()
    assert main(["harmonics", "dim", "--d", "3", "--degree", "2"]) == 0
    assert gc.get_freeze_count() == before
    code = ("import gc, sys; sys.argv = ['workbench', 'harmonics', 'dim', '--d', '3', "
            "'--degree', '2']; from workbench.cli import main; rc = main(); "
            "print(rc, gc.get_freeze_count() > 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[-2:] == ["0", "True"]
