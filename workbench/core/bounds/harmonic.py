"""The harmonic count: a certified lower bound for N = 2 on D_2 against generalized attention
(Theorem 2's ``D'_l`` count; docs/paper.md §4; docs/derivations/lower_bound.md, Lemmas 1-6).
The bound models are confronted with is the larger of this and the fiber bound
(:mod:`workbench.core.bounds.certified`).

For H heads of key-rank r in dimension d, every generalized-attention model has error

    err >= LB_L = 1/2 * sum_{l odd <= L} eta_l^2 * (1 - min(1, H D_l / N(d,l))),
    D'_l = C(l+r-3, r-1) + C(l+r-1, r-1) + C(l+r+1, r-1)   (a term of degree l-2 < 0 is 0)

with ``D_l = D'_l`` for Eq. 2 (``value_class="eq2"``: one fixed value map M_h per head) and
``D_l = d(d+1)/2 * D'_l`` for the broader class whose value maps may depend on the query,
``M_h(y)`` (``value_class="query-dependent-values"``).

for every odd L (conservative truncation: the degrees above L are *not* counted as lost energy,
so ``LB_L`` increases with L towards the full bound; ``tail`` bounds what the rest could add).

Evaluation is rigorous: N and D are exact integers; ``eta_l^2 = rational * pi^(-2 [d even])``
is propagated by its exact ratio recurrence in fixed-point integer intervals (outward rounding,
:mod:`workbench.core.bounds.exact_energy`).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from workbench.core.bounds import VALUE_CLASSES
from workbench.core.bounds.exact_energy import (
    ceil_div,
    eta1_sq_exact,
    eta2_enclosures,
    eta2_ratio,
    to_float,
)
from workbench.core.bounds.value import HARMONIC_COUNT, Part, Truncation, digits_settled
from workbench.core.harmonics import sign_coefficients
from workbench.core.validation import check_dim, check_float, check_int, check_layer, check_rank

__all__ = [
    "HarmonicBound",
    "harmonic_bound",
    "heads_needed",
    "heads_needed_search",
    "HeadsNeeded",
    "search_degree_cap",
    "degree_dimension_bound",
    "TAIL_TOL",
]

TAIL_TOL = 1e-3  # default: sum degrees until the uncounted tail can add at most this much
MAX_DEGREE_CAP = 20001
# Highest degree the automatic truncation may reach to find the first contributing degree of
# r = d-2 (query-dependent values need ~0.75 d^3; above this cap r near d can still give 0).
AUTO_DEGREE_CAP = 60001
_BITS = 128  # fixed-point fraction bits of the enclosures (an error of 2^-112 at most)


@dataclass(frozen=True)
class HarmonicBound:
    """Result of :func:`harmonic_bound`: ``enclosure[0]`` is the number; its labels are those of
    :meth:`part`."""

    d: int
    r: int
    heads: int
    value: float  # nearest float to the exact truncated sum (inside the enclosure)
    enclosure: tuple[float, float]  # rigorous: exact truncated sum lies in [lo, hi]
    degrees_summed: int  # largest (odd) degree l summed
    tail: float  # upper bound on what degrees > degrees_summed could add to the bound
    method: str
    value_class: str = "eq2"  # the model class the bound covers (VALUE_CLASSES)

    @property
    def rigorous(self) -> bool:
        return self.part().rigorous

    def part(self) -> Part:
        """This bound as a part of a :class:`~workbench.core.bounds.value.BoundValue`, with its
        truncation (settled when the tail cannot change the printed digits)."""
        trunc = Truncation(self.degrees_summed, self.tail,
                           digits_settled(self.enclosure[0], self.tail))
        return HARMONIC_COUNT.at(self.enclosure, self.method, trunc)


def _check_class(value_class: str) -> str:
    if value_class not in VALUE_CLASSES:
        raise ValueError(f"value_class must be one of {VALUE_CLASSES} (got {value_class!r})")
    return value_class


def _class_factor(d: int, value_class: str) -> int:
    """Multiplier of D'_l: 1 for Eq. 2, d(d+1)/2 (all quadratic forms) for M_h(y)."""
    return 1 if value_class == "eq2" else d * (d + 1) // 2


