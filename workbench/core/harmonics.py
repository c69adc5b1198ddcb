"""Gegenbauer (zonal harmonic) machinery on S^{d-1} (docs/paper.md §5; docs/derivations).

Conventions. ``t = <y, w>`` for ``w`` uniform on S^{d-1} has density proportional to
``(1-t^2)^((d-3)/2)``. ``P_l^{(d)}`` is the Legendre-normalised Gegenbauer polynomial
(``P_l(1) = 1``), the *normalised* one is ``sqrt(N(d,l)) P_l`` (unit second moment under that
density), and ``eta_l(d)`` is the coefficient of ``sign(t)`` on it. Closed form (see the note):

    eta_l = (-1)^m sqrt(N(d,l)) a_m,   l = 2m+1,
    a_m = E[sign(t) P_l(t)] = a_0 prod_{j<m} (2j+1)/(2j+d+1),   a_0 = E|t| = 2 rho_d / (d-1),

with ``rho_d = Gamma(d/2) / (sqrt(pi) Gamma((d-1)/2))`` the density of ``t`` at 0; even l give 0.

Computes with numpy and exact integers: neither torch nor sympy is imported here (a torch tensor
argument is accepted when torch is already loaded; the sympy closed form
:func:`sign_coefficient_exact` imports sympy, the ``*_mp`` functions and
:func:`gegenbauer_transform` import mpmath, when called), so the CLI answers at once.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from workbench.core.validation import check_dim, check_int

if TYPE_CHECKING:
    import mpmath
    import sympy as sp

__all__ = [
    "dim_harmonics",
    "gamma_half_ratio",
    "density_at_zero",
    "legendre_d",
    "normalized_gegenbauer",
    "gegenbauer_mp",
    "sign_coefficient_exact",
    "sign_coefficient_mp",
    "sign_coefficients",
    "sign_coefficient_lgamma",
    "gegenbauer_transform",
]


def dim_harmonics(d: int, l: int) -> int:
    """``N(d,l)``: dimension of the degree-l spherical harmonics on S^{d-1} (exact integer)."""
    d = check_dim(d)
    l = check_int("l", l, lo=0)
    if l == 0:
        return 1
    # (2l+d-2)/l * C(l+d-3, l-1); the division is exact.
    num = (2 * l + d - 2) * math.comb(l + d - 3, l - 1)
    q, rem = divmod(num, l)
    assert rem == 0
    return q


def _bernoulli_numbers(n_max: int) -> list[Fraction]:
    """Exact Bernoulli numbers ``B_0..B_n_max`` from ``sum_{k<=n} C(n+1, k) B_k = 0``."""
    B: list[Fraction] = [Fraction(1)]
    for n in range(1, n_max + 1):
        B.append(-sum((math.comb(n + 1, k) * B[k] for k in range(n)), Fraction(0)) / (n + 1))
    return B


# Asymptotic series log(Gamma(x+1/2)/Gamma(x)) = log(x)/2 + sum_k c_k x^{1-2k}, with
# c_k = -(2 - 2^{1-n}) B_n / (n (n-1)) for n = 2k (Bernoulli polynomials at 1/2 and 0).
_BERNOULLI = _bernoulli_numbers(20)
_RATIO_SERIES = [
    float(-(2 - Fraction(2) ** (1 - n)) * _BERNOULLI[n] / (n * (n - 1)))
    for n in range(2, 22, 2)
]


def gamma_half_ratio(x: float) -> float:
    """``Gamma(x + 1/2) / Gamma(x)`` for ``x > 0`` to ~1 ulp-level relative accuracy.

    Direct gamma for ``x <= 60``; the Bernoulli asymptotic series of the log-ratio above, which
    avoids the cancellation of two large log-gamma values.
    """
    if x <= 0:
        raise ValueError(f"x must be > 0 (got {x})")
    if x <= 60:
        return math.gamma(x + 0.5) / math.gamma(x)
    s = 0.5 * math.log(x)
    inv = 1.0 / x
    p = inv
    for c in _RATIO_SERIES:
        s += c * p
        p *= inv * inv
    return math.exp(s)


def density_at_zero(d: int) -> float:
    """``rho_d``: the density of ``<y, w>`` at 0 for ``w`` uniform on S^{d-1} (float64)."""
    d = check_dim(d)
    return gamma_half_ratio((d - 1) / 2) / math.sqrt(math.pi)


def is_tensor(t: object) -> bool:
    """Whether ``t`` is a torch tensor, without importing torch (a tensor exists only once torch
    has been imported by whoever made it)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(t, torch.Tensor)


def _as_array(t: object) -> tuple[np.ndarray, bool]:
    if is_tensor(t):
        import torch

        assert isinstance(t, torch.Tensor)
        return t.detach().to("cpu", torch.float64).numpy(), True
    return np.asarray(t, dtype=np.float64), False


