"""The command line as a whole, before and after click parses it (the CLI contract: one line
naming the flag and its allowed range, exit 2).

- :func:`screen` rejects what no command accepts: non-ASCII digits (``１６``), absurdly long
  arguments, and an old spelling given with the new one (``--rank 1 --r 2``); it rewrites the
  old spellings (``OLD_SPELLINGS``) to the flag they stand for, in every command.
- :func:`rephrase` turns click's own messages (``'1.5' is not a valid integer``) into the
  contract's (``--d must be an integer >= 2 (got '1.5')``), with every echoed value longer
  than ``LONG_ECHO`` cut to ``ECHO_CHARS``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import click

MAX_ARG_CHARS = 4096  # longer than any path, name or range a command takes
ECHO_CHARS = 60  # an echoed value longer than LONG_ECHO is cut to this many characters
LONG_ECHO = 200  # longer than any path a user would want to read back whole
# old spelling -> the flag it stands for, in every command that has that flag
OLD_SPELLINGS = {"--r": "--rank", "--distribution": "--points"}
# the allowed range of a numeric flag, said when click cannot even read the number; a command
# whose range differs has its own entry ("sandwich --d")
RANGES = {
    "--d": ">= 2", "--rank": "in 1..d", "--heads": ">= 1", "--N": ">= 1", "--layers": ">= 1",
    "--steps": ">= 1", "--seeds": ">= 1", "--seed": ">= 0", "--batch": ">= 1",
    "--eval-samples": ">= 100", "--lr": "> 0", "--eps": "in (0, 1]", "--beta": ">= 0",
    "--spacing": "> 0", "--resolution": "> 0", "--theta": "in [0, pi]", "--threads": ">= 1",
    "--cpus-per-task": "> 0", "--gpus-per-task": ">= 0", "--budget": "in 1..1000",
    "--alpha": "in (0, 1)", "--max-degree": ">= 0", "--degree": ">= 0", "--jobs": ">= 1",
    "sandwich --d": "in 2..256", "sandwich --heads": "in 1..4096", "bounds --d": "in 2..2048",
    "construct --eval-samples": ">= 2",
}


def cut(text: str, n: int = ECHO_CHARS) -> str:
    """``text``, or when longer than ``LONG_ECHO`` (and ``n``) its first ``n`` characters with
    an ellipsis, saying how long it was."""
    if len(text) <= max(n, LONG_ECHO):
        return text
    return f"{text[: n - 1]}… ({len(text)} characters)"


def _flag_of(args: Sequence[str], i: int) -> str:
    """The flag that argument ``i`` belongs to (``--d`` for ``--d 16`` or ``--d=16``)."""
    a = args[i]
    if a.startswith("-"):
        return a.partition("=")[0]
    if i > 0 and args[i - 1].startswith("--") and "=" not in args[i - 1]:
        return args[i - 1]
    return f"argument {i + 1} of the command line"


def screen(args: Sequence[str]) -> list[str]:
    """``args`` with old spellings rewritten; ``ValueError`` (naming the flag) for what no
    command accepts."""
    out: list[str] = []
    seen: dict[str, str] = {}  # new flag -> the spelling first used for it
    for i, a in enumerate(args):
        if a == "--":
            return out + list(args[i:])
        if len(a) > MAX_ARG_CHARS:
            raise ValueError(f"{_flag_of(args, i)} must be at most {MAX_ARG_CHARS} characters "
                             f"(got {len(a)}: {cut(a)!r})")
        bad = next((c for c in a if c not in "0123456789" and unicodedata.category(c) == "Nd"),
                   None)
        if bad is not None:
            raise ValueError(f"{_flag_of(args, i)} must be written with the ASCII digits 0-9 "
                             f"(got {cut(a)!r}, with {unicodedata.name(bad, 'a digit')})")
        flag, eq, val = a.partition("=")
        if flag.startswith("--") and not (i > 0 and args[i - 1] == "--param"):
            new = OLD_SPELLINGS.get(flag, flag)
            if new in OLD_SPELLINGS.values():
                first = seen.setdefault(new, flag)
                if first != flag:
                    old = first if first != new else flag
                    raise ValueError(f"{new} was given twice, as {first} and {flag} ({old} is "
                                     "its old spelling): give it once")
            a = new + eq + val
        out.append(a)
    return out


_NOT_INT = re.compile(r"^'(.*)' is not a valid (integer|float)\.$", re.S)
_NOT_CHOICE = re.compile(r"^'(.*)' is not one of (.*)\.$", re.S)
_PATH = re.compile(r"^(File|Directory|Path) '(.*)' (is a directory|is a file|does not exist|"
                   r"is not writable|is not readable)\.$", re.S)


def _range(command: str, flag: str) -> str:
    """`` >= 2``: the allowed range of ``flag`` in the command ``command`` (its path)."""
    words = command.split()[::-1]
    r = next((RANGES[k] for k in (f"{w} {flag}" for w in words) if k in RANGES),
             RANGES.get(flag))
    return f" {r}" if r else ""


def _where(e: click.UsageError) -> str:
    """The command's path, ``workbench bounds sandwich``."""
    return "workbench" if e.ctx is None else e.ctx.command_path


def rephrase(e: click.UsageError) -> str:
    """One line in the contract's words for a click usage error."""
    msg = " ".join(e.format_message().split())
    cmd = _where(e)
    if isinstance(e, click.MissingParameter) and e.param is not None:
        p = e.param
        flag = p.opts[0] if isinstance(p, click.Option) else (p.human_readable_name or "").upper()
        r = _range(cmd, flag)
        return f"{flag} must be given" + (f" (a value{r})" if r else "")
    if isinstance(e, click.BadParameter) and e.param is not None:
        p = e.param
        flag = p.opts[0] if isinstance(p, click.Option) else (p.human_readable_name or "").upper()
        raw = " ".join(str(e.message).split())
        if m := _NOT_INT.match(raw):
            what = "an integer" if m.group(2) == "integer" else "a number"
            return f"{flag} must be {what}{_range(cmd, flag)} (got {cut(m.group(1))!r})"
        if m := _NOT_CHOICE.match(raw):
            return f"{flag} must be one of {m.group(2)} (got {cut(m.group(1))!r})"
        if m := _PATH.match(raw):
            want = {"is a directory": "a file, not a folder", "is a file": "a folder, not a file",
                    "does not exist": "an existing path"}.get(m.group(3), "a usable path")
            return f"{flag} must be {want} (got {cut(m.group(2))!r})"
        return f"{flag}: {cut(raw, 200)}"
    if isinstance(e, click.NoSuchOption):
        near = f" (did you mean {', '.join(e.possibilities)}?)" if e.possibilities else ""
        olds = [old for old, new in OLD_SPELLINGS.items() if new == e.option_name]
        if olds:  # screen() rewrote an old spelling to this flag: the user may have typed either
            return (f"neither {e.option_name} nor its old spelling {' or '.join(olds)} is an "
                    f"option of `{cmd}`{near}; see --help")
        return f"{e.option_name} is not an option of `{cmd}`{near}; see --help"
    if m := re.match(r"^Option '(.*)' requires an argument\.$", msg):
        return f"{m.group(1)} must be given a value{_range(cmd, m.group(1))}"
    if m := re.match(r"^No such command '(.*)'\.$", msg, re.S):
        return f"COMMAND must be a command of `{cmd}` (got {cut(m.group(1))!r}); see --help"
    return msg
