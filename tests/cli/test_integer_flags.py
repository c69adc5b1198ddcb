"""The one integer rule, over every command and every integer flag found by walking the command
tree (so a new flag is covered without editing this file): each has a declared range
(``workbench.commands._arguments.IntIn``; every ``--seed`` the one ``SEED``); its two ends
parse; one past either end, a huge value, a negative one and a non-integer are refused with the
bad-input answer (exit 2, one stderr line naming the flag, no torch, nothing written; with
``--json`` the error object on stdout). Every command, with ``--json``, answers an unknown flag
with the error object too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pytest

from tests.cli.bad_input_contract import problems, run_cases
from tests.cli.test_bad_inputs import _RUNNER
from workbench.cli import app
from workbench.commands._arguments import SEED, IntIn, IntSpan
from workbench.core.validation import SEED_MAX

# the value given to a required parameter that is not an integer flag, so that the command
# line is otherwise complete ({W}: the case's working folder)
FILLERS = {"--eps": "0.1", "--theta": "1", "--out": "{W}/out", "PRESET": "tiny",
           "FILE|POINT": "3,1,4", "FILE": "{W}/missing.npz"}


def _leaves(cmd: click.Command, path: tuple[str, ...]) -> list[tuple[tuple[str, ...],
                                                                     click.Command]]:
    if not isinstance(cmd, click.Group):
        return [(path, cmd)]
    ctx = click.Context(cmd)
    out = []
    for name in cmd.list_commands(ctx):
        if ":" in name:  # a plug-in's module:function: the generic command covers it
            continue
        sub = cmd.get_command(ctx, name)
        if sub is not None:
            out += _leaves(sub, (*path, name))
    return out


COMMANDS = _leaves(app, ())


def _flag(p: click.Parameter) -> str:
    return p.opts[0] if isinstance(p, click.Option) else (p.human_readable_name or "").upper()


def _base(cmd: click.Command) -> list[str]:
    """The command's required parameters, each at an accepted value."""
    args: list[str] = []
    for p in cmd.params:
        if not p.required:
            continue
        flag = _flag(p)
        if isinstance(p.type, IntIn):
            value = str(max(p.type.lo, min(p.type.hi, 4)))
        else:
            value = FILLERS[flag]
        args += [value] if isinstance(p, click.Argument) else [flag, value]
    return args


def _with(args: list[str], flag: str, value: str) -> list[str]:
    if flag in args:
        i = args.index(flag)
        return [*args[:i + 1], value, *args[i + 2:]]
    return [*args, flag, value]


INT_FLAGS = [(path, cmd, p) for path, cmd in COMMANDS for p in cmd.params
             if isinstance(p.type, IntIn | IntSpan)]


def test_every_integer_parameter_declares_its_range() -> None:
    plain = [(" ".join(path), _flag(p)) for path, cmd in COMMANDS for p in cmd.params
             if isinstance(p.type, click.types.IntParamType) and not isinstance(p.type, IntIn)]
    assert plain == []
    seeds = [(path, p.type) for path, _, p in INT_FLAGS if p.name == "seed"]
    assert seeds and all(t is SEED for _, t in seeds), seeds
    assert (SEED.lo, SEED.hi) == (0, SEED_MAX)
    assert len(INT_FLAGS) >= 40 and len({path for path, _, _ in INT_FLAGS}) >= 12


def _ends(p: click.Parameter) -> tuple[int, int]:
    t = p.type.ends if isinstance(p.type, IntSpan) else p.type
    assert isinstance(t, IntIn)
    return t.lo, t.hi


@pytest.mark.parametrize("path,cmd,p", INT_FLAGS,
                         ids=[f"{' '.join(path)} {_flag(p)}" for path, _, p in INT_FLAGS])
def test_both_ends_parse_and_one_past_them_does_not(path: tuple[str, ...], cmd: click.Command,
                                                    p: click.Parameter, tmp_path: Path) -> None:
    lo, hi = _ends(p)
    flag = _flag(p)
    base = [a.replace("{W}", str(tmp_path)) for a in _base(cmd)]
    for v in (lo, hi):
        ctx = cmd.make_context(path[-1], _with(base, flag, str(v)))
        got = ctx.params[p.name]
        assert got == (str(v) if isinstance(p.type, IntSpan) else v)
    for v in (str(lo - 1), str(hi + 1), str(10**30), "1e3", "2.0"):
        with pytest.raises(click.BadParameter) as e:
            cmd.make_context(path[-1], _with(base, flag, v))
        assert e.value.param is p


def _cases() -> list[tuple[list[str], str]]:
    """Refused values of every integer flag through the whole CLI, and an unknown flag with
    ``--json`` on every command."""
    out: list[tuple[list[str], str]] = []
    for path, cmd, p in INT_FLAGS:
        lo, hi = _ends(p)
        flag, base = _flag(p), _base(cmd)
        values = [str(lo - 1), str(hi + 1), str(10**30), "-" + str(10**30)]
        out += [([*path, *_with(base, flag, v)], flag) for v in values]
        out.append(([*path, *_with(base, flag, str(hi + 1)), "--json"], flag))
    out += [([*path, *_base(cmd), "--nope", "--json"], "--nope") for path, cmd in COMMANDS]
    return out


CASES = _cases()


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[int, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("ints")
    fixtures, work = tmp / "fixtures", tmp / "work"
    for d in (fixtures / "data", fixtures / "home", work):
        d.mkdir(parents=True)
    return run_cases(_RUNNER, fixtures, work, list(enumerate(a for a, _ in CASES)))


@pytest.mark.parametrize("i", range(len(CASES)), ids=[" ".join(a)[:80] for a, _ in CASES])
def test_a_refused_integer_is_one_line_naming_its_flag(i: int,
                                                       results: dict[int, Any]) -> None:
    args, flag = CASES[i]
    found = problems(results[i], flag, "--json" in args)
    if args[0] == "construct":  # naming a construction loads the registry's plug-ins
        found = [p for p in found if p != "imported torch"]
    assert found == [], (args, results[i]["err"], results[i]["out"][:200])


def test_the_line_states_the_declared_range(results: dict[int, Any]) -> None:
    i = CASES.index((["check", "--seed", str(10**30)], "--seed"))
    assert f"--seed must be an integer in 0..2**32 - 1 (got '{10**30}')" in results[i]["err"]


def test_the_checks_fail_without_the_declared_range(capsys: pytest.CaptureFixture[str]) -> None:
    """A value the command could compute with (``harmonics dim`` takes any degree through
    its logarithm) is refused only by the declared range: without it, the command answers."""
    from workbench.cli import main
    from workbench.testing import plant, replaced

    args = ["harmonics", "dim", "--d", "5", "--degree", str(2**63)]
    capsys.readouterr()
    assert main(args) == 2 and "--degree must be an integer in 0..2**63 - 1" in \
        capsys.readouterr().err
    with plant("workbench.commands._arguments:IntIn.value_of",
               replaced(lambda self, text: int(text))):
        assert main(args) == 0
