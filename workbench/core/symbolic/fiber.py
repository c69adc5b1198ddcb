"""Sympy encoding of the fiber bound (docs/derivations/fiber_bound.md, Lemmas F2-F4).

``eigenvalue_expr(k)`` is the Funk-Hecke eigenvalue ``lambda_k(m, c)`` of the kernel
``(2/pi) arcsin(c + (1-c) t)`` on S^{m-1} as an unevaluated integral in ``t``;
``spectrum_expr()`` gives the three values of one fiber's problem with their multiplicities;
``fiber_bound_expr()`` the bound ``1/2 (1 - E_c KyFan_H(c))`` with ``c ~ Beta(r*/2, m/2)``.
The numeric side is ``workbench.core.bounds.fiber_bound.fiber`` (tests compare the two).
"""

from __future__ import annotations

import sympy as sp

from workbench.core.symbolic.symbols import H, d, r

m = sp.Symbol("m", integer=True, positive=True)  # dimension of the fiber's ambient space S^perp
c = sp.Symbol("c", nonnegative=True)  # |P_S w|^2, the squared length the keys see
t = sp.Symbol("t", real=True)  # <v, v'> / rho^2 on the fiber sphere

KERNEL = 2 / sp.pi * sp.asin(c + (1 - c) * t)
LEGENDRE = (sp.Integer(1), t, (m * t**2 - 1) / (m - 1))
DENSITY = (1 - t**2) ** ((m - 3) / 2) / sp.beta(sp.Rational(1, 2), (m - 1) / 2)


def eigenvalue_expr(k: int) -> sp.Integral:
    """``lambda_k(m, c) = int_{-1}^{1} k(c + (1-c) t) P_k(t) dmu_m(t)`` (m >= 2; Lemma F2)."""
    if k not in (0, 1, 2):
        raise ValueError(f"k must be 0, 1 or 2 (got {k!r})")
    return sp.Integral(KERNEL * LEGENDRE[k] * DENSITY, (t, -1, 1))


def spectrum_expr() -> list[tuple[sp.Expr, sp.Expr]]:
    """``[(value, multiplicity)]``: scalar ``lambda_0`` (x1), vector ``lambda_1 (c + (1-c)/m)``
    (x m), traceless ``2 (1-c)/(m+2) lambda_2`` (x m(m+1)/2 - 1) (Lemma F3)."""
    lam = [eigenvalue_expr(k) for k in range(3)]
    return [
        (lam[0], sp.Integer(1)),
        (lam[1] * (c + (1 - c) / m), m),
        (2 * (1 - c) / (m + 2) * lam[2], m * (m + 1) / 2 - 1),
    ]


def fiber_bound_expr() -> sp.Expr:
    """``1/2 (1 - E_c KyFan_H(c))`` with ``r* = H r``, ``m = d - r*`` (Lemma F4), the Ky Fan sum
    kept as an unevaluated function of the spectrum."""
    r_star = H * r
    kyfan = sp.Function("KyFan")(H, *[v for v, _ in spectrum_expr()])
    dens = c ** (r_star / 2 - 1) * (1 - c) ** ((d - r_star) / 2 - 1)
    dens = dens / sp.beta(r_star / 2, (d - r_star) / 2)
    return sp.Rational(1, 2) * (1 - sp.Integral((kyfan * dens).subs(m, d - r_star), (c, 0, 1)))


def evaluate_eigenvalue(k: int, m_value: int, c_value: float, dps: int = 30) -> float:
    """``lambda_k(m, c)`` from :func:`eigenvalue_expr`: the integrand is lambdified to mpmath and
    integrated by tanh-sinh at ``dps`` digits (an evaluation independent of the library's)."""
    import mpmath

    expr = eigenvalue_expr(k)
    integrand = expr.function.subs({m: m_value, c: sp.Float(c_value, dps)})
    f = sp.lambdify(t, integrand, "mpmath")
    with mpmath.workdps(dps):
        return float(mpmath.quad(f, [-1, 0, 1]))
