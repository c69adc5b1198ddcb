"""The command line as a whole, before and after click parses it (the CLI contract: one line
naming the flag and its allowed range, exit 2).

- :func:`screen` rejects what no command accepts: non-ASCII digits (``１６``), absurdly long
  arguments, and an old spelling given with the new one (``--rank 1 --r 2``); it rewrites the
  old spellings (``OLD_SPELLINGS``) to the flag they stand for, in every command.
- :class:`IntIn` is the one integer rule: every integer flag of every command declares its range
  with it (``type=IntIn(2, 2048)``; ``SEED`` for every ``--seed``), checked while the arguments
  are parsed, before torch is imported; a value outside it (``-1``, ``10**30``, ``1e3``) is one
  line naming the flag and the range. A range that depends on another flag (``--rank`` in
  ``1..d``) is checked again by the command. :class:`IntSpan` is the same rule for ``LO:HI``.
- :func:`rephrase` turns click's own messages (``'1.5' is not a valid integer``) into the
  contract's (``--d must be an integer >= 2 (got '1.5')``), with every echoed value longer
  than ``LONG_ECHO`` cut to ``ECHO_CHARS``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import click

from workbench.core.validation import INT64_MAX, SEED_MAX, int_range_words, int_text

MAX_ARG_CHARS = 4096  # longer than any path, name or range a command takes
ECHO_CHARS = 60  # an echoed value longer than LONG_ECHO is cut to this many characters
LONG_ECHO = 200  # longer than any path a user would want to read back whole
# old spelling -> the flag it stands for, in every command that has that flag
OLD_SPELLINGS = {"--r": "--rank", "--distribution": "--points"}
# the allowed range of a number flag that is not an integer, said when click cannot read it
# or it is missing (an integer flag's range is its IntIn)
RANGES = {
    "--lr": "> 0", "--eps": "in (0, 1]", "--beta": ">= 0", "--spacing": "> 0",
    "--resolution": "> 0", "--theta": "in [0, pi]", "--cpus-per-task": "> 0",
    "--gpus-per-task": ">= 0", "--alpha": "in (0, 1)", "--claim": "in (0, 1]",
}
_INT = re.compile(r"^[+-]?[0-9]+$")
_MAX_DIGITS = 40  # more digits than any declared range's ends: out of range without int()


class OutOfRange(click.BadParameter):
    """An integer flag's value outside its declared range; the message is ``must be ...``."""