def _degree_table(
    d: int, max_degree: int, t: object
) -> tuple[int, int, np.ndarray, np.ndarray]:
    """Checked ``d`` and ``L = max_degree``, ``x = t`` in float64, and the table of degrees
    ``0..L`` over ``x`` that a three-term recurrence fills, rows 0 (ones) and 1 (``x``) set."""
    d = check_dim(d)
    L = check_int("max_degree", max_degree, lo=0)
    x, _ = _as_array(t)
    out = np.empty((L + 1, *x.shape), dtype=np.float64)
    out[0] = 1.0
    if L >= 1:
        out[1] = x
    return d, L, x, out


def legendre_d(d: int, max_degree: int, t: object) -> np.ndarray:
    """``P_l^{(d)}(t)`` for ``l = 0..max_degree`` (shape ``(max_degree+1, *t.shape)``), P_l(1)=1.

    Three-term recurrence ``(l+d-2) P_{l+1} = (2l+d-2) t P_l - l P_{l-1}`` (stable on [-1,1];
    d = 2 gives Chebyshev, d = 3 Legendre polynomials).
    """
    d, L, x, out = _degree_table(d, max_degree, t)
    for l in range(1, L):
        out[l + 1] = ((2 * l + d - 2) * x * out[l] - l * out[l - 1]) / (l + d - 2)
    return out


def normalized_gegenbauer(d: int, max_degree: int, t: object) -> np.ndarray:
    """``sqrt(N(d,l)) P_l^{(d)}(t)``: unit second moment under ``(1-t^2)^((d-3)/2)``.

    Float64, by the three-term recurrence of the normalised polynomials themselves (the ratios
    ``sqrt(N(d,l+1)/N(d,l))`` are O(1)), so ``sqrt(N(d,l))`` is never formed: the values stay
    finite wherever the true value is (e.g. d = 4096, l = 401 near t = 0, where ``sqrt(N)`` alone
    overflows) and only a true value beyond the float64 range gives ``inf``.
    """
    d, L, x, out = _degree_table(d, max_degree, t)
    out[1:2] *= math.sqrt(d)  # N(d,1) = d (nothing to scale when L = 0)
    with np.errstate(over="ignore", invalid="ignore"):
        for l in range(1, L):
            # P_{l+1} = (a t P_l - b P_{l-1}), a = (2l+d-2)/(l+d-2), b = l/(l+d-2);
            # sqrt(N_{l+1}/N_l)^2 = (2l+d)(l+d-2) / ((l+1)(2l+d-2))
            s_up = math.sqrt((2 * l + d) * (l + d - 2) / ((l + 1) * (2 * l + d - 2)))
            s_down = math.sqrt(
                (2 * l + d - 2) * (l + d - 3) / (l * (2 * l + d - 4))
            ) if l >= 2 else math.sqrt(d)
            a = (2 * l + d - 2) / (l + d - 2)
            b = l / (l + d - 2)
            out[l + 1] = s_up * (a * x * out[l] - b * s_down * out[l - 1])
    return out


def _sqrt_int_float(n: int) -> float:
    try:
        return math.sqrt(n)
    except OverflowError:
        return math.inf


def gegenbauer_mp(d: int, l: int, t: object, dps: int = 30) -> mpmath.mpf:
    """Normalised Gegenbauer ``sqrt(N(d,l)) P_l^{(d)}(t)`` in mpmath at ``dps`` digits."""
    import mpmath

    d = check_dim(d)
    l = check_int("l", l, lo=0)
    with mpmath.workdps(dps + 10):
        return +(mpmath.sqrt(dim_harmonics(d, l)) * _legendre_mp(d, l, mpmath.mpf(t)))


def _legendre_mp(d: int, l: int, x: mpmath.mpf) -> mpmath.mpf:
    """``P_l^{(d)}(x)`` by the three-term recurrence, at the working precision."""
    import mpmath

    p_prev, p = mpmath.mpf(1), x
    if l == 0:
        p = p_prev
    for k in range(1, l):
        p_prev, p = p, ((2 * k + d - 2) * x * p - k * p_prev) / (k + d - 2)
    return p


def sign_coefficient_exact(d: int, l: int) -> sp.Expr:
    """Exact ``eta_l(d)`` in sympy: ``(-1)^m sqrt(N) 2 Gamma(d-1) (2m)! Gamma(m+d/2)
    / (sqrt(pi) Gamma((d-1)/2) Gamma(2m+d) m!)`` for ``l = 2m+1``; 0 for even l.
    Imports sympy on the first call (the float paths never need it)."""
    import sympy as sp

    d = check_dim(d)
    l = check_int("l", l, lo=0)
    if l % 2 == 0:
        return sp.Integer(0)
    m = (l - 1) // 2
    D = sp.Integer(d)
    expr = (
        (-1) ** m
        * sp.sqrt(dim_harmonics(d, l))
        * 2
        * sp.gamma(D - 1)
        * sp.factorial(2 * m)
        * sp.gamma(m + D / 2)
        / (sp.sqrt(sp.pi) * sp.gamma((D - 1) / 2) * sp.gamma(2 * m + D) * sp.factorial(m))
    )
    return sp.nsimplify(sp.simplify(expr)) if d < 40 else expr


