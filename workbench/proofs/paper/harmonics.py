"""Claims about the harmonic-analysis layer (docs/derivations/harmonics.md): the dimension
``N(d, l)`` and the Gegenbauer coefficients ``eta_l`` of sign.

Every check compares the library (``core.harmonics``) with an *independent* computation:

- ``N(d,l)`` against the count ``dim Hom_l - dim Hom_{l-2}`` and against the Gegenbauer norm
  ``E[P_l(t)^2] = 1/N(d,l)`` by exact Gauss-Jacobi quadrature;
- the closed form of ``eta_l`` against 30-digit tanh-sinh quadrature of ``sign``; the partial sums
  of ``eta_l^2`` in interval arithmetic from the Gamma closed form written with exact factorials
  (not the library's ratio recurrence).

The kernels of rank-1 hardmax heads built on them are ``workbench.proofs.paper.kernels``.

Its test: ``tests/claims/test_harmonics.py``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

import workbench.core.harmonics as gegenbauer
from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.registry import claim
from workbench.proofs.support.exact_harmonics import (
    eta_squared_exact,
    eta_squared_interval,
    float_enclosure,
    harmonic_count,
    iv_precision,
    partial_sum_interval,
)

if TYPE_CHECKING:
    import mpmath



# --------------------------------------------------------------------------- N(d, l)
@claim(
    "harmonics.dimension",
    "N(d,l) = (2l+d-2)/l C(l+d-3, l-1) is the dimension of the degree-l spherical harmonics",
    "lemma",
    statement="N(d,l) = dim Hom_l - dim Hom_{l-2} and E_t[P_l(t)^2] = 1/N(d,l)",
    ref="derivations/harmonics.md#conventions", mark="ours",
)
def dimension(ctx: CheckContext) -> list[Evidence]:
    from scipy.special import roots_jacobi
    dims = ctx.pick(list(range(2, 13)) + [64], list(range(2, 33)) + [64, 257, 1024])
    l_max = ctx.pick(30, 80)
    out: list[Evidence] = []
    for d in dims:
        diff = max(abs(gegenbauer.dim_harmonics(d, l) - harmonic_count(d, l))
                   for l in range(l_max + 1))
        out.append(Evidence(diff, 0, "==", "exact", {"d": d, "l_max": l_max},
                            note="max_l |N(d,l) - (dim Hom_l - dim Hom_{l-2})|"))
    # E_t[P_l(t)^2] = 1/N(d,l) (addition theorem), by Gauss-Jacobi quadrature exact to degree 2n-1
    for d in ctx.pick((2, 3, 5, 10, 64), (2, 3, 4, 5, 7, 10, 16, 64, 256)):
        a = (d - 3) / 2
        x, w = roots_jacobi(l_max + 2, a, a)
        w = w / w.sum()
        P = gegenbauer.legendre_d(d, l_max, x)
        rel = max(abs(float((P[l] ** 2) @ w) * gegenbauer.dim_harmonics(d, l) - 1.0)
                  for l in range(l_max + 1))
        out.append(Evidence.identity(
            rel, {"d": d, "l_max": l_max}, tolerance=1e-11,
            note="max_l |N(d,l) E[P_l^2] - 1|, Gauss-Jacobi quadrature (float64)"))
    return out


# --------------------------------------------------------------------------- eta_l
def _enclosure(lo: float, hi: float, bound: float, params: dict[str, Any], note: str) -> Evidence:
    """A rigorous enclosure ``[lo, hi]`` of a value claimed ``<= bound``."""
    return Evidence((lo + hi) / 2, bound, "<=", "interval", params, ci=(lo, hi), ci_level=1.0,
                    interval="enclosure", note=note)


@claim(
    "harmonics.sign_coefficients",
    "Closed form of the Gegenbauer coefficients eta_l of sign(t); sum_l eta_l^2 = 1",
    "lemma",
    depends_on=("harmonics.dimension",),
    statement="eta_l = (-1)^m sqrt(N) 2 G(d-1) (2m)! G(m+d/2) / (sqrt(pi) G((d-1)/2) G(2m+d) m!),"
    " l = 2m+1; sum_{l odd} eta_l^2 = 1",
    ref="derivations/harmonics.md#lemma-h1-closed-form-of-eta_l", mark="ours",
)
def sign_coefficients_claim(ctx: CheckContext) -> list[Evidence]:
    import mpmath
    import sympy as sp
    out: list[Evidence] = []
    # (1) closed form (30 digits) vs 30-digit tanh-sinh quadrature; float64 path vs quadrature
    pts = ctx.pick([(2, 3), (3, 1), (3, 4), (4, 3), (5, 1), (5, 5), (10, 7), (64, 3)],
                   [(d, l) for d in (2, 3, 4, 5, 10, 64) for l in (1, 2, 5, 11, 21, 41)])
    with mpmath.workdps(30):
        for d, l in pts:
            ref = _quad_eta(d, l)
            closed = gegenbauer.sign_coefficient_mp(d, l, dps=30)
            p = {"d": d, "l": l}
            out.append(Evidence(float(abs(closed - ref)), 0.0, "<=", "exact", p, tolerance=1e-25,
                                note="|closed form - 30-digit quadrature|, 30-digit arithmetic"
                                + (" (d = 2: Fourier integral)" if d == 2 else "")))
            f64 = float(gegenbauer.sign_coefficients(d, l)[l])
            out.append(Evidence(f64, float(ref), "==", "identity", p,
                                tolerance=1e-14 * max(1.0, abs(float(ref))),
                                note="float64 ratio recurrence vs quadrature"))
    # (2) d = 5 hand value eta_1 = 3 / (8 sqrt(1/5)), symbolically and in float
    hand = sp.Rational(3, 8) / sp.sqrt(sp.Rational(1, 5))
    sym_diff = sp.simplify(gegenbauer.sign_coefficient_exact(5, 1) - hand)
    out.append(Evidence(float(abs(sym_diff)), 0.0, "==", "exact", {"d": 5, "l": 1},
                        note="sympy: closed form minus 3/(8 sqrt(1/5))"))
    q, pw = eta_squared_exact(5, 1)
    out.append(Evidence(float(q), 45 / 64, "==", "exact", {"d": 5, "l": 1, "pi_power": pw},
                        note="exact-factorial eta_1^2 = (3 sqrt5 / 8)^2 = 45/64"))
    out.append(Evidence(float(gegenbauer.sign_coefficients(5, 1)[1]), 3 / (8 * math.sqrt(1 / 5)),
                        "==", "identity", {"d": 5, "l": 1}, tolerance=2e-15))
    # (3) the exact-factorial eta_l^2 agree with the library's float64 values
    for d in ctx.pick((2, 5, 8, 64), (2, 3, 4, 5, 8, 16, 64, 256)):
        L = ctx.pick(61, 401)
        f = gegenbauer.sign_coefficients(d, L) ** 2
        with iv_precision():
            rel = max(
                abs(float_enclosure(eta_squared_interval(d, l))[0] / f[l] - 1)
                for l in range(1, L + 1, 2)
            )
        out.append(Evidence.identity(rel, {"d": d, "L": L}, tolerance=1e-13,
                                     note="max relative gap, exact-factorial vs float64 eta_l^2"))
    # (4) partial sums: S_L <= 1 (Bessel) rigorously, and 1 - S_L <= eps at a witness L
    for d in ctx.pick((2, 3, 5, 8, 64), (2, 3, 4, 5, 8, 16, 32, 64)):
        for L in (1, 11, 101):
            lo, hi = partial_sum_interval(d, L)
            out.append(_enclosure(lo, hi, 1.0, {"d": d, "L": L}, "sum_{l odd <= L} eta_l^2"))
        for eps in ctx.pick((1e-2,), (1e-2, 3e-3, 1e-3)):
            L, rest = _witness_degree(d, eps)
            if rest > eps:  # the float series never reached 1 - eps: no witness to certify
                out.append(Evidence(rest, eps, "<=", "exact", {"d": d, "L": L, "eps": eps},
                                    note="float 1 - S_L reaches eps before the search cap "
                                    "(Parseval: S_L -> 1)"))
                continue
            lo, hi = partial_sum_interval(d, L, rest=True)
            out.append(_enclosure(lo, hi, eps, {"d": d, "L": L, "eps": eps},
                                  "1 - S_L at the least L the float recurrence proposes"))
    return out


def _quad_eta(d: int, l: int) -> mpmath.mpf:
    """``eta_l(d)`` by 30-digit tanh-sinh quadrature. For d = 2 the Gegenbauer polynomials are
    Chebyshev polynomials, so a second, independent route is used there: the Fourier integral
    ``eta_l = sqrt2/pi int_0^pi sign(cos phi) cos(l phi) dphi`` with the breakpoint at pi/2."""
    import mpmath
    if d != 2:
        return gegenbauer.gegenbauer_transform(lambda t: mpmath.sign(t), d, l, dps=30)
    with mpmath.workdps(40):
        val = mpmath.quad(
            lambda ph: mpmath.sign(mpmath.cos(ph)) * mpmath.cos(l * ph),
            [0, mpmath.pi / 2, mpmath.pi],
        )
        return +(mpmath.sqrt(2 if l else 1) * val / mpmath.pi)


_WITNESS_CAP = 25941  # 101 -> 405 -> 1621 -> 6485 -> 25941: the search stops there


def _witness_degree(d: int, eps: float) -> tuple[int, float]:
    """Least odd L with ``1 - S_L <= eps`` according to the float64 recurrence (a proposal that
    the interval evaluation then certifies or refutes), with that float ``1 - S_L``. The search
    stops at ``_WITNESS_CAP``: float energies that never reach ``1 - eps`` (a slip in eta_l;
    Parseval gives ``S_L -> 1``) come back with ``1 - S_L > eps`` instead of growing the search
    until memory runs out."""
    L = 101
    while True:
        rest = 1 - np.cumsum(gegenbauer.sign_coefficients(d, L)[1::2] ** 2)
        idx = np.nonzero(rest <= eps * (1 - 1e-9))[0]
        if len(idx):
            return 2 * int(idx[0]) + 1, float(rest[idx[0]])
        if L >= _WITNESS_CAP:
            return L, float(rest[-1])
        L = 4 * L + 1
