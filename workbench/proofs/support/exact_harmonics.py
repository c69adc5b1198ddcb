"""Exact-arithmetic references for the harmonic layer (docs/derivations/harmonics.md,
Lemma H1): what the claims check ``workbench.core.harmonics`` and the certified bounds against.

Independent of the library by construction: ``N(d, l)`` as ``dim Hom_l - dim Hom_{l-2}``, and
``eta_l(d)^2`` from the Gamma closed form written with exact factorials (not the library's ratio
recurrence), summed in mpmath interval arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import mpmath


IV_PREC = 160  # bits of the interval sums


def hom_dim(d: int, l: int) -> int:
    """Dimension of the homogeneous polynomials of degree l in d variables (0 for l < 0)."""
    return math.comb(l + d - 1, d - 1) if l >= 0 else 0


def harmonic_count(d: int, l: int) -> int:
    """``dim Hom_l - dim Hom_{l-2}``: the independent count of ``N(d,l)`` (Laplacian is onto)."""
    return hom_dim(d, l) - hom_dim(d, l - 2)


def _gamma_exact(two_x: int) -> tuple[Fraction, int]:
    """``Gamma(two_x / 2) = q * sqrt(pi)^k`` exactly, for integers and half-integers > 0."""
    if two_x % 2 == 0:
        return Fraction(math.factorial(two_x // 2 - 1)), 0
    n = (two_x - 1) // 2  # Gamma(n + 1/2) = (2n)! sqrt(pi) / (4^n n!)
    return Fraction(math.factorial(2 * n), 4**n * math.factorial(n)), 1


@lru_cache(maxsize=16384)
def eta_squared_exact(d: int, l: int) -> tuple[Fraction, int]:
    """``eta_l(d)^2 = q * pi^p`` exactly, from the Gamma closed form of Lemma H1 written with
    exact factorials and the independent count :func:`harmonic_count` (not the library's ratio
    recurrence). ``p`` is 0 for odd d and -2 for even d; even l give ``(0, 0)``."""
    if l % 2 == 0:
        return Fraction(0), 0
    m = (l - 1) // 2
    g1, k1 = _gamma_exact(2 * (d - 1))  # Gamma(d-1)
    g2, k2 = _gamma_exact(2 * m + d)  # Gamma(m + d/2)
    g3, k3 = _gamma_exact(d - 1)  # Gamma((d-1)/2)
    g4, k4 = _gamma_exact(2 * (2 * m + d))  # Gamma(2m + d)
    a = 2 * g1 * math.factorial(2 * m) * g2 / (g3 * g4 * math.factorial(m))
    k = k1 + k2 - 1 - k3 - k4  # power of sqrt(pi) in a_m
    assert k % 2 == 0
    return harmonic_count(d, l) * a * a, k


@contextmanager
def iv_precision(bits: int = IV_PREC) -> Iterator[None]:
    """Set mpmath's interval precision for a block (restored afterwards)."""
    from mpmath import iv
    old = iv.prec
    iv.prec = bits
    try:
        yield
    finally:
        iv.prec = old


def eta_squared_interval(d: int, l: int) -> mpmath.ctx_iv.ivmpf:
    """``eta_l(d)^2`` as an mpmath interval (call inside :func:`iv_precision`)."""
    from mpmath import iv
    q, p = eta_squared_exact(d, l)
    val = iv.mpf(q.numerator) / iv.mpf(q.denominator)
    return val * iv.pi**p if p else val


def partial_sum_interval(d: int, L: int, rest: bool = False) -> tuple[float, float]:
    """Rigorous float enclosure of ``S_L = sum_{l odd <= L} eta_l(d)^2`` (of ``1 - S_L`` when
    ``rest``; computed in interval arithmetic, not by subtracting floats)."""
    from mpmath import iv
    with iv_precision():
        s = iv.mpf(0)
        for l in range(1, L + 1, 2):
            s += eta_squared_interval(d, l)
        return float_enclosure(1 - s if rest else s)


def float_enclosure(x: mpmath.ctx_iv.ivmpf) -> tuple[float, float]:
    """Floats ``lo <= x <= hi`` around an mpmath interval (one ulp outward of the nearest)."""
    import mpmath
    lo, hi = float(mpmath.mpf(x.a)), float(mpmath.mpf(x.b))
    return math.nextafter(lo, -math.inf), math.nextafter(hi, math.inf)


def independent_bound(
    d: int, r: int, H: int, L: int, value_class: str = "eq2"
) -> tuple[float, float]:
    """Rigorous float enclosure of the full series ``LB`` recomputed without the library's bound
    code: ``eta_l^2`` from exact factorials, ``N`` from the homogeneous-polynomial count,
    ``D_l`` from ``math.comb`` (times ``d(d+1)/2`` for query-dependent values), summed in mpmath
    intervals to L; the rest ``T = 1 - S_L`` counted between ``(1 - min(1, H g)) T`` and T,
    ``g = 3 q C(L+r+3, r-1) / N(d, L+2)`` (Lemma 6, "The counted tail")."""
    from mpmath import iv
    q = 1 if value_class == "eq2" else d * (d + 1) // 2
    with iv_precision():
        total = energy = iv.mpf(0)
        for l in range(1, L + 1, 2):
            N = harmonic_count(d, l)
            D = q * sum(math.comb(k + r - 1, r - 1) for k in (l - 2, l, l + 2) if k >= 0)
            e2 = eta_squared_interval(d, l)
            energy += e2
            if N > H * D:
                total += e2 * (iv.mpf(N - H * D) / iv.mpf(N))
        if r >= d - 1:
            return float_enclosure(total / 2)
        rest = 1 - energy
        num, den = 3 * q * math.comb(L + r + 3, r - 1), harmonic_count(d, L + 2)
        kept = iv.mpf(max(0, den - H * num)) / iv.mpf(den)
        lo = float_enclosure((total + rest * kept) / 2)[0]
        hi = float_enclosure((total + rest) / 2)[1]
        return lo, hi