def degree_dimension_bound(d: int, r: int, l: int, value_class: str = "eq2") -> int:
    """``D_l``: bound on ``dim Pi_l V_h`` for one head of key-rank r (Lemma 5), exact integer.

    ``eq2``: ``D'_l`` (one fixed quadratic form per head); ``query-dependent-values``:
    ``d(d+1)/2 D'_l`` (all quadratic forms)."""
    d = check_dim(d)
    r = check_rank(r, d)
    l = check_int("l", l, lo=0)
    factor = _class_factor(d, _check_class(value_class))
    inv = sum(math.comb(k + r - 1, r - 1) for k in (l - 2, l, l + 2) if k >= 0)
    return factor * inv


@lru_cache(maxsize=32)
def _choose_degree(d: int, tol: float, value_class: str = "eq2") -> int:
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
    log_d = math.log(_class_factor(d, value_class)) + np.logaddexp.reduce(terms, axis=0)
    log_n = np.logaddexp(log_comb(l + d - 2, d - 2), log_comb(l + d - 3, d - 2))
    return l[log_d < log_n - 1e-9]


@lru_cache(maxsize=16)
def _tables(
    d: int, r: int, L: int, value_class: str = "eq2"
) -> tuple[list[int], list[int], list[int]]:
    """Odd degrees, exact N(d,l) and exact D_l for l <= L."""
    degrees = list(range(1, L + 1, 2))
    # N(d,l) = C(l+d-2, d-2) + C(l+d-3, d-2); binomials by exact recurrence in j = l + d - 2.
    binom_d: dict[int, int] = {}
    b = 1  # C(d-2, d-2)
    for j in range(0, L + 1):  # b = C(j + d - 2, d - 2)
        binom_d[j] = b
        b = b * (j + d - 1) // (j + 1)
    Ns = [binom_d[l] + binom_d[l - 1] for l in degrees]
    inv = {}
    c = 1  # C(k + r - 1, r - 1)
    for k in range(0, L + 3):
        inv[k] = c
        c = c * (k + r) // (k + 1)
    q = _class_factor(d, value_class)
    Ds = [q * (inv.get(l - 2, 0) + inv[l] + inv[l + 2]) for l in degrees]
    return degrees, Ns, Ds


def _bound_interval(d: int, r: int, H: int, L: int, value_class: str = "eq2") -> tuple[int, int]:
    """Integers ``lo <= 2 LB_L 2^_BITS <= hi`` (the sum before its halving)."""
    degrees, Ns, Ds = _tables(d, r, L, value_class)
    e_lo, e_hi = eta2_enclosures(d, L, _BITS)
    lo = hi = 0
    for i in range(len(degrees)):
        gap = Ns[i] - H * Ds[i]
        if gap > 0:
            lo += e_lo[i] * gap // Ns[i]
            hi += ceil_div(e_hi[i] * gap, Ns[i])
    return lo, hi


@lru_cache(maxsize=32)
def _tail_bound(d: int, L: int) -> float:
    """Rigorous upper bound on (1 - sum_{l<=L} eta_l^2)/2."""
    e_lo, _ = eta2_enclosures(d, L, _BITS)
    return to_float((1 << _BITS) - sum(e_lo), _BITS + 1) * (1 + 1e-15)


def _resolve_degree(d: int, max_degree: int | None, tol: float, value_class: str) -> int:
    if max_degree is None:
        return _choose_degree(d, tol, value_class)
    L = check_int("max_degree", max_degree, lo=1, hi=AUTO_DEGREE_CAP)
    return L if L % 2 == 1 else L - 1


def harmonic_bound(
    d: int,
    r: int,
    H: int,
    *,
    max_degree: int | None = None,
    tol: float = TAIL_TOL,
    value_class: str = "eq2",
) -> HarmonicBound:
    """The harmonic count: certified lower bound on the D_2 error of H rank-r heads (N = 2).

    ``value_class="eq2"`` (default) covers Eq. 2 (one fixed value map per head, ``D'_l``);
    ``"query-dependent-values"`` covers value maps ``M_h(y)`` (``d(d+1)/2 D'_l``).
    Degrees up to ``max_degree`` (default: the least odd L whose uncounted tail is <= ``tol``)
    are summed; ``enclosure`` is rigorous, ``value`` is its float. Zero for ``r >= d-1``
    (there ``D_l >= N(d,l)`` for every l; Lemma 6).
    """
    d, r, H = check_layer(d, r, H)
    tol = check_float("tol", tol, lo=0.0, lo_open=True)
    return trusted_harmonic_bound(d, r, H, max_degree, tol, _check_class(value_class))