def sign_coefficient_mp(d: int, l: int, dps: int = 50) -> mpmath.mpf:
    """``eta_l(d)`` at ``dps`` digits from the closed form (mpmath log-gamma, any precision)."""
    import mpmath

    d = check_dim(d)
    l = check_int("l", l, lo=0)
    if l % 2 == 0:
        return mpmath.mpf(0)
    m = (l - 1) // 2
    with mpmath.workdps(dps + 15):
        lg = mpmath.loggamma
        log_abs = (
            mpmath.log(2)
            + lg(d - 1)
            + lg(2 * m + 1)
            + lg(m + mpmath.mpf(d) / 2)
            - mpmath.log(mpmath.pi) / 2
            - lg(mpmath.mpf(d - 1) / 2)
            - lg(2 * m + d)
            - lg(m + 1)
        )
        val = mpmath.sqrt(dim_harmonics(d, l)) * mpmath.exp(log_abs)
        return +(val if m % 2 == 0 else -val)


@lru_cache(maxsize=256)
def _sign_coefficients_cached(d: int, max_degree: int) -> np.ndarray:
    eta = np.zeros(max_degree + 1)
    if max_degree < 1:
        return eta
    # eta_l^2 by the ratio recurrence (every factor O(1): no overflow, ~1e-16 per step).
    a0 = 2.0 * density_at_zero(d) / (d - 1)
    ls = np.arange(1, max_degree + 1, 2, dtype=np.float64)
    e2 = np.empty_like(ls)
    e2[0] = d * a0 * a0  # N(d,1) = d
    if len(ls) > 1:
        l = ls[:-1]
        m = (l - 1) / 2
        ratio_n = (2 * l + d + 2) / (2 * l + d - 2) * (l + d - 1) * (l + d - 2)
        ratio_n = ratio_n / ((l + 2) * (l + 1))
        ratio_a = ((2 * m + 1) / (2 * m + d + 1)) ** 2
        e2[1:] = e2[0] * np.cumprod(ratio_n * ratio_a)
    signs = np.where(((ls - 1) / 2) % 2 == 0, 1.0, -1.0)
    eta[1::2] = signs * np.sqrt(e2)
    eta.setflags(write=False)
    return eta


def sign_coefficients(d: int, max_degree: int) -> np.ndarray:
    """``eta_l(d)`` for ``l = 0..max_degree`` in float64 (closed form via its ratio recurrence)."""
    d = check_dim(d)
    L = check_int("max_degree", max_degree, lo=0)
    return _sign_coefficients_cached(d, L).copy()


def sign_coefficient_lgamma(d: int, l: object) -> np.ndarray:
    """``eta_l(d)`` in float64 straight from the closed form with log-gamma (vectorised in l).

    Relative accuracy is limited to ~1e-16 times the size of the log-gamma terms (~1e-12 at
    d = 4096); :func:`sign_coefficients` is the accurate float64 path.
    """
    d = check_dim(d)
    ls = np.atleast_1d(np.asarray(l, dtype=np.int64))
    if (ls < 0).any():
        raise ValueError(f"l must be an integer >= 0 (got {l!r})")
    from scipy.special import gammaln

    m = np.maximum((ls - 1) // 2, 0)
    lf = np.maximum(ls, 1).astype(np.float64)
    log_n = (
        np.log(2 * lf + d - 2) - np.log(lf) + gammaln(lf + d - 2)
        - gammaln(lf) - gammaln(d - 1.0)
    )
    log_a = (
        math.log(2) + gammaln(d - 1.0) + gammaln(2 * m + 1.0) + gammaln(m + d / 2)
        - 0.5 * math.log(math.pi) - gammaln((d - 1) / 2) - gammaln(2 * m + d) - gammaln(m + 1.0)
    )
    val = np.exp(0.5 * log_n + log_a) * np.where(m % 2 == 0, 1.0, -1.0)
    return np.where(ls % 2 == 1, val, 0.0)


def gegenbauer_transform(
    func: Callable[[mpmath.mpf], object], d: int, l: int, dps: int = 30
) -> mpmath.mpf:
    """Coefficient of ``func(t)`` on the normalised Gegenbauer polynomial of degree l, by
    adaptive (tanh-sinh) quadrature at ``dps`` digits. The independent check of the closed forms;
    ``func`` gets mpmath numbers and may be discontinuous at 0.

    Integrates over the angle, ``t = cos(phi)``, so the weight becomes ``sin(phi)^(d-2)``: no
    cancellation in ``1 - t^2`` near the ends (which cost ~8 digits at d = 2).
    """
    import mpmath

    d = check_dim(d)
    l = check_int("l", l, lo=0)
    with mpmath.workdps(dps + 10):
        norm = mpmath.beta(mpmath.mpf(1) / 2, mpmath.mpf(d - 1) / 2)
        scale = mpmath.sqrt(dim_harmonics(d, l))

        def integrand(phi: mpmath.mpf) -> mpmath.mpf:
            t = mpmath.cos(phi)
            return func(t) * _legendre_mp(d, l, t) * mpmath.sin(phi) ** (d - 2)

        val = mpmath.quad(integrand, [0, mpmath.pi / 2, mpmath.pi])
        return +(scale * val / norm)
