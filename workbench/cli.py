"""The ``workbench`` console script (the CLI contract in docs/architecture.md and README).

Every command takes ``--json``, and with it prints one JSON object on stdout on every exit
path (errors: ``workbench.commands._common.error_object``). Exit codes: 0 ok, 1
violated/failed, 2 bad input, 128 + the signal when interrupted (130, 143, 129:
``workbench.commands._interrupts``). Bad input prints exactly one line on stderr naming the
flag and its allowed range, never a traceback, and is answered before torch is imported
(``workbench.commands._arguments``).
"""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import Sequence

import click

from workbench import __version__
from workbench.commands import registry
from workbench.commands._arguments import (
    LONG_ECHO,
    command_of,
    cut,
    refuse_repeats,
    rephrase,
    screen,
)
from workbench.commands._common import EXIT_BAD_INPUT, fail, new_run, wants_json
from workbench.commands._interrupts import as_interrupted
from workbench.commands._interrupts import install as install_signal_handlers


@click.group(cls=registry.LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="workbench")
def app() -> None:
    """Check theorems about rank, heads, depth and sequence length in attention layers."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; map bad input to one stderr line and exit code 2."""
    args = list(sys.argv[1:] if argv is None else argv)
    if argv is None:  # the program itself, about to exit: see _fast_exit
        install_signal_handlers()
        try:
            return main(args)
        finally:
            _fast_exit()
    new_run()
    try:
        args = screen(args)
        if (bare := _bare(args)) is not None:
            return bare
        refuse_repeats(app, args)
        rv = app.main(args=args, prog_name="workbench", standalone_mode=False)
    except click.exceptions.Exit as e:  # --help, --version
        return int(e.exit_code or 0)
    except click.Abort as e:
        if isinstance(e.__cause__, KeyboardInterrupt):  # outside a command: while parsing
            stop = as_interrupted(e.__cause__)
            return fail(stop.line(), stop.exit_code, wants_json(args))
        return _bad("aborted", args)
    except click.UsageError as e:
        return _bad(rephrase(e, app, args), args)
    except click.ClickException as e:
        return fail(_one_line(e.format_message(), args), e.exit_code, wants_json(args))
    except OSError as e:  # an unreadable or unwritable path given on the command line
        where = f": {e.filename}" if e.filename else ""
        return _bad(f"{e.strerror or str(e)}{where}", args)
    except ValueError as e:  # commands name the flag (commands._common.flag_message)
        return _bad(str(e), args)
    return int(rv) if isinstance(rv, int) else 0


def _bare(args: Sequence[str]) -> int | None:
    """``workbench``, ``workbench bounds`` (a group without its command) or ``--version``,
    each alone or with ``--json``: the help on stdout (as JSON: the commands and their one-line
    summaries) or the version, exit 0. Anything else: None."""
    rest = [a for a in args if a != "--json"]
    as_json = len(rest) < len(args)
    if rest == ["--version"]:
        click.echo(json.dumps({"version": __version__}) if as_json
                   else f"workbench, version {__version__}")
        return 0
    cmd, i = command_of(app, rest)
    if i != len(rest) or not isinstance(cmd, click.Group):
        return None
    ctx = click.Context(cmd, info_name=" ".join(["workbench", *rest]))
    if as_json:
        names = cmd.list_commands(ctx)
        subs = {n: registry.SUMMARY.get(n) if cmd is app else
                (cmd.get_command(ctx, n).get_short_help_str(200)  # type: ignore[union-attr]
                 if cmd.get_command(ctx, n) is not None else None) for n in names}
        click.echo(json.dumps({"command": ctx.info_name, "commands": subs}, indent=2))
    else:
        click.echo(cmd.get_help(ctx))
    return 0


def _fast_exit() -> None:
    """Freeze every object before the interpreter exits: its last collections then skip them
    (over a second once torch, sympy and the claims are loaded). Only for the program itself:
    a caller of ``main(argv)`` keeps its collector."""
    gc.freeze()


def _bad(msg: str, args: Sequence[str]) -> int:
    return fail(_one_line(msg, args), EXIT_BAD_INPUT, wants_json(args))


def _one_line(msg: str, args: Sequence[str] = ()) -> str:
    """``msg`` on one line, with any argument longer than ``LONG_ECHO`` that it echoes cut."""
    for a in sorted({a for a in args if len(a) > LONG_ECHO}, key=len, reverse=True):
        msg = msg.replace(a, cut(a))
    return " ".join(msg.split())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
