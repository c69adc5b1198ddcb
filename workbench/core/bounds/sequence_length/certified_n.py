"""The certified lower bound at ``N >= 3`` keys on D_N (orthonormal keys, uniform query): the one
home that every command asks at ``N >= 3`` (docs/derivations/beyond_two_keys.md, "Result").

Every sequence-length bound is one :class:`Entry` of :data:`SEQUENCE_BOUNDS`: its name, the
module of this package that holds its ``covered(d, N)`` and its evaluator
``f(d, r, H, N, value_class, *, max_degree=None) -> BoundValue``, the N it covers in words, the
kinds of its parts and the value classes it covers. :func:`certified_n_bound` evaluates every
entry that covers the point and returns one ``BoundValue`` holding all their parts, so the
largest proved part decides (``BoundValue.chosen``) and its name is the one printed. Adding a
bound is one line of :data:`SEQUENCE_BOUNDS`; its module is imported only when evaluated.

A bound at ``N`` is a theorem about the law ``D_N``: bounds at different N bound different
quantities (:data:`ACROSS_N`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.core.bounds import EQ2, VALUE_CLASSES
from workbench.core.bounds.value import (
    MULTI_LEVEL,
    MULTI_LEVEL_ESTIMATE,
    N_KEYS,
    BoundValue,
    PartKind,
)
from workbench.core.validation import check_choice, check_float, check_int, check_layer

__all__ = ["ACROSS_N", "NAME", "SEQUENCE_BOUNDS", "CertifiedHeads", "Entry", "certified_n_bound",
           "certified_n_heads_needed", "covering", "entries", "not_covered", "part_kinds"]

NAME = "certified-n"  # the registered bound (workbench.plugins.builtin) that evaluates this
ACROSS_N = ("bounds at different N are different theorems, about different laws D_N (N "
            "orthonormal keys): a smaller bound or fewer heads at a larger N is not a statement "
            "about one model")


@dataclass(frozen=True)
class Entry:
    """One sequence-length bound: ``module`` (in this package) holds ``covered(d, N)`` and the
    evaluator ``function``; ``N_text`` says which N it covers; ``kinds`` are its parts';
    ``classes`` the value classes it is proved for."""

    name: str
    module: str
    function: str
    N_text: str
    kinds: tuple[PartKind, ...]
    classes: tuple[str, ...] = VALUE_CLASSES

    def _load(self) -> Any:
        return importlib.import_module(f"{__package__}.{self.module}")

    def covered(self, d: int, N: int) -> str | None:
        """Why ``(d, N)`` is outside this bound, or ``None``."""
        why: str | None = self._load().covered(d, N)
        return why

    def evaluate(self, d: int, r: int, H: int, N: int, value_class: str,
                 max_degree: int | None) -> BoundValue:
        fn: Callable[..., BoundValue] = getattr(self._load(), self.function)
        return fn(d, r, H, N, value_class, max_degree=max_degree)


# every certified bound at N >= 3
SEQUENCE_BOUNDS: tuple[Entry, ...] = (
    Entry("n-keys", "n_keys", "n_keys_bound", "3 <= N <= d - 2", (N_KEYS,)),
    Entry("multi-level", "multi_level", "multi_level_bound", "3 <= N <= d, d >= 5",
          (MULTI_LEVEL, MULTI_LEVEL_ESTIMATE)),
)


def entries(value_class: str = EQ2, names: Sequence[str] | None = None) -> tuple[Entry, ...]:
    """The entries proved for ``value_class`` (only those named in ``names`` where given)."""
    value_class = check_choice("value_class", value_class, VALUE_CLASSES)
    return tuple(e for e in SEQUENCE_BOUNDS
                 if value_class in e.classes and (names is None or e.name in names))


def part_kinds(value_class: str = EQ2) -> tuple[PartKind, ...]:
    """The kinds of every part :func:`certified_n_bound` may return for ``value_class``."""
    return tuple(dict.fromkeys(k for e in entries(value_class) for k in e.kinds))


def covering(d: int, N: int, value_class: str = EQ2,
             names: Sequence[str] | None = None) -> tuple[Entry, ...]:
    """The entries that cover ``(d, N)``."""
    return tuple(e for e in entries(value_class, names) if e.covered(d, N) is None)


def not_covered(d: int, N: int, value_class: str = EQ2,
                names: Sequence[str] | None = None) -> str | None:
    """Why no certified bound covers ``(d, N)`` (which N each bound covers), or ``None``."""
    if N < 3 or N > d:
        return f"N must lie in [3, d] = [3, {d}] (got {N})"
    if covering(d, N, value_class, names):
        return None
    each = "; ".join(f"{e.name} covers {e.N_text}" for e in entries(value_class, names))
    return (f"no certified bound covers N = {N} at d = {d} for the class {value_class} ("
            f"{each or 'no bound is proved for this class'})")


def _check(d: int, r: int, H: int, N: int, value_class: str,
           names: Sequence[str] | None) -> tuple[int, int, int, int, str]:
    d, r, H = check_layer(d, r, H)
    N = check_int("N", N, lo=3, hi=d)
    value_class = check_choice("value_class", value_class, VALUE_CLASSES)
    why = not_covered(d, N, value_class, names)
    if why is not None:
        raise ValueError(why)
    return d, r, H, N, value_class


def certified_n_bound(d: int, r: int, H: int, N: int, value_class: str = EQ2, *,
                      max_degree: int | None = None,
                      names: Sequence[str] | None = None) -> BoundValue:
    """Every sequence-length bound that covers ``(d, N)`` at ``(r, H)``, as one ``BoundValue``
    whose parts are all of theirs (``names``: only those entries); ValueError where none
    covers."""
    d, r, H, N, value_class = _check(d, r, H, N, value_class, names)
    parts = tuple(p for e in covering(d, N, value_class, names)
                  for p in e.evaluate(d, r, H, N, value_class, max_degree).parts)
    return BoundValue(parts)


@dataclass(frozen=True)
class CertifiedHeads:
    """The least H whose certified bound does not exceed ``eps``: every smaller H is certified
    to have error > eps (``bound_below``, at ``heads - 1``, excludes it)."""

    heads: int
    bound_at_heads: BoundValue
    bound_below: BoundValue | None


def certified_n_heads_needed(d: int, r: int, N: int, eps: float, value_class: str = EQ2, *,
                             max_degree: int | None = None, names: Sequence[str] | None = None,
                             h_cap: int = 10 ** 30) -> CertifiedHeads:
    """Least ``H >= 1`` whose certified value (the largest lower end over the rigorous, proved
    parts) is at most ``eps``; bisection, since every part is non-increasing in H (more heads
    only enlarge the model class)."""
    d, r, _, N, value_class = _check(d, r, 1, N, value_class, names)
    eps = check_float("eps", eps, lo=0.0, hi=1.0, lo_open=True)

    def at(H: int) -> BoundValue:
        return certified_n_bound(d, r, H, N, value_class, max_degree=max_degree, names=names)

    if at(1).certified <= eps:
        return CertifiedHeads(1, at(1), None)
    lo_h, hi_h = 1, 2
    while at(hi_h).certified > eps:
        lo_h, hi_h = hi_h, hi_h * 2
        if hi_h > h_cap:
            raise ValueError(f"eps = {eps} needs more than {h_cap} heads at this truncation")
    while hi_h - lo_h > 1:
        mid = (lo_h + hi_h) // 2
        lo_h, hi_h = (mid, hi_h) if at(mid).certified > eps else (lo_h, mid)
    return CertifiedHeads(hi_h, at(hi_h), at(lo_h))
