"""Shared pieces of the CLI contract: ``--json``/``--seed`` options, output, exit codes.

Exit codes: 0 ok; 1 a claim was violated or a check failed; 2 bad input; 128 + the signal when
interrupted (130 SIGINT, 143 SIGTERM, 129 SIGHUP; ``workbench.commands._interrupts``).
Commands raise ``ValueError`` (or ``click.BadParameter``) for bad input; the ``common_options``
wrapper renames the parameter in the message to its flag (``H must`` -> ``--heads must``) and
``workbench.cli.main`` turns it into one line on stderr and exit code 2.

With ``--json`` every exit path prints one JSON object on stdout: the command's payload, or when
it ends before printing one (bad input, a failure, a signal) :func:`error_object`,
``{"error": LINE, "exit_code": CODE, "parameter": FLAG}`` (``parameter`` is the flag or argument
the line names, or ``null``); the one stderr line is printed as well (:func:`fail`).

Conventions shared by every command: one confidence level (``LEVEL``, 95 %) printed with each
interval, except where a verdict is made beyond it (``workbench.core.verdict.VERDICT_LEVEL``,
99.9 %: at 95 % a true claim would read ``violated``, exit 1, once in twenty runs); the error is
``ERROR_MEANING``; JSON holds ``null`` (with a reason under ``null_reasons``) where a number is
undefined, never ``"nan"``; progress goes to stderr, only on a terminal and never with
``--json``.
"""

from __future__ import annotations

import functools
import json
import math
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import click

from workbench.commands._arguments import SEED
from workbench.commands._error_meaning import ERROR_MEANING as ERROR_MEANING
from workbench.commands._interrupts import as_interrupted
from workbench.commands._paths import nvidia_driver_present, readable_file, writable_path

if TYPE_CHECKING:
    from rich.progress import Progress
    from rich.status import Status

F = TypeVar("F", bound=Callable[..., Any])

LEVEL = 0.95  # the one default confidence level of every command
# parameter names used by the library -> the flag that carries them on the command line
SYNONYMS = {"H": "heads", "r": "rank", "L": "layers", "l": "degree", "K": "seeds",
            "max_degree": "max-degree", "samples": "eval-samples", "points": "points"}

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


class CheckFailed(click.ClickException):
    """A claim was violated or a check failed: exit code 1."""

    exit_code = EXIT_FAILED


def common_options(func: F) -> F:
    """Add the contract's ``--json`` and ``--seed`` options to a command that draws at random."""
    return click.option("--seed", type=SEED, default=0, show_default=True,
                        help="Random seed.")(json_option(func))


def json_option(func: F) -> F:
    """Add the contract's ``--json`` option (and its flag-naming errors) to a command that draws
    nothing at random, so it takes no ``--seed``."""

    @click.option("--json", "as_json", is_flag=True, help="Machine-readable output on stdout.")
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except ValueError as e:
            ctx = click.get_current_context(silent=True)
            msg = str(e) if ctx is None else flag_message(str(e), ctx.command)
            raise ValueError(msg) from None
        except KeyboardInterrupt as e:  # a signal (commands._interrupts): 128 + its number
            stop = as_interrupted(e)
            fail(stop.line(), stop.exit_code, bool(kwargs.get("as_json")))
            raise click.exceptions.Exit(stop.exit_code) from None

    return wrapper  # type: ignore[return-value]


@contextmanager
def plugin_errors(flags: Mapping[str, str]) -> Iterator[None]:
    """Within: a user's object that fails when called (``workbench.plugins.PluginFailed``) is
    bad input, one line naming its flag (``flags``: kind -> flag, e.g. ``{"bound": "--bound"}``),
    the object and the error."""
    from workbench.plugins import PluginFailed

    try:
        yield
    except PluginFailed as e:
        flag = flags.get(e.kind, e.kind)
        raise ValueError(f"{flag} {e.name} {e}") from None


DEVICES = ("auto", "cpu", "cuda")
NO_CUDA = "--device must be 'cpu' or 'auto' on this machine (no CUDA device found)"


def device_option() -> Callable[[F], F]:
    """The ``--device`` option: ``auto`` (CUDA when available, the one default), ``cpu`` or
    ``cuda``; ``cuda`` on a machine without an NVIDIA driver is refused while parsing."""
    return click.option("--device", type=click.Choice(DEVICES), default="auto",
                        show_default=True, callback=_device_present)


