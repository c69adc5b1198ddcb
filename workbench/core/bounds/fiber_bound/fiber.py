"""The fiber bound: a proved lower bound for N = 2 on D_2 from the exact energy a head can
capture, not a dimension count (docs/derivations/fiber_bound.md, Lemmas F1-F4), evaluated as a
rigorous enclosure. The certified bound is the larger of this and the harmonic count
(:mod:`workbench.core.bounds.certified`).

Let ``S`` be the span of the heads' key row spaces, ``r* = dim S <= H r``, ``m = d - r*``, and
``c = |P_S w|^2 ~ Beta(r*/2, m/2)``. On the fiber ``{w : P_S w = z}`` (a sphere of radius
``sqrt(1-c)`` in ``S^perp``) the kernel ``E_y sign<y,w> sign<y,w'> = (2/pi) arcsin<w,w'>`` is
zonal, with Funk-Hecke eigenvalues ``lambda_k(m, c)`` on the degree-k harmonics (Lemma F2).
Every Eq. 2 model (fixed value maps) then has

    err >= 1/2 (1 - E_c[ KyFan_H(c) ]),

the sum of the H largest values of ``lambda_0`` (x1), ``lambda_1 (c + (1-c)/m)`` (x m) and
``2 (1-c)/(m+2) lambda_2`` (x m(m+1)/2 - 1) (Lemmas F3-F4). It needs ``H r < d``; above, it is 0.
For value maps that may depend on the query, the sum of *all* values holds instead (the remark
after Lemma F4). At H = 1 the bound is within 0.1 % of the exact error of the Bayes head with
M = I for d >= 12 and r <= d - 2.

Evaluation: a rigorous enclosure in arb balls
(:mod:`workbench.core.bounds.fiber_bound.fiber_enclosure`,
docs/derivations/fiber_bound.md, "Rigorous evaluation", Lemmas R2-R4): the eigenvalues as power
series with exact tails, the Beta average piece by piece between the proved kinks of the Ky Fan
sum. The float path kept here (:func:`fiber_estimate`: Gauss-Legendre in the fiber's half-angle,
where the kernel is smooth, and in phi with c = sin^2 phi, split at the kinks of
:mod:`workbench.core.bounds.fiber_bound.fiber_kinks`; its "enclosure" is the gap between two orders
padded
x10) is a pre-check only: tests/core/test_fiber_enclosure.py holds it inside the rigorous
enclosure, and tests/core/test_fiber_bound.py checks it against mpmath, sympy, brute-force
eigenvalues, Monte Carlo and the closed-form series of ``E_c lambda_0``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from workbench.core import rigorous as rig
from workbench.core.bounds import EQ2, VALUE_CLASSES
from workbench.core.bounds.fiber_bound.fiber_enclosure import captured_enclosure, scalar_enclosure
from workbench.core.bounds.fiber_bound.fiber_kinks import crossing_brackets
from workbench.core.bounds.value import FIBER, Part
from workbench.core.quadrature import beta_function, fiber_angle_rule, gauss_legendre
from workbench.core.validation import (
    check_choice,
    check_dim,
    check_float,
    check_int,
    check_key_rank,
    check_layer,
)

__all__ = [
    "FiberBound",
    "fiber_bound",
    "fiber_eigenvalues",
    "fiber_estimate",
    "fiber_spectrum",
    "one_head_captured",
    "one_head_error",
    "one_head_error_estimate",
]

_PHI_NODES = 96  # Gauss-Legendre nodes per smooth piece of the outer integral (checked at 2x)
_PAD = 10.0  # the enclosure pads the two-order quadrature difference by this factor


@dataclass(frozen=True)
class FiberBound:
    """Result of :func:`fiber_bound`: ``enclosure[0]`` is the number to use."""

    d: int
    r: int
    heads: int
    span_rank: int  # r* = min(H r, d): the heads' keys see at most this many directions
    value: float
    enclosure: tuple[float, float]
    method: str
    rigorous: bool = FIBER.rigorous  # False: the float estimate of fiber_estimate

    def part(self) -> Part:
        """This bound as a part of a :class:`~workbench.core.bounds.value.BoundValue`."""
        return Part(FIBER.name, self.enclosure, self.rigorous, self.method)


def _eigen(m: int, c: np.ndarray) -> np.ndarray:
    """``(3, len(c))`` Funk-Hecke eigenvalues. With ``cos phi = c + (1-c) cos theta``,
    ``sin(phi/2) = rho sin(theta/2)``, so the kernel is ``1 - (4/pi) arcsin(rho sin(theta/2))``:
    smooth in theta, which Gauss-Legendre integrates to machine precision."""
    c = np.asarray(c, dtype=np.float64)
    rho = np.sqrt(np.clip(1.0 - c, 0.0, 1.0))
    if m == 1:  # the fiber is two points +-rho: degrees 0 and 1 only
        lo = (2 / math.pi) * np.arcsin(np.clip(2 * c - 1, -1.0, 1.0))
        return np.stack([(1 + lo) / 2, (1 - lo) / 2, np.zeros_like(c)])
    th, wt, P = fiber_angle_rule(m)
    kern = 1 - (4 / math.pi) * np.arcsin(np.clip(rho[:, None] * np.sin(th / 2), 0.0, 1.0))
    return np.einsum("ct,kt->kc", kern * wt, P)


def fiber_eigenvalues(m: int, c: float) -> tuple[float, float, float]:
    """Funk-Hecke eigenvalues ``(lambda_0, lambda_1, lambda_2)`` of the kernel
    ``(2/pi) arcsin(c + (1-c) t)`` on S^{m-1} (Lemma F2); ``lambda_2 = 0`` when m = 1."""
    m = check_int("m", m, lo=1)
    c = check_float("c", c, lo=0.0, hi=1.0)
    lam = _eigen(m, np.array([c]))[:, 0]
    return float(lam[0]), float(lam[1]), float(lam[2])


def _spectrum(m: int, c: np.ndarray) -> tuple[np.ndarray, list[int]]:
    lam = _eigen(m, c)
    vals = [lam[0], lam[1] * (c + (1 - c) / m)]
    mult = [1, m]
    if m >= 2:
        vals.append(lam[2] * 2 * (1 - c) / (m + 2))
        mult.append(m * (m + 1) // 2 - 1)
    return np.stack(vals), mult


def fiber_spectrum(m: int, c: float) -> list[tuple[float, int]]:
    """Nonzero spectrum ``[(value, multiplicity)]`` of one fiber's problem over all value maps
    M (the generalized eigenvalues of Lemma F3), in the order scalar, vector, traceless."""
    m = check_int("m", m, lo=1)
    c = check_float("c", c, lo=0.0, hi=1.0)
    vals, mult = _spectrum(m, np.array([c]))
    return [(float(v[0]), k) for v, k in zip(vals, mult)]


def _ky_fan(vals: np.ndarray, mult: list[int], H: int) -> np.ndarray:
    """Sum of the H largest positive values (with multiplicity), per column of ``vals``."""
    order = np.argsort(-vals, axis=0)
    total = np.zeros(vals.shape[1])
    left = np.full(vals.shape[1], H)
    mult_a = np.array(mult)
    for rank in range(vals.shape[0]):
        idx = order[rank]
        v = np.maximum(vals[idx, np.arange(vals.shape[1])], 0.0)
        k = np.minimum(mult_a[idx], left)
        total += k * v
        left -= k
    return total


def _crossings(m: int) -> list[float]:
    """Angles phi (c = sin^2 phi) where two spectrum values cross: the only places the Ky Fan
    sum can have a kink. Each bracket of :func:`crossing_brackets` holds exactly one, found by
    bisection."""
    cuts = []
    for i, j, lo, hi in crossing_brackets(m):

        def row(phi: float, i: int = i, j: int = j) -> float:
            vals, _ = _spectrum(m, np.array([math.sin(phi) ** 2]))
            return float(vals[i, 0] - vals[j, 0])

        s_lo = np.sign(row(lo))
        for _ in range(60 if lo < hi else 0):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if np.sign(row(mid)) == s_lo else (lo, mid)
        cuts.append((lo + hi) / 2)
    return cuts


def _average(g, m: int, a: float, b: float) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """``E g(c)`` for ``c ~ Beta(a, b)`` (``2a, 2b`` integers) with an error estimate.
    ``c = sin^2 phi`` removes both endpoint singularities; the kinks of g split [0, pi/2] into
    smooth pieces, each integrated by Gauss-Legendre at two orders (the estimate is their gap)."""
    cuts = sorted({0.0, math.pi / 2, *_crossings(m)})
    total = []
    for n in (_PHI_NODES, 2 * _PHI_NODES):
        x, w = gauss_legendre(n)
        acc = 0.0
        for p0, p1 in zip(cuts[:-1], cuts[1:]):
            phi = p0 + (x + 1) * (p1 - p0) / 2
            jac = 2 * np.sin(phi) ** (2 * a - 1) * np.cos(phi) ** (2 * b - 1)
            acc += float(np.sum(w * (p1 - p0) / 2 * jac * g(np.sin(phi) ** 2)))
        total.append(acc / beta_function(a, b))
    return total[1], abs(total[1] - total[0])


def _captured(d: int, r_star: int, count: int) -> tuple[float, float]:
    """A proved enclosure ``(lo, hi)`` of ``E_c`` of the sum of the ``count`` largest fiber
    values (:func:`workbench.core.bounds.fiber_bound.fiber_enclosure.captured_enclosure`)."""
    return captured_enclosure(d, r_star, count)


@lru_cache(maxsize=4096)
def _captured_estimate(d: int, r_star: int, count: int) -> tuple[float, float]:
    """The float pre-check of :func:`_captured`: the value and its error estimate."""
    m = d - r_star

    def g(c: np.ndarray) -> np.ndarray:
        vals, mult = _spectrum(m, c)
        return _ky_fan(vals, mult, count)

    v, e = _average(g, m, r_star / 2, m / 2)
    return v, _PAD * e + 1e-13


def one_head_captured(d: int, r: int) -> float:
    """``E_c lambda_0``: the energy the Bayes head with M = I captures (equal to
    ``sum_{l odd} eta_l^2 C(l+r-1, r-1)/N(d,l)``; Lemma F2's check against the series)."""
    return 1 - 2 * one_head_error(d, r)[0]


def one_head_error(d: int, r: int) -> tuple[float, tuple[float, float]]:
    """Exact error ``1/2 (1 - E_c lambda_0)`` of one Bayes head with M = I and key-rank r, with
    its rigorous enclosure
    (:func:`workbench.core.bounds.fiber_bound.fiber_enclosure.scalar_enclosure`)."""
    d = check_dim(d)
    r = check_key_rank(r, d)
    if r >= d:
        return 0.0, (0.0, 0.0)
    lo, hi = _uncaptured(*scalar_enclosure(d, r))
    return lo + (hi - lo) / 2, (lo, hi)


def _uncaptured(cap_lo: float, cap_hi: float) -> tuple[float, float]:
    """The error ``1/2 (1 - captured)`` for captured energy in ``[cap_lo, cap_hi]``, rounded
    outward and clipped to ``[0, 1/2]`` (an error is never outside it)."""
    with rig.precision():
        half = rig.arb(1) / 2
        return (max(0.0, rig.lower_float(half * (1 - rig.arb(cap_hi)))),
                min(0.5, rig.upper_float(half * (1 - rig.arb(cap_lo)))))


def one_head_error_estimate(d: int, r: int) -> tuple[float, tuple[float, float]]:
    """The float pre-check of :func:`one_head_error`: Gauss-Legendre, two-order gap x10."""
    d = check_dim(d)
    r = check_key_rank(r, d)
    if r >= d:
        return 0.0, (0.0, 0.0)
    m = d - r
    v, e = _average(lambda c: _eigen(m, c)[0], m, r / 2, m / 2)
    pad = float(0.5 * (_PAD * e + 1e-13))
    err = float(0.5 * (1 - v))
    return err, (err - pad, err + pad)


def fiber_bound(d: int, r: int, H: int, value_class: str = EQ2) -> FiberBound:
    """Fiber bound on the D_2 error (N = 2) of every model with H heads of key-rank r.

    ``value_class="eq2"``: fixed value maps, the H largest fiber values (Ky Fan, Lemma F4).
    ``"query-dependent-values"``: value maps ``M_h(y)``, the sum of *all* fiber values (the
    trace; it no longer depends on H). Zero when ``H r >= d``: the keys then see every direction.
    """
    d, r, H = check_layer(d, r, H)
    return trusted_fiber_bound(d, r, H, check_choice("value_class", value_class, VALUE_CLASSES))


def trusted_fiber_bound(d: int, r: int, H: int, value_class: str) -> FiberBound:
    """:func:`fiber_bound` on arguments already checked (``certified_lower_bound`` checks them
    once for both of its parts)."""
    r_star, count = _span_and_count(d, r, H, value_class)
    if r_star >= d:
        return FiberBound(d, r, H, r_star, 0.0, (0.0, 0.0), "arithmetic: H r >= d gives 0")
    lo, hi = _uncaptured(*_captured(d, r_star, count))
    method = (f"rigorous enclosure (arb balls: eigenvalue series with exact tails, the Beta "
              f"average between proved kinks), r* = {r_star}, m = {d - r_star}")
    return FiberBound(d, r, H, r_star, lo + (hi - lo) / 2, (lo, hi), method)


def fiber_estimate(d: int, r: int, H: int, value_class: str = EQ2) -> FiberBound:
    """The float quadrature estimate of :func:`fiber_bound` (``rigorous=False``): a pre-check
    of the rigorous enclosure, never the number a bound reports."""
    d, r, H = check_layer(d, r, H)
    r_star, count = _span_and_count(d, r, H, check_choice("value_class", value_class,
                                                          VALUE_CLASSES))
    if r_star >= d:
        return FiberBound(d, r, H, r_star, 0.0, (0.0, 0.0), "arithmetic: H r >= d gives 0",
                          rigorous=False)
    cap, err = _captured_estimate(d, r_star, count)
    value = float(max(0.0, 0.5 * (1 - cap)))
    lo = float(max(0.0, 0.5 * (1 - cap - err)))
    hi = float(min(0.5, 0.5 * (1 - cap + err)))
    method = (f"fiber quadrature estimate, not a rigorous enclosure (Gauss-Legendre, two-order "
              f"gap x{_PAD:g}), r* = {r_star}, m = {d - r_star}")
    return FiberBound(d, r, H, r_star, value, (lo, hi), method, rigorous=False)


def _span_and_count(d: int, r: int, H: int, value_class: str) -> tuple[int, int]:
    """``r* = min(H r, d)`` and how many fiber values the class may take: H (Eq. 2) or all of
    them (query-dependent values: the trace)."""
    r_star = min(H * r, d)
    m = d - r_star
    return r_star, (H if value_class == EQ2 else 1 + m + m * (m + 1) // 2)
