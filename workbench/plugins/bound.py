"""The type of a bound (docs/extending.md): a bound on the error of a model class as a function
of ``(d, rank, heads, N)``, with where it applies. Registered in ``workbench.plugins``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from workbench.core.bounds.value import BoundValue, PartKind
from workbench.core.validation import check_layer, check_points
from workbench.plugins.contract import LAWS, PluginFailed, call_user, check_name, number

SIDES = ("lower", "upper")
STATUSES = ("proved", "conjectured")  # "certified" is read as "proved" (its old spelling)

DomainFn = Callable[[int, int, int, int], "str | None"]


@dataclass(frozen=True, init=False)
class Bound:
    """A bound on the error ``E||f - A||^2`` of a model class, as a function of
    ``(d, rank, heads, N)``.

    ``evaluate(d, rank, heads, N)`` gives its :class:`~workbench.core.bounds.value.BoundValue`,
    where every label of its number lives; ``rigorous`` and ``status`` are computed from the kinds
    of its parts (``part_kinds``). A built-in bound declares its ``parts`` and an ``evaluator``
    returning parts of those kinds. A plug-in's function is one part, whose ``status`` (``proved``
    or ``conjectured``; the old spelling ``certified`` reads ``proved``) and ``rigorous`` (whether
    its ``enclosure`` is a proved one: without an enclosure it is not) are what the plug-in
    declares. ``side`` says which side it bounds; ``target``, ``law`` (of the keys),
    ``value_class`` (the models it covers) and ``N`` (the sequence lengths it covers; ``None``:
    every N) say where it applies, and ``domain(d, rank, heads, N)`` may name any further point
    it does not cover. ``encoding`` is the id of its sympy encoding (``workbench.core.symbolic``).
    ``spec`` is how a command names it again (the registered name, or ``module:attr``), so that
    a replay re-imports the same bound.
    """

    name: str
    fn: Callable[[int, int, int, int], float]
    side: str
    declared_status: str
    target: str
    law: str
    value_class: str
    N: tuple[int, ...] | None
    domain: DomainFn | None
    enclosure: Callable[[int, int, int, int], tuple[float, float]] | None
    declared_rigorous: bool
    encoding: str | None
    description: str
    ref: str
    source: str
    spec: str
    parts: tuple[PartKind, ...] | None
    evaluator: Callable[[int, int, int, int], BoundValue] | None
    N_text: str  # the N it covers in words where ``N`` is None and ``domain`` narrows it

    def __init__(self, name: str, fn: Callable[[int, int, int, int], float],
                 side: str = "lower", status: str = "proved", target: str = "nearest",
                 law: str = "orthonormal", value_class: str = "eq2",
                 N: tuple[int, ...] | None = (2,), domain: DomainFn | None = None,
                 enclosure: Callable[[int, int, int, int], tuple[float, float]] | None = None,
                 rigorous: bool = False, encoding: str | None = None, description: str = "",
                 ref: str = "", source: str = "workbench", spec: str = "",
                 parts: tuple[PartKind, ...] | None = None,
                 evaluator: Callable[[int, int, int, int], BoundValue] | None = None, *,
                 declared_status: str | None = None,
                 declared_rigorous: bool | None = None, N_text: str = "") -> None:
        status = status if declared_status is None else declared_status  # from replace()
        rigorous = rigorous if declared_rigorous is None else declared_rigorous
        if status == "certified":  # the old spelling of proved
            status = "proved"
        values = dict(name=name, fn=fn, side=side, declared_status=status, target=target,
                      law=law, value_class=value_class, N=N, domain=domain, enclosure=enclosure,
                      declared_rigorous=bool(rigorous), encoding=encoding,
                      description=description, ref=ref, source=source, spec=spec,
                      parts=None if parts is None else tuple(parts), evaluator=evaluator,
                      N_text=N_text)
        for k, v in values.items():
            object.__setattr__(self, k, v)
        check_name("bound", name)
        if side not in SIDES:
            raise ValueError(f"side must be one of {SIDES} (got {side!r})")
        if status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES} (got {status!r})")
        if law not in LAWS:
            raise ValueError(f"law must be one of {LAWS} (got {law!r})")
        if (parts is None) != (evaluator is None):
            raise ValueError("parts and evaluator must be given together (a built-in bound)")

    @property
    def part_kinds(self) -> tuple[PartKind, ...]:
        """The kinds of the parts every evaluation returns: the declared ``parts``, or the one
        part of a plug-in's function (rigorous only with an enclosure it declares rigorous)."""
        if self.parts is not None:
            return self.parts
        return (PartKind(self.name, self.declared_rigorous and self.enclosure is not None,
                         self.declared_status == "proved"),)

    @property
    def has_enclosure(self) -> bool:
        """Whether it gives an interval (a built-in's parts, or a plug-in's ``enclosure``)."""
        return self.evaluator is not None or self.enclosure is not None

    @property
    def rigorous(self) -> bool:
        """Whether every number it gives is a proved enclosure's lower end (all parts
        rigorous but those printed beside them, which never decide)."""
        return all(k.rigorous for k in self.part_kinds if not k.beside)

    @property
    def status(self) -> str:
        """``proved`` when every part is a theorem, else ``conjectured``."""
        return "proved" if all(k.proved for k in self.part_kinds) else "conjectured"

    def evaluate(self, d: int, rank: int, heads: int, N: int = 2) -> BoundValue:
        """The bound at one point, with every label computed from its parts. A built-in's parts
        must be of its declared kinds (else ``ArithmeticError``: the labels would disagree)."""
        why = self.outside(d, rank, heads, N)
        if why is not None:
            raise ValueError(f"bound {self.name!r} {why}")
        if self.evaluator is not None:
            bv = self.evaluator(d, rank, heads, N)
            stray = [p.kind for p in bv.parts if p.kind not in self.part_kinds]
            if stray:
                raise ArithmeticError(f"bound {self.name!r} gave parts {stray} at "
                                      f"{(d, rank, heads, N)}, not of its kinds {self.parts}")
            return bv
        who, at = ("bound", self.spec or self.name), (d, rank, heads, N)
        ends = self.interval(d, rank, heads, N)
        if not ends[0] <= ends[1]:
            raise PluginFailed(who, f"returned the enclosure {ends} at {at}, not lo <= hi")
        method = (f"{self.spec or self.name} from {self.source}"
                  + (", with its enclosure" if self.enclosure is not None else ", a value only"))
        return BoundValue((self.part_kinds[0].at(ends, method),))

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
        if self.evaluator is not None:
            return self.evaluate(d, rank, heads, N).value
        if self.source == "workbench":
            return float(self.fn(d, rank, heads, N))
        who = ("bound", self.spec or self.name)
        return number(who, call_user(who, self.fn, d, rank, heads, N), (d, rank, heads, N))

    def interval(self, d: int, rank: int, heads: int, N: int = 2) -> tuple[float, float]:
        """The enclosure where the bound has one, else the value twice."""
        if self.evaluator is not None:
            return self.evaluate(d, rank, heads, N).enclosure
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
        n = (self.N_text or "every N") if self.N is None else ", ".join(str(k) for k in self.N)
        return {"name": self.name, "side": self.side, "status": self.status,
                "rigorous": self.rigorous, "target": self.target, "law": self.law,
                "value_class": self.value_class,
                "N": None if self.N is None else list(self.N), "N_text": n,
                "parts": [{"name": k.name, "rigorous": k.rigorous, "proved": k.proved,
                           "beside": k.beside} for k in self.part_kinds],
                "encoding": self.encoding, "source": self.source,
                "description": self.description, "spec": self.spec or self.name}

