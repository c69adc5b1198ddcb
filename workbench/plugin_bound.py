"""The type of a bound (docs/extending.md): a bound on the error of a model class as a function
of ``(d, rank, heads, N)``, with where it applies. Registered in ``workbench.plugins``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from workbench.core.validation import check_layer, check_points
from workbench.plugin_contract import LAWS, PluginFailed, call_user, check_name, number

SIDES = ("lower", "upper")
STATUSES = ("proved", "conjectured")  # "certified" is read as "proved" (its old spelling)

DomainFn = Callable[[int, int, int, int], "str | None"]


@dataclass(frozen=True)
class Bound:
    """A bound on the error ``E||f - A||^2`` of a model class, as a function of
    ``(d, rank, heads, N)``.

    ``side`` says which side it bounds, ``status`` whether it is ``proved`` (a theorem; the old
    spelling ``certified`` is read as ``proved``) or ``conjectured``, ``rigorous`` whether its
    ``enclosure`` is a proved one (a plug-in's conjecture or a quadrature is not: only a rigorous
    number is called certified); ``target``, ``law`` (of the keys), ``value_class``
    (the models it covers) and ``N`` (the sequence lengths it covers; ``None``: every N) say
    where it applies, and ``domain(d, rank, heads, N)`` may name any further point it does not
    cover. ``enclosure`` returns an interval around the value where one exists (proved only
    where ``rigorous``); ``encoding`` is the id of its sympy encoding
    (``workbench.core.symbolic``). ``spec`` is how a command names it again (the registered
    name, or ``module:attr``), so that a replay re-imports the same bound.
    """

    name: str
    fn: Callable[[int, int, int, int], float]
    side: str = "lower"
    status: str = "proved"
    target: str = "nearest"
    law: str = "orthonormal"
    value_class: str = "eq2"
    N: tuple[int, ...] | None = (2,)
    domain: DomainFn | None = None
    enclosure: Callable[[int, int, int, int], tuple[float, float]] | None = None
    rigorous: bool = False
    encoding: str | None = None
    description: str = ""
    ref: str = ""
    source: str = "workbench"
    spec: str = ""

    def __post_init__(self) -> None:
        check_name("bound", self.name)
        if self.side not in SIDES:
            raise ValueError(f"side must be one of {SIDES} (got {self.side!r})")
        if self.status == "certified":  # the old spelling: a proved bound is certified only
            object.__setattr__(self, "status", "proved")  # where its number is rigorous
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES} (got {self.status!r})")
        if self.law not in LAWS:
            raise ValueError(f"law must be one of {LAWS} (got {self.law!r})")

    def outside(self, d: int, rank: int, heads: int, N: int) -> str | None:
        """Why ``(d, rank, heads, N)`` is outside what the bound covers, or ``None``: the one
        check of a bound's arguments (commands call it at the edge and trust them after). A
        reason about one argument starts with its name (``rank must be ...``), so a command
        can name its flag; ``domain``'s reasons may do the same."""
        try:
            check_layer(d, rank, heads, ("d", "rank", "heads"))
            check_points(N, "N")
        except ValueError as e:
            return str(e)
        if self.N is not None and N not in self.N:
            return f"N must lie in {list(self.N)}, the N it covers (got {N})"
        return self.domain(d, rank, heads, N) if self.domain is not None else None

    def __call__(self, d: int, rank: int, heads: int, N: int = 2) -> float:
        why = self.outside(d, rank, heads, N)
        if why is not None:
            raise ValueError(f"bound {self.name!r} {why}")
        if self.source == "workbench":
            return float(self.fn(d, rank, heads, N))
        who = ("bound", self.spec or self.name)
        return number(who, call_user(who, self.fn, d, rank, heads, N), (d, rank, heads, N))

    def interval(self, d: int, rank: int, heads: int, N: int = 2) -> tuple[float, float]:
        """The enclosure where the bound has one, else the value twice."""
        if self.enclosure is None:
            v = self(d, rank, heads, N)
            return v, v
        if self.source == "workbench":
            lo, hi = self.enclosure(d, rank, heads, N)
            return float(lo), float(hi)
        who, at = ("bound", self.spec or self.name), (d, rank, heads, N)
        ends = call_user(who, self.enclosure, d, rank, heads, N)
        if not (isinstance(ends, tuple | list) and len(ends) == 2):
            raise PluginFailed(who, f"returned {type(ends).__name__} from its enclosure at "
                               f"{at}, not a pair (lo, hi)")
        return number(who, ends[0], at), number(who, ends[1], at)

    def describe(self) -> dict[str, Any]:
        """The bound's fields as JSON: ``N`` is the list of the N it covers, ``null`` for
        every N (``N_text`` says which)."""
        n = "every N" if self.N is None else ", ".join(str(k) for k in self.N)
        return {"name": self.name, "side": self.side, "status": self.status,
                "rigorous": self.rigorous, "target": self.target, "law": self.law,
                "value_class": self.value_class,
                "N": None if self.N is None else list(self.N), "N_text": n,
                "encoding": self.encoding, "source": self.source,
                "description": self.description, "spec": self.spec or self.name}

