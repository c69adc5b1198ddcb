"""The lower bound beyond two keys, ``B_N`` for 3 <= N <= d - 2 on D_N against Eq. 2 models
(docs/paper.md, "Beyond two keys").

PROVISIONAL: a plain float evaluation (scipy quadrature over the law of kappa), not a proved
enclosure; its one part says ``rigorous=False``. It stands in for the rigorous evaluation of the
same formula until that one replaces this module.

    B_N = (N - 1)/2 * sum_{l odd} Gamma_l (1 - min(1, H D_l / N(n, l))),  n = d - N + 1,
    D_l = [I(l-2) + I(l) + I(l+2)] + min(N - 1, n) [I(l-1) + I(l+1)],  I(k) = C(k + r - 1, r - 1),
    Gamma_l = E gamma_l(kappa)^2,  kappa = (sqrt2 max_{j<=N-2} g_j - g_u) / chi_n.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from workbench.core.bounds.value import BoundValue, Part, Truncation
from workbench.core.harmonics import dim_harmonics
from workbench.core.validation import check_choice, check_dim, check_int, check_rank

__all__ = ["n_keys_bound", "n_keys_outside"]

VALUE_CLASSES = ("eq2",)
_TAIL = 1e-7  # sum odd degrees until (N - 1)/2 (2/N - sum Gamma_l) is below this


def n_keys_outside(d: int, N: int) -> str | None:
    """Why ``(d, N)`` is outside what ``B_N`` covers (3 <= N <= d - 2), or ``None``."""
    if not 3 <= N <= d - 2:
        return f"N must lie in 3..d - 2 = 3..{d - 2} for the bound beyond two keys (got {N})"
    return None


def _I(k: int, r: int) -> int:
    return math.comb(k + r - 1, r - 1) if k >= 0 else 0


def _D(l: int, r: int, N: int, n: int) -> int:
    return (_I(l - 2, r) + _I(l, r) + _I(l + 2, r)
            + min(N - 1, n) * (_I(l - 1, r) + _I(l + 1, r)))


@lru_cache(maxsize=64)
def _kappa_law(N: int, n: int) -> tuple[float, np.ndarray, np.ndarray]:
    """``P(kappa <= 0)`` and Gauss-Legendre nodes/weights on (0, 1) times kappa's density."""
    from scipy import special, stats

    gx, gw = np.polynomial.hermite_e.hermegauss(96)  # E over g_u ~ N(0, 1)
    gw = gw / gw.sum()
    z = np.linspace(-12.0, 12.0, 4801)  # Z = sqrt2 M - g_u
    u = (z[:, None] + gx[None, :]) / math.sqrt(2)
    m = N - 2
    fz = (gw * m * stats.norm.cdf(u) ** (m - 1) * stats.norm.pdf(u) / math.sqrt(2)).sum(1)
    p0 = float((gw * stats.norm.cdf(gx / math.sqrt(2)) ** m).sum())  # P(Z <= 0)
    sx, sw = special.roots_genlaguerre(80, n / 2 - 1)  # chi_n^2 / 2 = t ~ Gamma(n/2)
    s = np.sqrt(2 * sx)
    sw = sw / math.gamma(n / 2)
    kx, kw = special.roots_legendre(200)
    k = (kx + 1) / 2
    dens = (sw[None, :] * s[None, :] * np.interp(k[:, None] * s[None, :], z, fz)).sum(1)
    return p0, k, kw / 2 * dens


def _gammas(l_max: int, N: int, n: int) -> np.ndarray:
    """``Gamma_l`` for odd l <= l_max (index l), from the closed form of gamma_l."""
    from scipy import special

    lam = (n - 2) / 2
    p0, k, wk = _kappa_law(N, n)
    out = np.zeros(l_max + 1)
    beta = special.beta(0.5, lam + 0.5)
    for l in range(1, l_max + 1, 2):
        norm = 2 * math.sqrt(dim_harmonics(n, l)) / (beta * special.eval_gegenbauer(l, lam, 1.0))

        def gamma(kap: np.ndarray, l: int = l, norm: float = norm) -> np.ndarray:
            integral = ((1 - kap ** 2) ** (lam + 0.5) * 2 * lam
                        * special.eval_gegenbauer(l - 1, lam + 1, kap) / (l * (l + 2 * lam)))
            return norm * integral

        out[l] = p0 * gamma(np.zeros(1))[0] ** 2 + float((wk * gamma(k) ** 2).sum())
    return out


def n_keys_bound(d: int, r: int, H: int, N: int, value_class: str = "eq2") -> BoundValue:
    """``B_N`` at ``(d, r, H, N)`` (3 <= N <= d - 2, D_N, Eq. 2), one non-rigorous part."""
    d = check_dim(d)
    r = check_rank(r, d)
    H = check_int("heads", H, lo=1)
    N = check_int("N", N, lo=1)
    check_choice("value_class", value_class, VALUE_CLASSES)
    why = n_keys_outside(d, N)
    if why is not None:
        raise ValueError(why)
    n = d - N + 1
    l_max, total, G = 1, 0.0, np.zeros(0)
    while True:
        l_max = 2 * l_max + 1
        G = _gammas(l_max, N, n)
        total = (N - 1) / 2 * (2 / N - G.sum())
        if total < _TAIL or l_max > 400:
            break
    value = 0.0
    for l in range(1, l_max + 1, 2):
        value += G[l] * (1 - min(1.0, H * _D(l, r, N, n) / dim_harmonics(n, l)))
    value *= (N - 1) / 2
    tail = max(total, 0.0)
    return BoundValue((Part("n keys", (value, value), False,
                            "float quadrature of Gamma_l over the law of kappa (provisional)",
                            Truncation(l_max, tail, tail < 5e-5)),))
