"""The harmonic count's starting truncation (docs/derivations/lower_bound.md, Lemma 6, "Start
of L"): the least odd L whose tail energy is small, raised to reach the first contributing degree
of r = d-2, a function of d and the class only; with the float guards it relies on.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from workbench.core.bounds.harmonic_count.exact_energy import eta1_sq_exact, eta2_ratio
from workbench.core.harmonics import sign_coefficients

__all__ = ["AUTO_DEGREE_CAP", "MAX_DEGREE_CAP", "class_factor", "choose_degree"]

MAX_DEGREE_CAP = 20001
# Highest degree the automatic truncation may reach to find the first contributing degree of
# r = d-2 (query-dependent values need ~0.75 d^3; above this cap r near d can still give 0).
AUTO_DEGREE_CAP = 60001


def class_factor(d: int, value_class: str) -> int:
    """Multiplier of D'_l: 1 for Eq. 2, d(d+1)/2 (all quadratic forms) for M_h(y)."""
    return 1 if value_class == "eq2" else d * (d + 1) // 2


@lru_cache(maxsize=32)
def choose_degree(d: int, tol: float, value_class: str = "eq2") -> int:
    """Truncation degree, a function of d and the class only (so the bound stays monotone in r
    and H): the least odd L with (1 - sum_{l<=L} eta_l^2)/2 <= tol, raised to the first degree
    at which the r = d-2, H = 1 term is non-zero when that degree is <= AUTO_DEGREE_CAP."""
    L = 401
    while True:
        e = sign_coefficients(d, L)
        _check_energies(d, e)
        partial = np.cumsum(e[1::2] ** 2)
        ok = np.nonzero((1 - partial) / 2 <= tol)[0]
        if len(ok):
            L = 2 * int(ok[0]) + 1
            break
        if L >= MAX_DEGREE_CAP:
            L = MAX_DEGREE_CAP
            break
        L = min(4 * L + 1, MAX_DEGREE_CAP)
    first = _first_contributing_degree(d, d - 2, value_class) if d >= 3 else None
    if first is not None and first <= AUTO_DEGREE_CAP:
        # a few degrees past the first one, so that r = d-2 collects a visible amount
        L = max(L, first + 2 * (first // 20))
    return L


def _check_energies(d: int, e: np.ndarray) -> None:
    """Before a search relies on ``sum eta_l^2 -> 1``: the float ``eta_1^2`` and
    ``eta_3^2 / eta_1^2`` must equal their exact values (``exact_energy``; relative 1e-9), so a
    slip in the sign coefficients (a degree, a normalisation) fails here at once instead of
    sending the truncation search to its cap."""
    e1, has_pi = eta1_sq_exact(d)
    want1 = float(e1) / (math.pi**2 if has_pi else 1.0)
    num, den = eta2_ratio(d, 1)
    got1 = float(e[1]) ** 2
    got3 = float(e[3]) ** 2 / got1 if got1 > 0 else math.inf
    if not (abs(got1 - want1) <= 1e-9 * want1 and abs(got3 - num / den) <= 1e-9 * num / den):
        raise ArithmeticError(
            f"sign energies at d={d} disagree with their exact values: eta_1^2 = {got1!r} "
            f"(exact {want1!r}), eta_3^2/eta_1^2 = {got3!r} (exact {num / den!r})")


def _lgamma_table(n: int) -> np.ndarray:
    """``math.lgamma(i)`` for ``i = 1..n`` at index i (index 0 unused)."""
    return np.array([math.nan] + [math.lgamma(i) for i in range(1, n + 1)])


def _first_contributing_degree(d: int, r: int, value_class: str = "eq2") -> int | None:
    """First odd l <= AUTO_DEGREE_CAP with D_l < N(d,l) (float log-binomials; a guide only).
    Searched in blocks of degrees four times longer each, so a small answer is found at once."""
    start = 1
    while start <= AUTO_DEGREE_CAP:
        stop = min(4 * start + 255, AUTO_DEGREE_CAP)
        l = np.arange(start, stop + 1, 2, dtype=np.float64)
        found = _contributing(d, r, value_class, l)
        if len(found):
            return int(found[0])
        start = stop + 2
    return None


def _contributing(d: int, r: int, value_class: str, l: np.ndarray) -> np.ndarray:
    """The degrees of ``l`` with ``D_l < N(d,l)``, by log-binomials (margin 1e-9)."""
    lgamma = _lgamma_table(int(l[-1]) + d + 2)  # the arguments are integers

    def log_comb(n: np.ndarray, k: float) -> np.ndarray:
        nn = np.maximum(n, k)  # n < k gives C(n, k) = 0 below; lgamma(0) would raise
        out = lgamma[(nn + 1).astype(np.int64)] - math.lgamma(k + 1)
        out = out - lgamma[(nn - k + 1).astype(np.int64)]
        return np.where(n >= k, out, -np.inf)

    terms = np.stack(
        [log_comb(l + r - 3, r - 1), log_comb(l + r - 1, r - 1), log_comb(l + r + 1, r - 1)]
    )
    log_d = math.log(class_factor(d, value_class)) + np.logaddexp.reduce(terms, axis=0)
    log_n = np.logaddexp(log_comb(l + d - 2, d - 2), log_comb(l + d - 3, d - 2))
    return l[log_d < log_n - 1e-9]
