"""Plug-ins that fail and ``--param`` numbers out of range (docs/extending.md): a user's bound or
construction that raises, exits, returns nan or the wrong shape, or a file that does not import,
is exit 2 with one stderr line naming the flag, no traceback and nothing written; a ``--param``
outside its declared range names the range."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.cli import main

# ---- plug-ins that fail -------------------------------------------------------------------

PLUGINS = '''
import math
from workbench.verifiers.presets import Preset

def bound_raises(d, rank, heads, N):
    return 1 / 0

def bound_nan(d, rank, heads, N):
    return math.nan

def bound_exits(d, rank, heads, N):
    raise SystemExit(0)

def bound_wrong(x):
    return 0.1

def bound_good(d, rank, heads, N):
    return 0.01

def bound_text(d, rank, heads, N):
    return "0.3"

def bound_bool(d, rank, heads, N):
    return True

not_callable = 3

def cons_raises(d, rank, heads, N, seed):
    raise RuntimeError("boom")

def cons_exits(d, rank, heads, N, seed):
    raise SystemExit(0)

def cons_wrong(d):
    return None

def cons_none(d, rank, heads, N, seed):
    return None

def cons_float(d, rank, heads, N, seed, *, scale: float = 1.0, count: int = 3):
    raise RuntimeError("not reached: its parameters are refused first")

def cons_bad_model(d, rank, heads, N, seed):
    def model(X, y):
        raise RuntimeError("the model fails")
    return model, 0.5

def _no_runs(scale, seed):
    raise RuntimeError("no runs today")

preset_raises = Preset("p-raises", "nothing", "standard", "a test", "L", (), False, _no_runs)
preset_malformed = Preset("p-bad", "nothing", "standard", "a test", "L", (), False,
                          lambda scale, seed: [1, 2])
'''
BROKEN = {"wbf_syntax": "def f(d, rank, heads, N):\n    return (\n",
          "wbf_raises": "raise RuntimeError('at import')\n",
          "wbf_exits": "import sys\nsys.exit(0)\n",
          "wbf_missing": "import no_such_module_here\n"}
LOWER = ["bounds", "lower", "--d", "8", "--rank", "1", "--heads", "2", "--bound"]
FALSIFY = ["falsify", "--d", "4", "--rank", "1", "--heads", "1", "--budget", "1", "--bound"]
SANDWICH = ["bounds", "sandwich", "--d", "4", "--rank", "1", "--heads", "1", "--witness-dir",
            "{tmp}/w", "--db", "{tmp}/s.sqlite"]
CONSTRUCT = ["--d", "4", "--rank", "1", "--heads", "1", "--eval-samples", "200"]


@pytest.fixture
def plugins(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Importable plug-in modules that fail in every way (``wbf``: the good module, whose
    functions fail when called; the others fail when imported)."""
    where = tmp_path_factory.getbasetemp() / "plugin-modules"
    if not where.exists():
        where.mkdir()
        (where / "wbf.py").write_text(PLUGINS)
        for name, text in BROKEN.items():
            (where / f"{name}.py").write_text(text)
    monkeypatch.syspath_prepend(str(where))


