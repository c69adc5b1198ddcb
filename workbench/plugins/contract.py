"""What every plug-in object shares (docs/extending.md): its name rule, the laws of the keys it
may declare, and how a user's function is called (a failure is one :class:`PluginFailed` naming
the object and the arguments, never a traceback)."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

LAWS = ("orthonormal", "iid", "any")
T = TypeVar("T")


def check_name(kind: str, name: str) -> None:
    if not isinstance(name, str) or not name or ":" in name or name != name.strip():
        raise ValueError(f"a {kind} name must be a non-empty string without ':' (got {name!r})")


class PluginFailed(ValueError):
    """A user's object (``kind``, ``name``) failed when called: it raised, called ``sys.exit``,
    or returned what its contract does not allow (a bound's nan). ``str()`` is one line saying
    what happened, for the command to put after the flag and the object's name."""

    def __init__(self, who: tuple[str, str], why: str) -> None:
        super().__init__(why)
        self.kind, self.name = who


SIGNATURES = {"bound": "(d, rank, heads, N)", "construction": "(d, rank, heads, N, seed)"}


def failure(e: BaseException) -> str:
    """``e`` on one line: ``ZeroDivisionError: division by zero``, ``SystemExit(0)``."""
    if isinstance(e, SystemExit):
        return f"SystemExit({e.code!r})"
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def call_user(who: tuple[str, str], fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` for the user's object ``who`` (kind, name): any exception,
    ``SystemExit`` included, is a :class:`PluginFailed` naming the arguments (a
    KeyboardInterrupt still interrupts)."""
    try:
        return fn(*args, **kwargs)
    except PluginFailed:
        raise
    except (Exception, SystemExit) as e:
        raise PluginFailed(who, f"failed at {tuple(args[:4])}: {failure(e)}") from None


def number(who: tuple[str, str], v: Any, at: tuple[int, ...]) -> float:
    """A bound's value as a finite float; anything else (text such as ``"0.3"`` and
    ``True`` included: a number, not something that converts to one) is a
    :class:`PluginFailed`."""
    if isinstance(v, str | bytes | bool):
        raise PluginFailed(who, f"returned {type(v).__name__} {v!r} at {at}, not a number")
    try:
        x = float(v)
    except (TypeError, ValueError, OverflowError):
        raise PluginFailed(who, f"returned {type(v).__name__} at {at}, not a number") from None
    if not math.isfinite(x):
        raise PluginFailed(who, f"returned {x} at {at}, not a finite number")
    return x


def takes(kind: str, name: str, fn: Callable[..., Any], params: Mapping[str, Any]) -> None:
    """A plain function named as a ``kind`` must accept its contract's arguments."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without a signature: its call will tell
        return
    n = 4 if kind == "bound" else 5
    try:
        sig.bind(*range(n), **params)
    except TypeError:
        raise ValueError(f"{kind} {name!r} must be a function of {SIGNATURES[kind]} (its "
                         f"signature is {sig})") from None

