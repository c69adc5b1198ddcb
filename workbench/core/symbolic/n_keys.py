"""Sympy encoding of the bound beyond two keys (docs/derivations/beyond_two_keys.md): the
fiber's dimension, the per-degree count ``D_l``, the pairs' factor, the closed form of
``gamma_l`` and the bound itself. Claims take the theoretical side from here."""

from __future__ import annotations

import sympy as sp

from workbench.core.symbolic.symbols import H, N, d, r

__all__ = ["bound_rhs", "count_expr", "fiber_dim_expr", "gamma_closed_form", "kappa", "l_",
           "pair_factor_expr", "parseval_total"]

l_ = sp.Symbol("l", integer=True, positive=True)
kappa = sp.Symbol("kappa", real=True)


def fiber_dim_expr() -> sp.Expr:
    """``n = d - N + 1`` (step 4)."""
    return d - N + 1


def pair_factor_expr() -> sp.Expr:
    """``(2/N) C(N, 2) / 2 = (N - 1)/2`` (steps 1-3)."""
    return sp.Rational(2) / N * sp.binomial(N, 2) / 2


def _inv(k: sp.Expr) -> sp.Expr:
    """``I(k) = C(k + r - 1, r - 1)``, 0 for ``k < 0``."""
    return sp.Piecewise((sp.binomial(k + r - 1, r - 1), k >= 0), (0, True))


def count_expr(value_class: str = "eq2") -> sp.Expr:
    """``D_l``: one quadratic form and ``min(N-1, n)`` linear forms per head (Eq. 2), or every
    quadratic (``n(n+1)/2``) and linear (``n``) form of w on E (query-dependent value maps)."""
    n = fiber_dim_expr()
    quad, lin = (1, sp.Min(N - 1, n)) if value_class == "eq2" else (n * (n + 1) / 2, n)
    return (quad * (_inv(l_ - 2) + _inv(l_) + _inv(l_ + 2))
            + lin * (_inv(l_ - 1) + _inv(l_ + 1)))


def gamma_closed_form(n: int, l: int) -> sp.Expr:
    """``gamma_l(kappa)`` for ``0 <= kappa < 1`` on ``S^{n-1}`` (step 10), ``lambda = (n-2)/2``:
    ``2 sqrt(N(n,l)) / (B(1/2, lambda+1/2) C_l^lambda(1)) (1-kappa^2)^{lambda+1/2} 2 lambda
    C_{l-1}^{lambda+1}(kappa) / (l (l + 2 lambda))``."""
    lam = sp.Rational(n - 2, 2)
    big_n = (2 * l + n - 2) * sp.binomial(l + n - 3, l - 1) / sp.Integer(l)
    c1 = sp.gegenbauer(l, lam, 1)
    beta = sp.gamma(sp.Rational(1, 2)) * sp.gamma(lam + sp.Rational(1, 2)) / sp.gamma(lam + 1)
    integral = ((1 - kappa**2) ** (lam + sp.Rational(1, 2)) * 2 * lam
                * sp.gegenbauer(l - 1, lam + 1, kappa) / (l * (l + 2 * lam)))
    return 2 * sp.sqrt(big_n) / (beta * c1) * integral


def parseval_total() -> sp.Expr:
    """``sum_l Gamma_l = E t^2 = P(i* in {1, 2}) = 2/N`` (step 9)."""
    return sp.Rational(2) / N


def bound_rhs(value_class: str = "eq2") -> sp.Expr:
    """``(N-1)/2 sum_{l odd} Gamma_l (1 - min(1, H D_l / N(n, l)))`` (step 9)."""
    n = fiber_dim_expr()
    big_n = (2 * l_ + n - 2) / l_ * sp.binomial(l_ + n - 3, l_ - 1)
    lost = 1 - sp.Min(1, H * count_expr(value_class) / big_n)
    gam = sp.Function("Gamma")(d, N, l_)
    return pair_factor_expr() * sp.Sum(gam * lost, (l_, 1, sp.oo))
