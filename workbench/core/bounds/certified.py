"""The lower bound for N = 2 on D_2: the larger of the harmonic count (:mod:`.harmonic`) and the
fiber bound (:mod:`.fiber`) for a value class (docs/derivations/fiber_bound.md, Lemma F4 and its
remark on query-dependent value maps; docs/derivations/lower_bound.md, Lemma 6). Models are
confronted with ``value``; both inequalities are proved, but only a part with ``rigorous`` true
has a proved enclosure of its number, and ``certified`` is the larger of those lower ends only
(docs/derivations/intervals.md, "Rigorous enclosures").
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.core.bounds import EQ2, VALUE_CLASSES
from workbench.core.bounds.fiber import FiberBound, trusted_fiber_bound
from workbench.core.bounds.harmonic import TAIL_TOL, HarmonicBound, trusted_harmonic_bound
from workbench.core.validation import check_choice, check_layer

__all__ = ["CertifiedBound", "certified_lower_bound"]


@dataclass(frozen=True)
class CertifiedBound:
    """The larger of the two bounds for a model class (``value`` is the number; ``certified``
    the larger rigorous one)."""

    harmonic: HarmonicBound
    fiber: FiberBound

    @property
    def chosen(self) -> HarmonicBound | FiberBound:
        """The bound that gives ``value`` (the harmonic count on ties)."""
        return self.fiber if self.fiber.enclosure[0] > self.harmonic.enclosure[0] else self.harmonic

    @property
    def value(self) -> float:
        return self.chosen.enclosure[0]

    @property
    def enclosure(self) -> tuple[float, float]:
        """Enclosure of ``max(harmonic, fiber)``: the larger lower end (``value``) and the larger
        upper end."""
        return self.value, max(self.harmonic.enclosure[1], self.fiber.enclosure[1])

    @property
    def source(self) -> str:
        return "fiber" if self.chosen is self.fiber else "harmonic count"

    @property
    def rigorous(self) -> bool:
        """Whether ``value`` is the lower end of a proved enclosure."""
        return self.chosen.rigorous

    @property
    def certified(self) -> float:
        """The larger lower end among the rigorous parts only (never a quadrature estimate)."""
        return max((b.enclosure[0] for b in (self.harmonic, self.fiber) if b.rigorous),
                   default=0.0)


def certified_lower_bound(
    d: int, r: int, H: int, value_class: str = EQ2, *, max_degree: int | None = None
) -> CertifiedBound:
    """``max(harmonic count, fiber bound)`` for the class; ``max_degree`` truncates the
    harmonic count. The arguments are checked here, once, for both parts."""
    d, r, H = check_layer(d, r, H)
    value_class = check_choice("value_class", value_class, VALUE_CLASSES)
    return CertifiedBound(trusted_harmonic_bound(d, r, H, max_degree, TAIL_TOL, value_class),
                          trusted_fiber_bound(d, r, H, value_class))
