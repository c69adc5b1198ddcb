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

for every odd L. The degrees above L are counted too, by a proved lower bound on the fraction of
their energy that stays uncaptured (``1 - H g_L``, :func:`tail_capture_ratio`; Lemma 6, "The
counted tail"), so the enclosure contains the *full* series; L follows the one truncation rule
of :mod:`.truncation` (``tail`` is what the remaining uncertainty could add).

Evaluation is rigorous: N and D are exact integers; ``eta_l^2 = rational * pi^(-2 [d even])``
is propagated by its exact ratio recurrence in fixed-point integer intervals (outward rounding,
:mod:`workbench.core.bounds.harmonic_count.exact_energy`).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from functools import lru_cache

from workbench.core.bounds import VALUE_CLASSES
from workbench.core.bounds.harmonic_count.exact_energy import (
    ceil_div,
    eta2_enclosures,
    to_float,
)
from workbench.core.bounds.harmonic_count.harmonic_degrees import AUTO_DEGREE_CAP
from workbench.core.bounds.harmonic_count.harmonic_degrees import choose_degree as _choose_degree
from workbench.core.bounds.harmonic_count.harmonic_degrees import class_factor as _class_factor
from workbench.core.bounds.numerics.truncation import (
    digits_settled,
    settle_degrees,
    truncation_of,
)
from workbench.core.bounds.value import HARMONIC_COUNT, Part, Truncation
from workbench.core.validation import check_dim, check_float, check_int, check_layer, check_rank

__all__ = [
    "HarmonicBound",
    "harmonic_bound",
    "heads_needed",
    "heads_needed_search",
    "HeadsNeeded",
    "search_degree_cap",
    "degree_dimension_bound",
    "tail_capture_ratio",
    "rule_enclosure",
    "TAIL_TOL",
]

TAIL_TOL = 1e-3  # default: sum degrees until the uncounted tail can add at most this much
_BITS = 128  # fixed-point fraction bits of the enclosures (an error of 2^-112 at most)


@dataclass(frozen=True)
class HarmonicBound:
    """Result of :func:`harmonic_bound`: ``enclosure[0]`` is the number; its labels are those of
    :meth:`part`."""

    d: int
    r: int
    heads: int
    value: float  # a float inside the enclosure (its midpoint, rounded)
    enclosure: tuple[float, float]  # rigorous: the full series (all degrees) lies in [lo, hi]
    degrees_summed: int  # largest (odd) degree l summed term by term
    tail: float  # upper bound on what the degrees > degrees_summed could add beyond lo
    method: str
    value_class: str = "eq2"  # the model class the bound covers (VALUE_CLASSES)
    truncation: Truncation | None = None  # the truncation rule's record

    @property
    def rigorous(self) -> bool:
        return self.part().rigorous

    def part(self) -> Part:
        """This bound as a part of a :class:`~workbench.core.bounds.value.BoundValue`, with the
        truncation rule's record (core/bounds/numerics/truncation.py)."""
        return HARMONIC_COUNT.at(self.enclosure, self.method, self.truncation)


def _check_class(value_class: str) -> str:
    if value_class not in VALUE_CLASSES:
        raise ValueError(f"value_class must be one of {VALUE_CLASSES} (got {value_class!r})")
    return value_class


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


def tail_capture_ratio(d: int, r: int, L: int, value_class: str = "eq2") -> tuple[int, int]:
    """``(num, den)``: ``D_l / N(d,l) <= num / den`` for every degree ``l >= L + 2`` (Lemma 6,
    "The counted tail"): ``3 q C(L+r+3, r-1) / N(d, L+2)`` (q the class factor), because
    ``D_l <= 3 q C(l+r+1, r-1)``, ``N(d,l) = C(l+d-2, d-2) (2l+d-2)/(l+d-2)``, and both
    ``C(l+r+1, r-1) / C(l+d-2, d-2)`` and ``(l+d-2)/(2l+d-2)`` do not increase with l
    (``r <= d-1``)."""
    q = _class_factor(d, value_class)
    n = L + 2
    return 3 * q * math.comb(n + r + 1, r - 1), math.comb(n + d - 2, d - 2) + math.comb(
        n + d - 3, d - 2)


def _tail_energy(d: int, L: int, bits: int) -> tuple[int, int]:
    """Integers ``lo <= (1 - sum_{l<=L} eta_l^2) 2^bits <= hi`` (``sum_l eta_l^2 = 1``)."""
    e_lo, e_hi = eta2_enclosures(d, L, bits)
    return max(0, (1 << bits) - sum(e_hi)), (1 << bits) - sum(e_lo)


def _counted_tail(t_lo: int, H: int, num: int, den: int) -> int:
    """Lower end of ``T (1 - min(1, H num/den))`` from ``t_lo <= T`` (floored)."""
    gap = den - H * num
    return t_lo * gap // den if gap > 0 else 0


def _bound_interval(d: int, r: int, H: int, L: int, value_class: str = "eq2",
                    bits: int = _BITS) -> tuple[int, int]:
    """Integers ``lo <= 2 LB 2^bits <= hi`` for the *full* series (the sum before its halving):
    the degrees ``<= L`` term by term, the rest by the counted tail (:func:`tail_capture_ratio`)
    below and as fully uncaptured above."""
    degrees, Ns, Ds = _tables(d, r, L, value_class)
    e_lo, e_hi = eta2_enclosures(d, L, bits)
    lo = hi = 0
    for i in range(len(degrees)):
        gap = Ns[i] - H * Ds[i]
        if gap > 0:
            lo += e_lo[i] * gap // Ns[i]
            hi += ceil_div(e_hi[i] * gap, Ns[i])
    t_lo, t_hi = _tail_energy(d, L, bits)
    num, den = tail_capture_ratio(d, r, L, value_class)
    return lo + _counted_tail(t_lo, H, num, den), hi + t_hi


def _bits_for(H: int) -> int:
    """Fixed-point bits that tell H from H + 1 (``H s1`` known to 2^-128 L or better), in
    steps of 64 so that the energy tables are shared."""
    return -(-max(_BITS, H.bit_length() + 160) // 64) * 64


def _ends(lo: int, hi: int, bits: int) -> tuple[float, float]:
    """Outward floats of ``lo/2^(bits+1)`` and ``hi/2^(bits+1)`` (the halving included)."""
    lo_f, hi_f = to_float(lo, bits + 1), to_float(hi, bits + 1)
    lo_f = max(0.0, math.nextafter(lo_f, -math.inf)) if lo_f > 0 else 0.0
    hi_f = math.nextafter(hi_f, math.inf) if hi_f > 0 else 0.0
    return lo_f, hi_f


def rule_enclosure(d: int, r: int, H: int, max_degree: int | None, tol: float, vc: str
                 ) -> tuple[int, int, int, int, bool]:
    """``(L, lo, hi, bits, settled)``: the full series' enclosure ``[lo, hi] / 2^(bits+1)`` at
    the truncation the rule of :mod:`.truncation` picks (from the default start, raised x4 to
    :func:`search_degree_cap` until the printed digits are settled), or at ``max_degree``.
    ``harmonic_bound`` and ``heads_needed`` both read this one function, so they agree."""
    L = _resolve_degree(d, max_degree, tol, vc)
    bits = _bits_for(H)

    def evaluate(L: int) -> tuple[int, int]:
        return _bound_interval(d, r, H, L, vc, bits)

    def settled(res: tuple[int, int]) -> bool:
        return digits_settled(*_ends(res[0], res[1], bits))

    if max_degree is None:
        L, (lo, hi), ok = settle_degrees(evaluate, settled, L, max(L, search_degree_cap(d)))
    else:
        lo, hi = evaluate(L)
        ok = settled((lo, hi))
    return L, lo, hi, bits, ok


@lru_cache(maxsize=32)
def _tail_bound(d: int, L: int) -> float:
    """Rigorous upper bound on (1 - sum_{l<=L} eta_l^2)/2."""
    return to_float(_tail_energy(d, L, _BITS)[1], _BITS + 1) * (1 + 1e-15)


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
    (``certified_lower_bound`` checks them once for both of its parts). Without ``max_degree``
    the truncation follows the rule of :mod:`.truncation` (raised until the printed digits are
    settled, up to :func:`search_degree_cap`)."""
    L = _resolve_degree(d, max_degree, tol, value_class)
    if r >= d - 1:
        return HarmonicBound(d, r, H, 0.0, (0.0, 0.0), L, 0.0, "arithmetic: r >= d-1 gives 0",
                             value_class, truncation_of(L, 0.0, True))

    L, lo, hi, bits, ok = rule_enclosure(d, r, H, max_degree, tol, value_class)
    lo_f, hi_f = _ends(lo, hi, bits)
    value = min(max(to_float(lo + hi, bits + 2), lo_f), hi_f)
    method = (f"interval(fixed point, {bits} bits), exact binomials, odd degrees 1..{L}, "
              "the rest as a counted tail")
    tail = hi_f - lo_f
    return HarmonicBound(d, r, H, value, (lo_f, hi_f), L, tail, method, value_class,
                         truncation_of(L, tail, ok))


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
    key-rank r (Theorem 2's ``D'_l`` count alone): ``heads_needed_search(...).heads``, the
    truncation raised by the one rule unless ``max_degree`` is given (see
    :func:`heads_needed_search` for whether it set the answer).

    Fast and exact for huge H: the bound is ``(S0 - H S1) / 2`` over the degrees still active
    at H (``N_l > H D_l``), so after one sort, each H costs a bisection in the sorted thresholds;
    the sums are fixed-point enclosures at ``log2(H_max) + 160`` bits, enough to resolve H from
    H + 1 (at 128 bits, ``harmonic_bound`` resolves H only to about 30 significant digits).
    """
    d = check_dim(d)
    r = check_rank(r, d)
    eps = check_float("eps", eps, lo=0.0, hi=1.0, lo_open=True)
    vc = _check_class(value_class)
    tol = check_float("tol", tol, lo=0.0, lo_open=True)
    return heads_needed_search(d, r, eps, max_degree=max_degree, value_class=vc, tol=tol).heads


def _least_heads(d: int, r: int, eps: float, L: int, vc: str) -> tuple[int, float, float]:
    """``(H, lower, upper)``: the least H whose full-series lower end (degrees <= L and the
    counted tail) is <= eps, and the enclosure of the full series there."""
    if r >= d - 1:
        return 1, 0.0, 0.0
    degrees, Ns, Ds = _tables(d, r, L, vc)
    last = [(n - 1) // D for n, D in zip(Ns, Ds)]  # degree i is active for H <= last[i]
    num, den = tail_capture_ratio(d, r, L, vc)
    last_tail = (den - 1) // num  # the counted tail is positive for H <= last_tail
    order = sorted((i for i in range(len(degrees)) if last[i] >= 1), key=lambda i: -last[i])
    h_max = max(1, last_tail + 1, last[order[0]] + 1 if order else 1)  # the lower end is 0
    bits = h_max.bit_length() + 160  # H s1 is then known to 2^-128 L or better
    e_lo, e_hi = eta2_enclosures(d, L, bits)
    t_lo, t_hi = _tail_energy(d, L, bits)
    s0_lo, s0_hi, s1_lo, s1_hi = [0], [0], [0], [0]  # prefix sums, fixed point at ``bits``
    for i in order:
        s0_lo.append(s0_lo[-1] + e_lo[i])
        s0_hi.append(s0_hi[-1] + e_hi[i])
        s1_lo.append(s1_lo[-1] + e_lo[i] * Ds[i] // Ns[i])
        s1_hi.append(s1_hi[-1] + ceil_div(e_hi[i] * Ds[i], Ns[i]))
    neg_last = [-last[i] for i in order]  # ascending, for bisect
    eps_num, eps_den = eps.as_integer_ratio()  # the double, exactly

    def bound(H: int) -> tuple[int, int]:  # 2 LB(H) 2^bits (full series) lies in [lo, hi]
        k = bisect.bisect_right(neg_last, -H)  # active degrees: last[i] >= H
        return (s0_lo[k] - H * s1_hi[k] + _counted_tail(t_lo, H, num, den),
                s0_hi[k] - H * s1_lo[k] + t_hi)

    def excluded(H: int) -> bool:  # certified: error > eps for H heads
        return bound(H)[0] * eps_den > (2 * eps_num) << bits

    lo_h, hi_h = 1, h_max  # excluded(lo_h), not excluded(hi_h) (the lower end is 0 there)
    if not excluded(1):
        hi_h = 1
    while hi_h - lo_h > 1:
        mid = (lo_h + hi_h) // 2
        if excluded(mid):
            lo_h = mid
        else:
            hi_h = mid
    lo, hi = bound(hi_h)
    return (hi_h, max(0.0, to_float(lo, bits + 1) * (1 - 1e-15)),
            to_float(hi, bits + 1) * (1 + 1e-15))


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
    smaller H is certified to have error > eps. ``truncation_limited``: the full series at
    ``heads`` could still lie above eps (its enclosure's upper end ``bound_at_heads`` > eps), so
    the full bound may need more heads; otherwise ``heads`` is the full bound's answer.
    ``truncation`` is the rule's record (:mod:`.truncation`, settled by the question)."""

    heads: int
    max_degree: int
    tail: float  # rigorous upper bound on the energy of the degrees above max_degree, halved
    bound_at_heads: float  # upper end of the full series' enclosure at ``heads``
    truncation_limited: bool
    degree_cap: int  # the highest truncation the search would raise to by itself
    raised: bool  # whether the search raised the truncation above the starting one
    truncation: Truncation | None = None


def heads_needed_search(
    d: int, r: int, eps: float, *, max_degree: int | None = None, value_class: str = "eq2",
    tol: float = TAIL_TOL,
) -> HeadsNeeded:
    """:func:`heads_needed`, saying whether the truncation set the answer.

    Every H is judged by the value :func:`harmonic_bound` gives (the one truncation rule), so
    the two agree at ``H - 1`` (lower end > eps) and at H (lower end <= eps); every smaller H
    is excluded because the full series does not increase with H. The answer is the full
    bound's when the upper end at H is <= eps too; otherwise ``truncation_limited``. ``tol``
    sets the starting truncation (as in :func:`harmonic_bound`).
    """
    d = check_dim(d)
    r = check_rank(r, d)
    eps = check_float("eps", eps, lo=0.0, hi=1.0, lo_open=True)
    vc = _check_class(value_class)
    cap = search_degree_cap(d)
    start = _resolve_degree(d, max_degree, check_float("tol", tol, lo=0.0, lo_open=True), vc)

    eps_num, eps_den = eps.as_integer_ratio()  # the double, exactly
    if r >= d - 1:
        return HeadsNeeded(1, start, _tail_bound(d, start), 0.0, False, cap, False,
                           truncation_of(start, 0.0, True))

    def excluded(H: int) -> bool:  # certified by the value bounds lower prints: error > eps
        _, lo, _, bits, _ = rule_enclosure(d, r, H, max_degree, tol, vc)
        return lo * eps_den > (2 * eps_num) << bits

    # fast: the prefix-sum answer at a fixed L, with L moved to the rule's L at that answer
    # until it stops moving; then the rule's own values confirm H - 1 and H (or a bisection
    # on them decides)
    L = start
    for _ in range(8):
        guess = _least_heads(d, r, eps, L, vc)[0]
        L_next = rule_enclosure(d, r, guess, max_degree, tol, vc)[0]
        if L_next == L:
            break
        L = L_next
    if not excluded(guess) and (guess == 1 or excluded(guess - 1)):
        lo_h, hi_h = guess - 1, guess
    else:
        lo_h = 0
        hi_h = max(1, guess)
        while excluded(hi_h):
            lo_h, hi_h = hi_h, 2 * hi_h
    while hi_h - lo_h > 1:
        mid = (lo_h + hi_h) // 2
        lo_h, hi_h = (mid, hi_h) if excluded(mid) else (lo_h, mid)
    L, lo, hi, bits, _ = rule_enclosure(d, r, hi_h, max_degree, tol, vc)
    ok = hi * eps_den <= (2 * eps_num) << bits  # the full series at H* is <= eps
    lo_f, hi_f = _ends(lo, hi, bits)
    return HeadsNeeded(hi_h, L, _tail_bound(d, L), hi_f, not ok, cap, L > start,
                       truncation_of(L, hi_f - lo_f, ok))
