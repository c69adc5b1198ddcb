"""Rigorous enclosures of the sign energies ``eta_l^2`` in exact integer arithmetic, for the
harmonic count (docs/derivations/lower_bound.md, "Arithmetic").

``eta_1^2`` is a rational, times ``pi^-2`` for even d; ``eta_{l+2}^2 / eta_l^2`` is a ratio of
integers. A number ``x`` is held as *fixed point*: integers ``lo <= x 2^bits <= hi``. Every
product keeps ``lo`` floored and ``hi`` ceiled, and sums of enclosures are exact, so each
enclosure is rigorous (outward rounding) at the cost of one unit per operation.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

__all__ = ["ceil_div", "eta1_sq_exact", "eta2_enclosures", "eta2_ratio", "to_float"]


def ceil_div(a: int, b: int) -> int:
    """``ceil(a / b)`` for integers, ``b > 0``."""
    return -((-a) // b)


def to_float(n: int, bits: int) -> float:
    """``n / 2^bits`` rounded to the nearest float (Python's int division rounds correctly)."""
    return n / (1 << bits)


def eta1_sq_exact(d: int) -> tuple[Fraction, bool]:
    """``eta_1^2 = d a_0^2`` as ``(rational, has_pi^-2)``; ``a_0 = 2 Gamma(d/2)/(sqrt(pi)(d-1)
    Gamma((d-1)/2))``, with Gamma at integers and half-integers written out exactly."""
    if d % 2 == 0:
        n = d // 2  # Gamma(n)/Gamma(n - 1/2) = 4^(n-1) ((n-1)!)^2 / ((2n-2)! sqrt(pi))
        R = Fraction(4 ** (n - 1) * math.factorial(n - 1) ** 2, math.factorial(2 * n - 2))
        return d * 4 * R * R / (d - 1) ** 2, True
    n = (d - 1) // 2  # Gamma(n + 1/2)/Gamma(n) = (2n)! sqrt(pi) / (4^n n! (n-1)!)
    R = Fraction(math.factorial(2 * n), 4**n * math.factorial(n) * math.factorial(n - 1))
    return d * 4 * R * R / (d - 1) ** 2, False


def eta2_ratio(d: int, l: int) -> tuple[int, int]:
    """``eta_{l+2}^2 / eta_l^2`` for odd l, as an exact fraction (num, den)."""
    m = (l - 1) // 2
    num = (2 * l + d + 2) * (l + d - 1) * (l + d - 2) * (2 * m + 1) ** 2
    den = (2 * l + d - 2) * (l + 2) * (l + 1) * (2 * m + d + 1) ** 2
    return num, den


def _atan_inv(x: int, bits: int) -> tuple[int, int]:
    """``(s, err)``: ``|atan(1/x) 2^bits - s| < err`` for an integer ``x >= 2``, by the alternating
    series ``sum_k (-1)^k / ((2k+1) x^(2k+1))``: each term floored exactly (an error below one
    unit each), stopped at the first zero term (the rest is below one unit)."""
    s, k, power = 0, 0, x
    while True:
        term = (1 << bits) // (power * (2 * k + 1))
        if term == 0:
            return s, k + 1
        s += -term if k % 2 else term
        k, power = k + 1, power * x * x


def _pi_squared(bits: int) -> tuple[Fraction, Fraction]:
    """Rationals ``lo < pi^2 < hi`` with ``hi - lo < 2^-(bits + 32)``, from Machin's formula
    ``pi = 16 atan(1/5) - 4 atan(1/239)`` in exact integer arithmetic."""
    b = bits + 48
    a5, e5 = _atan_inv(5, b)
    a239, e239 = _atan_inv(239, b)
    p, err = 16 * a5 - 4 * a239, 16 * e5 + 4 * e239  # |pi 2^b - p| < err
    scale = 1 << (2 * b)
    return Fraction((p - err) ** 2, scale), Fraction((p + err) ** 2, scale)


@lru_cache(maxsize=32)
def eta2_enclosures(d: int, L: int, bits: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(lo, hi)``: ``lo[i] <= eta_l^2 2^bits <= hi[i]`` for the odd ``l = 2i + 1 <= L``."""
    e1, has_pi = eta1_sq_exact(d)
    scale = Fraction(1 << bits)
    if has_pi:
        pi2_lo, pi2_hi = _pi_squared(bits)
        lo_f, hi_f = e1 * scale / pi2_hi, e1 * scale / pi2_lo
    else:
        lo_f = hi_f = e1 * scale
    lo = lo_f.numerator // lo_f.denominator
    hi = ceil_div(hi_f.numerator, hi_f.denominator)
    los, his = [], []
    for l in range(1, L + 1, 2):
        los.append(lo)
        his.append(hi)
        num, den = eta2_ratio(d, l)
        lo, hi = lo * num // den, ceil_div(hi * num, den)
    return tuple(los), tuple(his)