@pytest.mark.parametrize("argv, flag, why", [
    ([*LOWER, "wbf_syntax:f"], "--bound", "SyntaxError: '(' was never closed"),
    ([*LOWER, "wbf_missing:f"], "--bound", "No module named 'no_such_module_here'"),
    ([*LOWER, "wbf_raises:f"], "--bound", "RuntimeError: at import"),
    ([*LOWER, "wbf_exits:f"], "--bound", "cannot be imported: SystemExit(0)"),
    ([*LOWER, "wbf:bound_raises"], "--bound", "failed at (8, 1, 2, 2): ZeroDivisionError"),
    ([*LOWER, "wbf:bound_nan"], "--bound", "returned nan at (8, 1, 2, 2), not a finite number"),
    ([*LOWER, "wbf:bound_exits"], "--bound", "failed at (8, 1, 2, 2): SystemExit(0)"),
    ([*LOWER, "wbf:bound_wrong"], "--bound", "must be a function of (d, rank, heads, N)"),
    ([*LOWER, "wbf:bound_text"], "--bound", "returned str '0.3' at (8, 1, 2, 2), not a number"),
    ([*LOWER, "wbf:bound_bool"], "--bound", "returned bool True at (8, 1, 2, 2), not a number"),
    ([*FALSIFY, "wbf:bound_text"], "--bound", "returned str '0.3'"),
    ([*LOWER, "wbf:not_callable"], "--bound", "must name a Bound or a function (it names int"),
    ([*FALSIFY, "wbf:bound_nan"], "--bound", "returned nan at (4, 1, 1, 2)"),
    ([*FALSIFY, "wbf:bound_exits"], "--bound", "SystemExit(0)"),
    ([*FALSIFY, "wbf_syntax:f"], "--bound", "SyntaxError"),
    (["construct", "wbf:cons_raises", *CONSTRUCT], "NAME", "RuntimeError: boom"),
    (["construct", "wbf:cons_exits", *CONSTRUCT], "NAME", "SystemExit(0)"),
    (["construct", "wbf:cons_wrong", *CONSTRUCT], "NAME", "(d, rank, heads, N, seed)"),
    (["construct", "wbf:cons_none", *CONSTRUCT], "NAME", "returned NoneType"),
    (["construct", "wbf:cons_bad_model", *CONSTRUCT], "NAME",
     "failed when its model was measured: RuntimeError: the model fails"),
    (["construct", "wbf_raises:f", *CONSTRUCT], "NAME", "RuntimeError: at import"),
    (["sweep", "wbf:preset_raises", "--db", "{tmp}/s.sqlite"], "PRESET", "no runs today"),
    (["sweep", "wbf:preset_malformed", "--db", "{tmp}/s.sqlite"], "PRESET",
     "gave 1 (int) among its runs, not a Run"),
    (["sweep", "wbf_exits:p", "--db", "{tmp}/s.sqlite"], "PRESET", "SystemExit(0)"),
    ([*SANDWICH, "--bound", "wbf:bound_nan"], "--bound", "not a finite number"),
    ([*SANDWICH, "--witness", "wbf:cons_raises"], "--witness", "RuntimeError: boom"),
])
def test_a_failing_plugin_is_one_line_and_writes_nothing(
        plugins: None, tmp_path: Path, argv: list[str], flag: str, why: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main([a.format(tmp=tmp_path) for a in argv]) == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith(f"error: {flag}") and "Traceback" not in err
    assert why in err, err
    name = next(a for a in argv if a.startswith("wbf"))
    assert name in err
    assert list(tmp_path.iterdir()) == []  # no store, no witness folder


def test_a_good_plugin_still_runs(plugins: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*LOWER, "wbf:bound_good", "--json"]) == 0
    assert '"value": 0.01' in capsys.readouterr().out


# ---- --param numbers: the declared types and ranges ---------------------------------------

@pytest.mark.parametrize("argv, why", [
    (["hardmax-rank1", "--param", "steps=-5"], "steps must be an integer in 0..100000 (got -5)"),
    (["hardmax-rank1", "--param", "steps=9223372036854775808"],
     "steps must be an integer in 0..100000 (got 9223372036854775808)"),
    (["hardmax-rank1", "--param", "steps=0x10"], "steps must be an integer in 0..100000"),
    (["hardmax-rank1", "--param", "steps=1e3"], "steps must be an integer in 0..100000"),
    (["bayes-heads", "--param", "n_fit=0"], "n_fit must be an integer in 100..1000000000"),
    (["bayes-heads", "--param", "n_eval=-3"], "n_eval must be an integer in 100..1000000000"),
    (["wbf:cons_float", "--param", "scale=nan"], "scale must be a finite number in (-inf, inf)"),
    (["wbf:cons_float", "--param", "scale=inf"], "scale must be a finite number"),
    (["wbf:cons_float", "--param", "scale=1e309"], "scale must be a finite number"),
    (["wbf:cons_float", "--param", "scale=0x10"], "scale must be a finite number"),
    (["wbf:cons_float", "--param", "count=99999999999999999999"],
     "count must be an integer in -9223372036854775807..2**63 - 1"),
])
def test_a_param_out_of_its_declared_range_names_the_range(
        plugins: None, argv: list[str], why: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["construct", *argv, "--d", "4", "--rank", "1", "--heads", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: --param ") and why in err, err


def test_a_declared_range_holds_in_the_library_too() -> None:
    from workbench.plugins import get_construction

    c = get_construction("bayes-heads")
    assert c.check_params({"n_fit": 100}) == {"n_fit": 100}
    with pytest.raises(ValueError, match=r"param n_eval must be an integer in 100\.\."):
        c.check_params({"n_eval": 99})
    with pytest.raises(ValueError, match="param must be one of"):
        c.check_params({"steps": 5})