def _device_present(ctx: click.Context, param: click.Parameter, value: str) -> str:
    if value == "cuda" and not nvidia_driver_present():
        raise ValueError(NO_CUDA)
    return value


def path_option(flag: str, help: str, folder: bool = False,
                access: str | None = None) -> Callable[[F], F]:
    """An optional path option (default ``None``): a file, or with ``folder=True`` a folder.
    ``access="write"`` (the command writes there) or ``"read"`` checks it while parsing,
    before any work (:func:`writable_path`, :func:`readable_file`)."""

    def check(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if value is None or access is None:
            return value
        if access == "read":
            return readable_file(flag, value)
        return writable_path(flag, value, folder)

    return click.option(flag, type=click.Path(file_okay=not folder, dir_okay=folder),
                        default=None, help=help, callback=check)


_NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_\-]*)((?:\[\d+\])?) must ")


def flag_message(msg: str, command: click.Command) -> str:
    """Name the flag, not the Python parameter: ``H must ...`` -> ``--heads must ...``."""
    m = _NAME.match(msg)
    if m is None:
        return msg
    name = m.group(1)
    flags: dict[str, str] = {}
    for p in command.params:
        if isinstance(p, click.Option) and p.name:
            primary = p.opts[0]
            for key in (p.name, *(o.lstrip("-") for o in p.opts)):
                flags.setdefault(key, primary)
                flags.setdefault(key.replace("-", "_"), primary)
    flag = flags.get(name) or flags.get(SYNONYMS.get(name, ""))
    return f"{flag}{m.group(2)}{msg[len(name) + len(m.group(2)):]}" if flag else msg


class AliasCommand(click.Command):
    """A command that also accepts older flag spellings (``aliases``: old -> new), unlisted."""

    aliases: dict[str, str] = {}

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        out = []
        seen: dict[str, str] = {}  # flag -> the spelling first used for it
        for a in args:
            flag, eq, val = a.partition("=")
            new = self.aliases.get(flag, flag)
            if new in self.aliases.values() and seen.setdefault(new, flag) != flag:
                old = flag if flag != new else seen[new]
                raise ValueError(f"{new} was given twice, as {seen[new]} and {flag} ({old} is "
                                 "its old spelling): give it once")
            out.append(new + eq + val if flag in self.aliases else a)
        return super().parse_args(ctx, out)


def aliases(mapping: dict[str, str]) -> Callable[[click.Command], click.Command]:
    """Give an ``AliasCommand`` its hidden old spellings: ``@aliases({"--r": "--rank"})``."""

    def deco(cmd: click.Command) -> click.Command:
        if not isinstance(cmd, AliasCommand):
            raise TypeError("aliases() needs a command built with cls=AliasCommand")
        cmd.aliases = {**cmd.aliases, **mapping}
        return cmd

    return deco


def on_terminal(as_json: bool) -> bool:
    """Whether progress may be drawn: stderr is a terminal and the output is not JSON."""
    return not as_json and sys.stderr.isatty()


def status_line(as_json: bool) -> Status | None:
    """A live one-line indicator on stderr (None when not on a terminal or with ``--json``)."""
    if not on_terminal(as_json):
        return None
    from rich.console import Console

    return Console(stderr=True).status("starting")


