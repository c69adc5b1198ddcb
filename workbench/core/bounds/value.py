"""What a lower bound's number is: the one home of its labels (docs/derivations/intervals.md,
"Rigorous enclosures").

Every built-in lower bound evaluates to a :class:`BoundValue`: one or more :class:`Part` s, each
a proved inequality ``err >= part`` with an enclosure of its number, whether that enclosure is
rigorous, and how its series was truncated. Everything a command says about the number (which
part won, whether it is rigorous, what is certified, whether the truncation matters) is a
property computed here from the parts; no command, help text or docstring restates it.

- ``value``: the largest lower end over the parts (each part is a proved inequality);
- ``chosen``: the part that gives it (the first one on ties), ``source`` its name;
- ``rigorous``: whether ``value`` is the lower end of a proved enclosure (``chosen.rigorous``);
- ``status``: ``proved`` when the chosen part is a theorem, else ``conjectured`` (a plug-in's
  guess);
- ``certified``: the largest lower end over the rigorous, proved parts only (0 when none is);
- ``truncation``: the chosen part's truncation, ``truncation_matters`` whether any part's
  unsummed tail could still change the answer.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BoundValue", "Part", "PartKind", "Truncation", "FIBER", "HARMONIC_COUNT",
           "MULTI_LEVEL", "MULTI_LEVEL_ESTIMATE", "N_KEYS", "THEOREM3_LOWER"]


@dataclass(frozen=True)
class Truncation:
    """How a part's series was cut: degrees ``<= degrees_summed`` were summed and the rest could
    add at most ``tail``; ``settled`` says the tail cannot change the answer (the printed digits,
    or the question asked, such as ``bound > eps``); ``flag`` is the option that lifts it."""

    degrees_summed: int
    tail: float
    settled: bool
    flag: str = "--max-degree"


@dataclass(frozen=True)
class Part:
    """One proved inequality ``err >= number``: its ``name`` (``harmonic count``, ``fiber``,
    ...), an enclosure ``(lo, hi)`` of its number, whether that enclosure is ``rigorous`` (proved
    with outward rounding and counted tails, never a quadrature or Monte Carlo estimate), its
    ``method`` in words, and its ``truncation`` where it sums a series."""

    name: str
    enclosure: tuple[float, float]
    rigorous: bool
    method: str
    truncation: Truncation | None = None
    proved: bool = True  # ``err >= number`` is a theorem (False: a plug-in's conjecture)
    beside: bool = False  # a statistical part printed beside proved ones, never deciding

    def __post_init__(self) -> None:
        lo, hi = (float(x) for x in self.enclosure)
        if not lo <= hi:
            raise ValueError(f"part {self.name!r}: enclosure must have lo <= hi (got "
                             f"{self.enclosure})")
        object.__setattr__(self, "enclosure", (lo, hi))

    @property
    def lower(self) -> float:
        return self.enclosure[0]

    @property
    def kind(self) -> PartKind:
        return PartKind(self.name, self.rigorous, self.proved, self.beside)


@dataclass(frozen=True)
class PartKind:
    """What a part is wherever it is evaluated: its name, whether its enclosures are proved
    (``rigorous``) and whether its inequality is a theorem (``proved``). A registered bound
    declares the kinds of its parts, so its labels are known without evaluating it; every
    evaluation's parts must be of those kinds (``workbench.plugins.Bound.evaluate``)."""

    name: str
    rigorous: bool
    proved: bool = True
    beside: bool = False  # printed beside the proved parts, never the bound's number

    def at(self, enclosure: tuple[float, float], method: str,
           truncation: Truncation | None = None) -> Part:
        """The part of this kind with ``enclosure`` at one point."""
        return Part(self.name, enclosure, self.rigorous, method, truncation, self.proved,
                    self.beside)


# the kinds of the built-in parts (their numbers: core/bounds/harmonic_count/harmonic.py, fiber.py,
# biased.py)
HARMONIC_COUNT = PartKind("harmonic count", rigorous=True)  # exact integers, outward rounding
FIBER = PartKind("fiber", rigorous=True)  # arb balls: series with exact tails, proved kinks
# Theorem 3's lower side: the lower end of a Hoeffding interval over strata, a statistical
# statement (probability 0.999), not a proved enclosure
THEOREM3_LOWER = PartKind("theorem 3 lower side", rigorous=False)
N_KEYS = PartKind("n-keys", rigorous=True)  # arb balls: Gamma_l enclosures, tail by Parseval
# the multi-level bound for 3 <= N <= d (docs/derivations/long_contexts.md): its proved part, and
# a finite-sample statistical part beside it (empirical Bernstein), never certified
MULTI_LEVEL = PartKind("multi-level", rigorous=True)
MULTI_LEVEL_ESTIMATE = PartKind("multi-level estimate", rigorous=False, beside=True)


@dataclass(frozen=True)
class BoundValue:
    """A lower bound at one point: the largest of its parts. Every label is computed here."""

    parts: tuple[Part, ...]

    def __post_init__(self) -> None:
        if not self.parts:
            raise ValueError("a bound value needs at least one part")
        object.__setattr__(self, "parts", tuple(self.parts))

    @property
    def chosen(self) -> Part:
        """The part that decides: the largest lower end among the rigorous, proved parts where
        there is one (a statistical or conjectured part never outranks a certified one), else
        among all parts; the first one on ties."""
        pool = ([p for p in self.parts if p.rigorous and p.proved]
                or [p for p in self.parts if not p.beside] or list(self.parts))
        best = pool[0]
        for p in pool[1:]:
            if p.lower > best.lower:
                best = p
        return best

    @property
    def value(self) -> float:
        return self.chosen.lower

    @property
    def enclosure(self) -> tuple[float, float]:
        """The enclosure of the part that decides (the parts bound different quantities, so
        their ends are not mixed)."""
        return self.chosen.enclosure

    @property
    def source(self) -> str:
        return self.chosen.name

    @property
    def rigorous(self) -> bool:
        """Whether ``value`` is the lower end of a proved enclosure."""
        return self.chosen.rigorous

    @property
    def status(self) -> str:
        """``proved`` when ``value``'s inequality is a theorem, else ``conjectured``."""
        return "proved" if self.chosen.proved else "conjectured"

    @property
    def certified(self) -> float:
        """The largest lower end among the rigorous, proved parts only (0 where none is)."""
        return max((p.lower for p in self.parts if p.rigorous and p.proved), default=0.0)

    @property
    def truncation(self) -> Truncation | None:
        return self.chosen.truncation

    @property
    def truncation_matters(self) -> bool:
        """Whether some part's unsummed tail could still change the answer."""
        return any(p.truncation is not None and not p.truncation.settled for p in self.parts)

    def part(self, name: str) -> Part:
        for p in self.parts:
            if p.name == name:
                return p
        raise KeyError(f"no part {name!r} (parts: {[p.name for p in self.parts]})")
