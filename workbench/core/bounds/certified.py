"""The lower bound for N = 2 on D_2: the larger of the harmonic count (:mod:`.harmonic`) and the
fiber bound (:mod:`.fiber`) for a value class (docs/derivations/fiber_bound.md, Lemma F4 and its
remark on query-dependent value maps; docs/derivations/lower_bound.md, Lemma 6). Models are
confronted with ``value``. Its labels are those of its :class:`BoundValue`, whose two parts are
the harmonic count and the fiber bound (docs/derivations/intervals.md, "Rigorous enclosures").
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.core.bounds import EQ2, VALUE_CLASSES
from workbench.core.bounds.fiber_bound.fiber import FiberBound, trusted_fiber_bound
from workbench.core.bounds.harmonic_count.harmonic import (
    TAIL_TOL,
    HarmonicBound,
    trusted_harmonic_bound,
)
from workbench.core.bounds.value import BoundValue
from workbench.core.validation import check_choice, check_layer

__all__ = ["CertifiedBound", "certified_lower_bound", "combined"]


def combined(harmonic: HarmonicBound, fiber: FiberBound) -> CertifiedBound:
    """The combination layer: ``max(harmonic count, fiber bound)`` at one point, as the one
    value every command prints."""
    return CertifiedBound((harmonic.part(), fiber.part()), harmonic, fiber)


@dataclass(frozen=True)
class CertifiedBound(BoundValue):
    """The two bounds for a model class as one :class:`BoundValue` (every label is computed
    from its two parts), with the two results kept for what only they say (``harmonic``: the
    degrees summed; ``fiber``: the span of the keys)."""

    harmonic: HarmonicBound
    fiber: FiberBound

    @property
    def bound_value(self) -> BoundValue:
        return self


def certified_lower_bound(
    d: int, r: int, H: int, value_class: str = EQ2, *, max_degree: int | None = None
) -> CertifiedBound:
    """``max(harmonic count, fiber bound)`` for the class; ``max_degree`` truncates the
    harmonic count. The arguments are checked here, once, for both parts."""
    d, r, H = check_layer(d, r, H)
    value_class = check_choice("value_class", value_class, VALUE_CLASSES)
    return combined(trusted_harmonic_bound(d, r, H, max_degree, TAIL_TOL, value_class),
                    trusted_fiber_bound(d, r, H, value_class))
