"""The bound beyond two keys: a certified lower bound for ``3 <= N <= d - 2`` on D_N
(orthonormal keys, uniform queries) against generalized attention (docs/derivations/
beyond_two_keys.md; docs/paper.md). With ``n = d - N + 1`` (the fiber's dimension),

    err >= B_N = (N - 1)/2 sum_{l odd} Gamma_l (1 - m_l),   m_l = min(1, H D_l / N(n, l)),

``D_l = A [I(l-2) + I(l) + I(l+2)] + B [I(l-1) + I(l+1)]``, ``I(k) = C(k+r-1, r-1)``, with
``(A, B) = (1, min(N-1, n))`` for Eq. 2 (``value_class="eq2"``) and ``(n(n+1)/2, n)`` for value
maps that may depend on the query (``"query-dependent-values"``). ``Gamma_l`` are rigorous
enclosures (:mod:`.n_keys_energy`). The degrees above L are *counted*: their energy is exactly
``2/N - sum_{l<=L} Gamma_l`` (Parseval) and each loses at least ``1 - tau_L``, where
``tau_L = min(1, H (3A + 2B) I(L+3) / C(L+n-1, n-2)) >= m_l`` for every ``l > L``
(``r <= n - 2``; ``tau_L = 1`` otherwise). So ``[lo, hi]`` encloses the full series:

    lo = (N-1)/2 [sum_{l<=L} Gamma_l (1 - m_l) + (1 - tau_L) (2/N - sum_{l<=L} Gamma_l)],
    hi = (N-1)/2 [sum_{l<=L} Gamma_l (1 - m_l) +             (2/N - sum_{l<=L} Gamma_l)].
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from workbench.core import rigorous as rig
from workbench.core.bounds import EQ2, VALUE_CLASSES
from workbench.core.bounds.numerics.truncation import (
    digits_settled,
    digits_tolerance,
    settle_degrees,
    truncation_of,
)
from workbench.core.bounds.sequence_length.n_keys_energy import energy_enclosures, fiber_dim
from workbench.core.bounds.value import N_KEYS, BoundValue
from workbench.core.harmonics import dim_harmonics
from workbench.core.validation import check_choice, check_float, check_int, check_layer

__all__ = ["NAME", "DEFAULT_DEGREE", "SETTLE_CAP", "NKeysHeads", "covered", "degree_count",
           "fiber_dim", "form_counts", "n_keys_bound", "n_keys_heads_needed", "pair_factor",
           "predicted_degree", "tail_factor"]

NAME = "n-keys"
DEFAULT_DEGREE = 21  # the truncation rule's first degree (--max-degree sets one by hand)
SETTLE_CAP = 121  # the truncation rule raises L up to here by default (--max-degree: to 201)
MAX_DEGREE = 201


def covered(d: int, N: int) -> str | None:
    """Why ``(d, N)`` is outside the bound (``3 <= N <= d - 2``), or ``None``."""
    if N < 3:
        return f"N must lie in [3, d - 2] for {NAME} (got {N}; N = 2 has its own bounds)"
    if N > d - 2:
        return (f"N must lie in [3, d - 2] = [3, {d - 2}] for {NAME} (got {N}): the method "
                f"conditions on all but d - N + 1 directions and gives 0 for N >= d - 1")
    return None


def _check(d: int, r: int, H: int, N: int, value_class: str) -> tuple[int, int, int, int, str]:
    d, r, H = check_layer(d, r, H)
    N = check_int("N", N, lo=1)
    why = covered(d, N)
    if why is not None:
        raise ValueError(why)
    return d, r, H, N, check_choice("value_class", value_class, VALUE_CLASSES)


def _inv(r: int, k: int) -> int:
    return math.comb(k + r - 1, r - 1) if k >= 0 else 0


def form_counts(n: int, N: int, value_class: str) -> tuple[int, int]:
    """``(A, B)``: the quadratic and the linear forms of w on E one head contributes (step 6):
    ``(1, min(N - 1, n))`` for Eq. 2, ``(n(n+1)/2, n)`` for query-dependent value maps."""
    if value_class == EQ2:
        return 1, min(N - 1, n)
    return n * (n + 1) // 2, n


def degree_count(d: int, r: int, N: int, l: int, value_class: str = EQ2) -> int:
    """``D_l``: the bound on ``dim Pi_l V_h`` on ``S^{n-1}`` for one head (step 8)."""
    d, r, _, N, value_class = _check(d, r, 1, N, value_class)
    l = check_int("l", l, lo=0)
    a, b = form_counts(fiber_dim(d, N), N, value_class)
    return (a * (_inv(r, l - 2) + _inv(r, l) + _inv(r, l + 2))
            + b * (_inv(r, l - 1) + _inv(r, l + 1)))


def tail_factor(d: int, r: int, H: int, N: int, L: int, value_class: str = EQ2) -> Fraction:
    """``tau_L``: a number ``>= m_l`` for every degree ``l > L`` (exact rational)."""
    n = fiber_dim(d, N)
    if r > n - 2:
        return Fraction(1)
    a, b = form_counts(n, N, value_class)
    t = Fraction(H * (3 * a + 2 * b) * _inv(r, L + 3), math.comb(L + n - 1, n - 2))
    return min(Fraction(1), t)


def pair_factor(N: int) -> Fraction:
    """``(N - 1)/2``: the pairs' weight (step 2: ``(2/N) C(N, 2) = N - 1``) times the 1/2 of
    ``E<w, f - A>^2 = E(t - G)^2/2`` (step 3)."""
    return Fraction(N - 1, 2)


def _loss(d: int, r: int, H: int, N: int, l: int, value_class: str) -> Fraction:
    """``1 - m_l``, exact."""
    n = fiber_dim(d, N)
    big = dim_harmonics(n, l)
    return Fraction(max(0, big - H * degree_count(d, r, N, l, value_class)), big)


def _frac(x: Fraction) -> Any:
    return rig.arb(x.numerator) / rig.arb(x.denominator)


def _enclose(d: int, r: int, H: int, N: int, L: int, value_class: str
             ) -> tuple[float, float, float]:
    """``(lo, hi, truncation)`` of the full series (module docstring)."""
    energies = energy_enclosures(d, N, L)
    with rig.precision(128):
        kept = rig.arb(0)
        summed_lo, summed_hi = rig.arb(0), rig.arb(0)
        for i, (g_lo, g_hi) in enumerate(energies):
            loss = _frac(_loss(d, r, H, N, 2 * i + 1, value_class))
            kept += rig.ball((g_lo + g_hi) / 2, (g_hi - g_lo) / 2) * loss
            summed_lo += rig.arb(g_lo)
            summed_hi += rig.arb(g_hi)
        two_n = rig.arb(2) / N
        tail_lo = two_n - summed_hi  # the energy above L lies in [tail_lo, tail_hi]
        tail_hi = two_n - summed_lo
        tail_lo = tail_lo if tail_lo > 0 else rig.arb(0)  # an energy is >= 0
        tail_hi = tail_hi if tail_hi > 0 else rig.arb(0)
        half = _frac(pair_factor(N))
        tau = _frac(tail_factor(d, r, H, N, L, value_class))
        lo = half * (kept + (1 - tau) * tail_lo)
        hi = half * (kept + tail_hi)
        trunc = half * tau * tail_hi
        return max(0.0, rig.lower_float(lo)), rig.upper_float(hi), rig.upper_float(trunc)


def _degree(max_degree: int | None) -> int:
    L = DEFAULT_DEGREE if max_degree is None else check_int("max_degree", max_degree, lo=1,
                                                               hi=MAX_DEGREE)
    return L if L % 2 else L - 1


def predicted_degree(d: int, r: int, H: int, N: int, L: int, trunc: float, budget: float,
                     value_class: str = EQ2) -> int:
    """The least odd ``L' > L`` whose counted tail ``(N-1)/2 tau_L' E_L`` is at most
    ``budget``, from the tail ``trunc = (N-1)/2 tau_L E_L`` at L (the energy above L' is at
    most ``E_L``; ``tau`` exact); ``SETTLE_CAP`` where none up to it does."""
    tau = tail_factor(d, r, H, N, L, value_class)
    if tau == 0 or trunc <= 0:
        return L + 2
    scale = Fraction(trunc) / tau
    for nxt in range(L + 2, SETTLE_CAP + 1, 2):
        if scale * tail_factor(d, r, H, N, nxt, value_class) <= Fraction(budget):
            return nxt
    return SETTLE_CAP


def _settled_enclosure(d: int, r: int, H: int, N: int, value_class: str,
                       max_degree: int | None) -> tuple[int, tuple[float, float, float], bool]:
    """``(L, (lo, hi, tail), settled)`` at ``max_degree``, or by the truncation rule
    (:func:`~workbench.core.bounds.numerics.truncation.settle_degrees`, from
    ``DEFAULT_DEGREE`` to ``SETTLE_CAP``, each step the degree :func:`predicted_degree` names
    for a quarter of the printed digits' tolerance) until ``digits_settled(lo, hi)``."""
    def evaluate(L: int) -> tuple[float, float, float]:
        lo, hi, trunc = _enclose(d, r, H, N, L, value_class)
        return lo, hi, max(trunc, hi - lo)

    def settled(res: tuple[float, float, float]) -> bool:
        return digits_settled(res[0], res[1])

    if max_degree is not None:
        L = _degree(max_degree)
        res = evaluate(L)
        return L, res, settled(res)

    def nxt(L: int, res: tuple[float, float, float]) -> int:
        return predicted_degree(d, r, H, N, L, res[2], 0.25 * digits_tolerance(res[0]),
                                value_class)

    return settle_degrees(evaluate, settled, DEFAULT_DEGREE, SETTLE_CAP, next_degree=nxt)


def n_keys_bound(d: int, r: int, H: int, N: int, value_class: str = EQ2, *,
                 max_degree: int | None = None) -> BoundValue:
    """The bound beyond two keys at ``(d, r, H, N)`` (``3 <= N <= d - 2``, D_N), one rigorous
    part of kind ``N_KEYS`` (named ``n-keys``, for both classes); degrees up to
    ``max_degree`` are summed and the rest counted (module docstring). By default the degree
    follows the truncation rule: raised until the printed digits are settled."""
    d, r, H, N, value_class = _check(d, r, H, N, value_class)
    if r >= fiber_dim(d, N) - 1:  # D_l >= N(n, l) at every degree: exactly 0
        return BoundValue(parts=(N_KEYS.at((0.0, 0.0), "arithmetic: r >= d - N gives 0",
                                           truncation_of(_degree(max_degree), 0.0, True)),))
    L, (lo, hi, tail), ok = _settled_enclosure(d, r, H, N, value_class, max_degree)
    return _value(L, lo, hi, tail, ok)


def _value(L: int, lo: float, hi: float, tail: float, settled: bool) -> BoundValue:
    method = (f"arb balls: Gamma_l by Gauss-Legendre with a proved error (odd l <= {L}), the "
              f"degrees above counted by Parseval (sum Gamma_l = 2/N)")
    return BoundValue(parts=(N_KEYS.at((lo, hi), method, truncation_of(L, tail, settled)),))


@dataclass(frozen=True)
class NKeysHeads:
    """The least H whose bound does not exceed ``eps``: every smaller H is certified to have
    error > eps (``bound_below`` at ``heads - 1`` is the lower end that excludes it)."""

    heads: int
    bound_at_heads: BoundValue
    bound_below: BoundValue | None


def n_keys_heads_needed(d: int, r: int, N: int, eps: float, value_class: str = EQ2, *,
                        max_degree: int | None = None, h_cap: int = 10 ** 30) -> NKeysHeads:
    """Least ``H >= 1`` with ``lower end of B_N(H) <= eps`` (bisection: the lower end is
    non-increasing in H at a fixed truncation). By default the degree follows the truncation
    rule until the question is settled: the upper end at the answer is ``<= eps`` too, so the
    full series gives the same H (``bound_at_heads``' truncation says whether it is)."""
    d, r, _, N, value_class = _check(d, r, 1, N, value_class)
    eps = check_float("eps", eps, lo=0.0, hi=1.0, lo_open=True)
    if r >= fiber_dim(d, N) - 1:  # the bound is 0 at every H
        return NKeysHeads(1, n_keys_bound(d, r, 1, N, value_class, max_degree=max_degree), None)
    Enc = tuple[float, float, float]

    def search(L: int) -> tuple[int, Enc, Enc | None]:
        def at(H: int) -> Enc:
            lo, hi, trunc = _enclose(d, r, H, N, L, value_class)
            return lo, hi, max(trunc, hi - lo)

        if at(1)[0] <= eps:
            return 1, at(1), None
        lo_h, hi_h = 1, 2
        while at(hi_h)[0] > eps:
            lo_h, hi_h = hi_h, hi_h * 2
            if hi_h > h_cap:
                raise ValueError(f"eps = {eps} needs more than {h_cap} heads at this truncation")
        while hi_h - lo_h > 1:
            mid = (lo_h + hi_h) // 2
            lo_h, hi_h = (mid, hi_h) if at(mid)[0] > eps else (lo_h, mid)
        return hi_h, at(hi_h), at(lo_h)

    def answered(res: tuple[int, Enc, Enc | None]) -> bool:
        return res[1][1] <= eps  # the full series at H is <= eps too

    def nxt(L: int, res: tuple[int, Enc, Enc | None]) -> int:
        H, (lo, _, tail), _ = res
        return predicted_degree(d, r, H, N, L, tail, max(eps - lo, 0.0) / 2, value_class)

    if max_degree is None:
        L, (H, enc, below), ok = settle_degrees(search, answered, DEFAULT_DEGREE, SETTLE_CAP,
                                                next_degree=nxt)
    else:
        L = _degree(max_degree)
        H, enc, below = search(L)
        ok = answered((H, enc, below))
    return NKeysHeads(H, _value(L, *enc, ok),
                      None if below is None else _value(L, *below, True))
