"""Expectations over the law of ``t = <y, u>`` (y uniform on S^{d-1}, u a fixed unit vector),
computed independently of the library's quadratures: in ``t`` itself, density
``(1 - t^2)^((d-3)/2) / B(1/2, (d-1)/2)`` on ``[-1, 1]``, by mpmath's tanh-sinh rule at 20 digits
(docs/derivations/constructions.md, Fact 1 and Theorem 5: both claimed errors are such means;
the claims compare them at relative 1e-8, far above the rule's error at 20 digits)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import mpmath



def abs_t_mean(f: Callable[[mpmath.mpf], mpmath.mpf], d: int,
               breaks: Sequence[float] = ()) -> float:
    """``E f(|t|)``; ``breaks`` in ``(0, 1)`` split ``[0, 1]`` where ``f`` changes scale."""
    import mpmath
    with mpmath.workdps(20):
        nodes = [mpmath.mpf(0), *sorted(mpmath.mpf(b) for b in breaks if 0 < b < 1),
                 mpmath.mpf(1)]
        half = mpmath.mpf(d - 3) / 2
        integral = mpmath.quad(lambda t: f(t) * (1 - t * t) ** half, nodes)
        return float(2 * integral / mpmath.beta(mpmath.mpf(1) / 2, mpmath.mpf(d - 1) / 2))