def trusted_harmonic_bound(d: int, r: int, H: int, max_degree: int | None, tol: float,
                           value_class: str) -> HarmonicBound:
    """:func:`harmonic_bound` on ``(d, r, H)``, ``tol`` and ``value_class`` already checked
    (``certified_lower_bound`` checks them once for both of its parts)."""
    L = _resolve_degree(d, max_degree, tol, value_class)
    tail = _tail_bound(d, L)
    if r >= d - 1:
        return HarmonicBound(
            d, r, H, 0.0, (0.0, 0.0), L, tail, "arithmetic: r >= d-1 gives 0", value_class
        )
    lo, hi = _bound_interval(d, r, H, L, value_class)
    lo_f = to_float(lo, _BITS + 1)  # nearest floats, then one step outward
    hi_f = to_float(hi, _BITS + 1)
    lo_f = max(0.0, math.nextafter(lo_f, -math.inf)) if lo_f > 0 else 0.0
    hi_f = math.nextafter(hi_f, math.inf) if hi_f > 0 else 0.0
    value = to_float(lo + hi, _BITS + 2) if hi > 0 else 0.0
    value = min(max(value, lo_f), hi_f)
    method = f"interval(fixed point, {_BITS} bits), exact binomials, odd degrees 1..{L}"
    return HarmonicBound(d, r, H, value, (lo_f, hi_f), L, tail, method, value_class)


def heads_needed(
    d: int,
    r: int,
    eps: float,
    *,
    max_degree: int | None = None,
    tol: float = TAIL_TOL,
    value_class: str = "eq2",
) -> int:
    """Least H whose harmonic count does not exclude error <= eps: every H below it is
    certified to have error > eps on D_2 (N = 2), for every generalized-attention model of
    key-rank r (Theorem 2's ``D'_l`` count alone, degrees up to ``max_degree``; see
    :func:`heads_needed_search` for whether that truncation set the answer).

    Fast and exact for huge H: the bound is ``(S0 - H S1) / 2`` over the degrees still active
    at H (``N_l > H D_l``), so after one sort, each H costs a bisection in the sorted thresholds;
    the sums are fixed-point enclosures at ``log2(H_max) + 160`` bits, enough to resolve H from
    H + 1 (at 128 bits, ``harmonic_bound`` resolves H only to about 30 significant digits).
    """
    d = check_dim(d)
    r = check_rank(r, d)
    eps = check_float("eps", eps, lo=0.0, hi=1.0, lo_open=True)
    vc = _check_class(value_class)
    L = _resolve_degree(d, max_degree, check_float("tol", tol, lo=0.0, lo_open=True), vc)
    return _least_heads(d, r, eps, L, vc)[0]