def progress_bar(as_json: bool, unit: str) -> Progress:
    """A rich progress bar with an ETA on stderr; disabled off a terminal or with ``--json``."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} " + unit),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
        disable=not on_terminal(as_json),
    )


def resolve_device(device: str) -> str:
    """``--device``: ``auto`` picks CUDA when present; asking for CUDA without one is bad input."""
    import torch  # here, so that commands that never touch a device do not import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError(NO_CUDA)
    return device


def to_jsonable(obj: Any) -> Any:
    """Convert tensors, numpy values, mpmath numbers and tuples into JSON-ready values.

    A non-finite number becomes ``null``; the dict holding it gets a ``null_reasons`` entry for
    that key (kept if the producer already gave a more specific reason).
    """
    if isinstance(obj, dict):
        out: dict[str, Any] = {}
        reasons: dict[str, Any] = dict(obj.get("null_reasons") or {})
        for k, v in obj.items():
            if k == "null_reasons":
                continue
            out[str(k)] = to_jsonable(v)
            bad = _nonfinite(v)
            if bad is not None:
                reasons.setdefault(str(k), f"undefined: the computation gave {bad}")
        if reasons:
            out["null_reasons"] = reasons
        return out
    if isinstance(obj, list | tuple):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, bool | int | str) or obj is None:
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if hasattr(obj, "tolist"):  # torch / numpy
        return to_jsonable(obj.tolist())
    try:
        return to_jsonable(float(obj))
    except (TypeError, ValueError):
        return str(obj)


def _nonfinite(v: Any) -> str | None:
    if isinstance(v, bool | int | str) or v is None:
        return None
    if isinstance(v, list | tuple):
        return next((b for b in map(_nonfinite, v) if b is not None), None)
    if hasattr(v, "tolist"):
        return _nonfinite(v.tolist())
    try:
        f = float(v)
    except Exception:  # not a number at all: nothing to report
        return None
    return None if math.isfinite(f) else str(f)


_PARAMETER = re.compile(r"^(--[A-Za-z][\w-]*|[A-Z][A-Z|_]*)(?=[\s\[:]|$)")
_ANY_FLAG = re.compile(r"--[A-Za-z][\w-]*")
_printed = [False]  # whether this run of the CLI printed its JSON payload (emit)


def error_object(line: str, exit_code: int) -> dict[str, Any]:
    """The one JSON answer of a command that ends without its payload: the stderr ``line``
    (without ``error: ``), the exit code and the flag or argument the line names (else None)."""
    m = _PARAMETER.match(line) or _ANY_FLAG.search(line)
    return {"error": line, "exit_code": exit_code, "parameter": m.group(0) if m else None}


def wants_json(args: Sequence[str]) -> bool:
    """Whether the command line ``args`` asks for ``--json`` (before any ``--``)."""
    return "--json" in (args[: args.index("--")] if "--" in args else args)


def new_run() -> None:
    """Forget what an earlier run printed (``workbench.cli.main`` calls it first)."""
    _printed[0] = False


def fail(line: str, exit_code: int, as_json: bool) -> int:
    """End a run: ``error: line`` on stderr and, with ``--json`` when no payload was printed,
    :func:`error_object` on stdout. Returns ``exit_code``."""
    if as_json and not _printed[0]:
        click.echo(json.dumps(error_object(line, exit_code), indent=2))
        _printed[0] = True
    click.echo(f"error: {line}", err=True)
    return exit_code


def emit(payload: dict[str, Any], as_json: bool, human: Callable[[dict[str, Any]], str]) -> None:
    """Print ``payload`` as JSON or through the human renderer."""
    if as_json:
        _printed[0] = True
        click.echo(json.dumps(to_jsonable(payload), indent=2))
    else:
        click.echo(human(payload))


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 claim``, ``2 claims`` (``many`` for an irregular plural)."""
    return f"{n} {word if n == 1 else many or word + 's'}"


MAX_EXACT_DIGITS = 100_000  # decimal strings longer than this are not printed


def int_digits(n: int) -> int:
    """Number of decimal digits of ``|n|`` (exact, without converting the whole number)."""
    n = abs(n)
    if n < 10:
        return 1
    k = int((n.bit_length() - 1) * 0.30102999566398120) + 1  # digits of 2^(bits-1), exact
    return k + (n >= 10**k)


def exact_decimal(n: int) -> str:
    """``str(n)`` past Python's integer-string limit, up to ``MAX_EXACT_DIGITS`` digits."""
    digits = int_digits(n)
    if digits > MAX_EXACT_DIGITS:
        raise ValueError(f"value has {digits} digits, more than {MAX_EXACT_DIGITS} to print")
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return str(n)
    finally:
        sys.set_int_max_str_digits(old)


def readable_int(n: int) -> str:
    """``1,234,567`` up to 15 digits, else ``4.3765e+73 (74 digits)``."""
    digits = int_digits(n)
    if digits <= 15:
        return f"{n:,}"
    shift = digits - 17
    lead = n // 10**shift if shift > 0 else n  # 17 leading digits, exact
    mant, exp = float(lead) / 10.0 ** (min(digits, 17) - 1), digits - 1
    if f"{mant:.4f}".startswith("10."):  # 9.99996 rounds up
        mant, exp = mant / 10, exp + 1
    return f"{mant:.4f}e+{exp} ({digits} digits)"