class IntIn(click.IntRange):
    """An integer flag whose values are ``lo..hi`` (``hi`` defaults to a signed 64-bit
    integer's largest). Written only with the ASCII digits, an optional sign and spaces
    around; anything else (``1.5``, ``1e3``, ``0x10``, ``1_000``) is not an integer."""

    name = "integer"

    def __init__(self, lo: int, hi: int = INT64_MAX) -> None:
        if not -INT64_MAX - 1 <= lo <= hi <= INT64_MAX:
            raise ValueError(f"IntIn needs -2**63 <= lo <= hi <= 2**63 - 1 (got {lo}, {hi})")
        super().__init__(min=lo, max=hi)
        self.lo, self.hi = lo, hi

    @property
    def words(self) -> str:
        """``an integer in 2..2048``."""
        return int_range_words(self.lo, self.hi)

    def value_of(self, text: str) -> int | None:
        """``text`` as an integer in range, else None."""
        t = text.strip()
        if not _INT.match(t) or len(t.lstrip("+-").lstrip("0")) > _MAX_DIGITS:
            return None
        v = int(t)
        return v if self.lo <= v <= self.hi else None

    def convert(self, value: object, param: click.Parameter | None,
                ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            text, v = str(value), value if self.lo <= value <= self.hi else None
        else:
            text = str(value)
            v = self.value_of(text)
        if v is None:
            raise OutOfRange(f"must be {self.words} (got {cut(text)!r})", ctx=ctx, param=param)
        return v

    def _describe_range(self) -> str:
        return f"{int_text(self.lo)}<=x<={int_text(self.hi)}"


class IntUpToD(IntIn):
    """An integer flag in ``lo..d``, ``d`` being the command's ``--d``: checked here from below,
    against ``d`` by the command; help and errors both say ``lo..d``."""

    @property
    def words(self) -> str:
        return f"an integer in {self.lo}..d"

    def _describe_range(self) -> str:
        return f"{self.lo}<=x<=d"


SEED = IntIn(0, SEED_MAX)  # every --seed
MAX_SEEDS = 10_000  # construct --seeds: independent evaluations pooled into one interval
MAX_THREADS = 1024  # sweep --threads: threads per worker


class IntSpan(click.ParamType):
    """An integer or a range ``LO:HI`` of integers, both in ``lo..hi`` with ``LO <= HI``; the
    value is the text as given (``falsify --d 4:16``)."""

    name = "integer or LO:HI"

    def __init__(self, lo: int, hi: int = INT64_MAX) -> None:
        self.ends = IntIn(lo, hi)

    @property
    def words(self) -> str:
        lo, hi = int_text(self.ends.lo), int_text(self.ends.hi)
        return f"{self.ends.words} or a range LO:HI with {lo} <= LO <= HI <= {hi}"

    def convert(self, value: object, param: click.Parameter | None,
                ctx: click.Context | None) -> str:
        text = str(value)
        vals = [self.ends.value_of(t) for t in text.split(":")]
        if len(vals) not in (1, 2) or None in vals or vals[0] > vals[-1]:  # type: ignore[operator]
            raise OutOfRange(f"must be {self.words} (got {cut(text)!r})", ctx=ctx, param=param)
        return text


def with_hints(cmd: click.Command, hints: dict[str, str]) -> click.Command:
    """``cmd``, whose unknown flags in ``hints`` are answered with their hint rather than
    click's nearest spelling (``--param`` on a construction whose parameters are flags of its
    own is not ``--target-param``)."""
    cmd.unknown_flag_hints = {**getattr(cmd, "unknown_flag_hints", {}), **hints}  # type: ignore[attr-defined]
    return cmd


def declared_range(param: click.Parameter | None) -> str | None:
    """The words of ``param``'s declared range (``an integer in 2..2048``), if it has one."""
    t = getattr(param, "type", None)
    return t.words if isinstance(t, IntIn | IntSpan) else None


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


def _param(e: click.UsageError, flag: str, root: click.Command | None,
           args: Sequence[str]) -> click.Parameter | None:
    """The parameter spelled ``flag`` of ``e``'s command, or when click did not say which
    command, of the one ``args`` name under ``root``."""
    cmd = e.ctx.command if e.ctx is not None else root
    if e.ctx is None and root is not None:
        ctx = click.Context(root)
        for a in args:
            if not isinstance(cmd, click.Group) or a.startswith("-"):
                break
            cmd = cmd.get_command(ctx, a)
    params = cmd.params if cmd is not None else []
    return next((p for p in params if flag in getattr(p, "opts", ())), None)


def _where(e: click.UsageError) -> str:
    """The command's path, ``workbench bounds sandwich``."""
    return "workbench" if e.ctx is None else e.ctx.command_path


def rephrase(e: click.UsageError, root: click.Command | None = None,
             args: Sequence[str] = ()) -> str:
    """One line in the contract's words for a click usage error (``root``: the program's
    command, which ``args`` were given to)."""
    msg = " ".join(e.format_message().split())
    cmd = _where(e)
    if isinstance(e, click.MissingParameter) and e.param is not None:
        p = e.param
        flag = p.opts[0] if isinstance(p, click.Option) else (p.human_readable_name or "").upper()
        if (words := declared_range(p)) is not None:
            return f"{flag} must be given ({words})"
        r = _range(cmd, flag)
        return f"{flag} must be given" + (f" (a value{r})" if r else "")
    if isinstance(e, click.BadParameter) and e.param is not None:
        p = e.param
        flag = p.opts[0] if isinstance(p, click.Option) else (p.human_readable_name or "").upper()
        raw = " ".join(str(e.message).split())
        if isinstance(e, OutOfRange):
            return f"{flag} {raw}"
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
        hints = getattr(e.ctx.command if e.ctx is not None else None, "unknown_flag_hints", {})
        if e.option_name in hints:
            return (f"{e.option_name} is not an option of `{cmd}`: {hints[e.option_name]}; "
                    "see --help")
        olds = [old for old, new in OLD_SPELLINGS.items() if new == e.option_name]
        if olds:  # screen() rewrote an old spelling to this flag: the user may have typed either
            return (f"neither {e.option_name} nor its old spelling {' or '.join(olds)} is an "
                    f"option of `{cmd}`{near}; see --help")
        return f"{e.option_name} is not an option of `{cmd}`{near}; see --help"
    if m := re.match(r"^Option '(.*)' requires an argument\.$", msg):
        if (words := declared_range(_param(e, m.group(1), root, args))) is not None:
            return f"{m.group(1)} must be given a value ({words})"
        return f"{m.group(1)} must be given a value{_range(cmd, m.group(1))}"
    if m := re.match(r"^No such command '(.*)'\.$", msg, re.S):
        return f"COMMAND must be a command of `{cmd}` (got {cut(m.group(1))!r}); see --help"
    return msg


def command_of(root: click.Command, args: Sequence[str]) -> tuple[click.Command, int]:
    """The command ``args`` name under ``root`` and the index of its first own argument."""
    cmd, i = root, 0
    ctx = click.Context(root)
    while isinstance(cmd, click.Group) and i < len(args) and not args[i].startswith("-"):
        try:
            sub = cmd.get_command(ctx, args[i])
        except Exception:  # a command that fails to load answers for itself when run
            return cmd, i
        if sub is None:
            return cmd, i
        cmd, i = sub, i + 1
    return cmd, i


def refuse_repeats(root: click.Command, args: Sequence[str]) -> None:
    """``ValueError`` for a flag that takes one value given more than once (``--d 16 --d 8``):
    click would keep the last silently. Flags that collect values (``--only``, ``--param``)
    and switches (``--json``) may repeat."""
    cmd, i = command_of(root, args)
    spelled = {o: p for p in cmd.params if isinstance(p, click.Option)
               for o in (*p.opts, *p.secondary_opts)}
    aliases = getattr(cmd, "aliases", {})
    given: dict[str, str] = {}  # the parameter's name -> the value first given
    while i < len(args) and args[i] != "--":
        flag, eq, val = args[i].partition("=")
        p = spelled.get(aliases.get(flag, flag))
        i += 1
        if p is None or p.is_flag or p.count:
            continue
        if not eq:
            val, i = (args[i] if i < len(args) else ""), i + 1
        if p.multiple or p.nargs != 1:
            continue
        name = p.opts[0]
        if name in given:
            raise ValueError(f"{name} must be given once (got {cut(given[name])!r} and "
                             f"{cut(val)!r}): repeat only the flags that collect values")
        given[name] = val