def _least_heads(d: int, r: int, eps: float, L: int, vc: str) -> tuple[int, float]:
    """``(H, upper end of LB_L(H))``: the least H with ``LB_L(H) <= eps`` (degrees <= L)."""
    if r >= d - 1:
        return 1, 0.0
    degrees, Ns, Ds = _tables(d, r, L, vc)
    last = [(n - 1) // D for n, D in zip(Ns, Ds)]  # degree i is active for H <= last[i]
    order = sorted((i for i in range(len(degrees)) if last[i] >= 1), key=lambda i: -last[i])
    if not order:
        return 1, 0.0
    h_max = last[order[0]] + 1  # the bound is 0 from here on
    bits = h_max.bit_length() + 160  # H s1 is then known to 2^-128 L or better
    e_lo, e_hi = eta2_enclosures(d, L, bits)
    s0_lo, s0_hi, s1_lo, s1_hi = [0], [0], [0], [0]  # prefix sums, fixed point at ``bits``
    for i in order:
        s0_lo.append(s0_lo[-1] + e_lo[i])
        s0_hi.append(s0_hi[-1] + e_hi[i])
        s1_lo.append(s1_lo[-1] + e_lo[i] * Ds[i] // Ns[i])
        s1_hi.append(s1_hi[-1] + ceil_div(e_hi[i] * Ds[i], Ns[i]))
    neg_last = [-last[i] for i in order]  # ascending, for bisect
    eps_num, eps_den = eps.as_integer_ratio()  # the double, exactly

    def bound(H: int) -> tuple[int, int]:  # 2 LB_L(H) 2^bits lies in [lo, hi]
        k = bisect.bisect_right(neg_last, -H)  # active degrees: last[i] >= H
        return s0_lo[k] - H * s1_hi[k], s0_hi[k] - H * s1_lo[k]

    def excluded(H: int) -> bool:  # certified: error > eps for H heads
        return bound(H)[0] * eps_den > (2 * eps_num) << bits

    lo_h, hi_h = 1, h_max  # excluded(lo_h), not excluded(hi_h) (the bound is 0 there)
    if not excluded(1):
        hi_h = 1
    while hi_h - lo_h > 1:
        mid = (lo_h + hi_h) // 2
        if excluded(mid):
            lo_h = mid
        else:
            hi_h = mid
    return hi_h, to_float(bound(hi_h)[1], bits + 1) * (1 + 1e-15)


# Cost of the exact tables up to degree L: L binomials of about log10 N(d, L) digits each, then
# one interval sum per degree. Measured on the (busy) 2-core machine: L log10 N = 1e6 (d = 16,
# L = 20001) takes about 5 s, so the automatic raise stops where the table would pass
# SEARCH_COST = 1e5 digit-steps (about 0.5 s): d = 16 stops at L = 2675, d = 64 at 987,
# d = 200 at 539 (a default truncation already above the cap is kept, never lowered).
SEARCH_COST = 1e5


def search_degree_cap(d: int) -> int:
    """Largest odd L (<= AUTO_DEGREE_CAP) with ``L log10 N(d, L) <= SEARCH_COST``: the highest
    truncation :func:`heads_needed_search` raises to by itself."""
    def cost(L: int) -> float:
        lc = math.lgamma(L + d - 2) - math.lgamma(L) - math.lgamma(d - 1)
        return L * max(1.0, (math.log(2 * L + d - 2) - math.log(L) + lc) / math.log(10))

    lo, hi = 1, AUTO_DEGREE_CAP
    while hi - lo > 2:
        mid = (lo + hi) // 2 | 1
        lo, hi = (mid, hi) if cost(mid) <= SEARCH_COST else (lo, mid)
    return hi if cost(hi) <= SEARCH_COST else lo


@dataclass(frozen=True)
class HeadsNeeded:
    """Result of :func:`heads_needed_search`. ``heads`` is always a valid "at least": every
    smaller H is certified to have error > eps. ``truncation_limited``: the degrees above
    ``max_degree`` (energy ``<= tail``) could still raise the bound at ``heads`` above eps, so
    the full series may need more heads; otherwise ``heads`` is the full bound's answer."""

    heads: int
    max_degree: int
    tail: float  # rigorous upper bound on the energy of the degrees above max_degree
    bound_at_heads: float  # upper end of the truncated bound at ``heads``
    truncation_limited: bool
    degree_cap: int  # the highest truncation the search would raise to by itself
    raised: bool  # whether the search raised the truncation above the starting one


def heads_needed_search(
    d: int, r: int, eps: float, *, max_degree: int | None = None, value_class: str = "eq2"
) -> HeadsNeeded:
    """:func:`heads_needed`, saying whether the truncation set the answer.

    The full bound at H is at most ``LB_L(H) + tail_L``, so when that is <= eps the answer is
    exact (``H - 1`` is excluded by ``LB_L`` alone). Otherwise, with ``max_degree`` not given,
    the truncation is raised (x4) up to :func:`search_degree_cap` and the answer recomputed;
    a ``max_degree`` given is used as it is.
    """
    d = check_dim(d)
    r = check_rank(r, d)
    eps = check_float("eps", eps, lo=0.0, hi=1.0, lo_open=True)
    vc = _check_class(value_class)
    cap = search_degree_cap(d)
    L = _resolve_degree(d, max_degree, TAIL_TOL, vc)
    start = L
    while True:
        H, at_h = _least_heads(d, r, eps, L, vc)
        tail = _tail_bound(d, L)
        limited = r < d - 1 and at_h + tail > eps
        if not limited or max_degree is not None or L >= cap:
            return HeadsNeeded(H, L, tail, at_h, limited, cap, L > start)
        L = min(4 * L + 1, cap)
