"""Rigorous enclosures by ball arithmetic: the one home for proved numbers
(docs/derivations/intervals.md, "Rigorous enclosures").

Every number the workbench calls *rigorous* (or *certified*) is the lower or upper end of an
interval that provably contains the true value. The interval is computed with arb balls
(python-flint): each operation returns a midpoint and a radius that bound its exact result, and
``acb.integral`` returns a ball that contains the integral, its truncation error included. The
ends come back as floats rounded *outward* (:func:`lower_float`, :func:`upper_float`), so no
conversion narrows an enclosure.

python-flint is imported on first use, so importing this module costs nothing (the CLI validates
its arguments before any mathematics is loaded).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = [
    "PREC_BITS",
    "arb",
    "acb",
    "arb_poly",
    "arb_legendre_root",
    "arb_mat",
    "ball",
    "beta",
    "integrate",
    "integrate_complex",
    "lower_float",
    "pi",
    "precision",
    "relative_width",
    "to_interval",
    "upper_float",
    "working_precision",
]

PREC_BITS = 128  # default working precision of the balls, in bits


def _flint() -> Any:
    import flint

    return flint


def arb(x: object) -> Any:
    """A real ball: an exact int, a string (``"0.1"`` is the ball around 1/10), a float (taken
    exactly) or an arb."""
    return _flint().arb(x)


def ball(mid: object, rad: object) -> Any:
    """The real ball ``[mid - rad, mid + rad]`` (``rad >= 0``; both taken exactly)."""
    return _flint().arb(mid, rad)


def arb_poly(coeffs: list[Any]) -> Any:
    """A polynomial with ball coefficients (``coeffs[n]`` multiplies ``x^n``); calling it on a
    ball evaluates it by Horner's rule in ball arithmetic."""
    return _flint().arb_poly(coeffs)


def arb_legendre_root(n: int, k: int) -> tuple[Any, Any]:
    """The k-th root of the Legendre polynomial ``P_n`` and its Gauss-Legendre weight, as
    real balls (``arb.legendre_p_root``): the n-point rule on ``[-1, 1]``."""
    return _flint().arb.legendre_p_root(n, k, weight=True)


def arb_mat(rows: int, cols: int, entries: list[Any]) -> Any:
    """A ``rows x cols`` matrix of real balls (row-major ``entries``); ``*`` multiplies in C."""
    return _flint().arb_mat(rows, cols, entries)


def beta(a: Any, b: Any) -> Any:
    """The ball ``B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)`` for real balls ``a, b > 0``."""
    a, b = arb(a), arb(b)
    return a.gamma() * b.gamma() / (a + b).gamma()


def pi() -> Any:
    """A real ball containing pi (at the working precision)."""
    return _flint().arb.pi()


def acb(x: object, y: object = 0) -> Any:
    """A complex ball ``x + i y``."""
    return _flint().acb(x, y)


def working_precision() -> int:
    """The bits flint works at now (a cache key for balls rounded at this precision)."""
    return int(_flint().ctx.prec)


@contextmanager
def precision(bits: int = PREC_BITS) -> Iterator[None]:
    """Work at ``bits`` bits inside the block (flint's context is global: this restores it)."""
    ctx = _flint().ctx
    old = ctx.prec
    ctx.prec = bits
    try:
        yield
    finally:
        ctx.prec = old


def lower_float(x: Any) -> float:
    """The largest float that is <= every point of the real ball ``x`` (outward rounding)."""
    x = arb(x)
    if not x.is_finite():
        return -math.inf
    lo = x.lower()
    f = float(lo)
    while arb(f) > lo:
        f = math.nextafter(f, -math.inf)
    return f


def upper_float(x: Any) -> float:
    """The smallest float that is >= every point of the real ball ``x`` (outward rounding)."""
    x = arb(x)
    if not x.is_finite():
        return math.inf
    hi = x.upper()
    f = float(hi)
    while arb(f) < hi:
        f = math.nextafter(f, math.inf)
    return f


def to_interval(x: Any) -> tuple[float, float]:
    """``(lo, hi)`` floats with ``lo <= x <= hi`` for every point of the ball ``x``."""
    return lower_float(x), upper_float(x)


def relative_width(lo: float, hi: float) -> float:
    """``(hi - lo) / max(|lo|, |hi|)``; 0 for the exact interval ``[0, 0]``."""
    scale = max(abs(lo), abs(hi))
    return 0.0 if scale == 0 and hi == lo else (hi - lo) / scale


def integrate(
    f: Callable[[Any, bool], Any], a: object, b: object, *, rel_tol: float | None = None,
    eval_limit: int | None = None, deg_limit: int | None = None,
) -> Any:
    """A real ball that contains ``int_a^b f``, truncation error included (``acb.integral``).

    ``f(x, analytic)`` gets a complex ball; where ``analytic`` is true it must return a
    non-finite ball unless ``f`` is analytic on all of ``x`` (branch cuts of ``sqrt``, ``log``,
    ``asin``: pass the flag on to flint's functions that take it). Raises ``ArithmeticError`` if
    the enclosure is not finite (the integrand could not be bounded). ``eval_limit`` and
    ``deg_limit`` raise or cap flint's budgets (integrand calls, Gauss-Legendre degree): for
    integrands that grow fast off the real line, such as polynomials of high degree; past a
    cap the ball is still an enclosure, only wider."""
    acb_t = _flint().acb
    kwargs: dict[str, Any] = {}
    if rel_tol is not None:
        kwargs["rel_tol"] = rel_tol
    if eval_limit is not None:
        kwargs["eval_limit"] = eval_limit
    if deg_limit is not None:
        kwargs["deg_limit"] = deg_limit
    val = acb_t.integral(f, acb_t(a), acb_t(b), **kwargs).real
    if not val.is_finite():
        raise ArithmeticError(f"the integral over [{a}, {b}] has no finite enclosure")
    return val


def integrate_complex(f: Callable[[Any, bool], Any], a: object, b: object, *,
                      rel_tol: float | None = None) -> Any:
    """A complex ball that contains ``int_a^b f`` (``acb.integral``; ``f`` as in
    :func:`integrate`), for integrands with complex parameters: an integral nested inside
    another one's integrand. Its ball may be non-finite; the outer integral then bisects."""
    acb_t = _flint().acb
    kwargs: dict[str, Any] = {} if rel_tol is None else {"rel_tol": rel_tol}
    return acb_t.integral(f, acb_t(a), acb_t(b), **kwargs)
