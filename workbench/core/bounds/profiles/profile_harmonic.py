"""The harmonic count for any N = 2 target profile psi (docs/derivations/soft_targets.md,
steps S1-S5): every generalized-attention model with H heads of key-rank r has, on D_2,

    err >= LB_L(psi) = 1/2 sum_{l odd <= L} eta_l(psi)^2 (1 - min(1, H D_l / N(d,l))),

with ``D_l`` of the value class
(:func:`workbench.core.bounds.harmonic_count.harmonic.degree_dimension_bound`)
and the degrees above L dropped (never counted as lost energy; ``tail`` bounds what they could
add). Hardmax (``psi = sign``) is dispatched to :func:`harmonic_bound` itself, so its numbers are
today's bit for bit; every other profile takes its energies from :mod:`.profile_energy`, rigorous
when the profile has an exact form.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from workbench.core.bounds.harmonic_count.harmonic import (
    _check_class,
    _tables,
    harmonic_bound,
    heads_needed_search,
    tail_capture_ratio,
)
from workbench.core.bounds.numerics.truncation import digits_settled, settle_degrees, truncation_of
from workbench.core.bounds.profiles.profile_energy import ProfileEnergies, profile_energies
from workbench.core.bounds.value import BoundValue, Part, Truncation
from workbench.core.profiles import Profile, sign_of, tanh_beta
from workbench.core.validation import check_dim, check_float, check_int, check_layer, check_rank

__all__ = ["ProfileBound", "ProfileHeads", "profile_bound", "profile_degree",
           "profile_heads_needed", "PROFILE_AUTO_CAP", "PROFILE_DEGREE_CAP", "PROFILE_START"]

PROFILE_DEGREE_CAP = 151  # highest automatic truncation (the arb integrals cost ~l^2 each)
PROFILE_TOL = 1e-3  # profile_degree: the least odd L whose uncounted energy is <= this
PROFILE_START = 7  # the truncation rule starts here and doubles (the tail is counted)
PROFILE_AUTO_CAP = 15  # the rule raises no further by itself (cost: arb integrals ~l^2 each)
SERIES, S6 = "harmonic count", "harmonic count via hardmax (S6)"  # the parts' names


@dataclass(frozen=True)
class ProfileBound:
    """The harmonic count for a profile: ``enclosure[0]`` is the number, the larger of its
    ``parts`` (its own series with the counted tail; for ``tanh`` also step S6 from the hardmax
    count). ``rigorous``: the chosen part's enclosure is proved (arb or exact arithmetic);
    otherwise it comes from quadrature and is an estimate, never to be called certified.
    ``degrees_summed``, ``tail`` and ``truncation`` are the series part's."""

    d: int
    r: int
    heads: int
    profile: str
    value: float
    enclosure: tuple[float, float]
    degrees_summed: int
    tail: float
    method: str
    value_class: str
    rigorous: bool
    parts: tuple[Part, ...] = ()
    truncation: Truncation | None = None

    @property
    def bound_value(self) -> BoundValue:
        """The parts as a :class:`BoundValue` (the one home of the labels)."""
        return BoundValue(self.parts)


def _down(x: Fraction) -> float:
    f = float(x)
    return math.nextafter(f, -math.inf) if Fraction(f) > x else f


def _up(x: Fraction) -> float:
    f = float(x)
    return math.nextafter(f, math.inf) if Fraction(f) < x else f


def _tail_energy(e: ProfileEnergies) -> tuple[Fraction, Fraction]:
    """``lo <= E psi^2 - sum_{l<=L} eta_l^2 <= hi`` (the energy of the degrees above ``e.L``)."""
    lo = Fraction(e.total[0]) - sum(map(Fraction, e.hi), Fraction(0))
    hi = Fraction(e.total[1]) - sum(map(Fraction, e.lo), Fraction(0))
    return max(Fraction(0), lo), max(Fraction(0), hi)


def _tail(e: ProfileEnergies) -> float:
    """What the degrees above ``e.L`` could add at most: ``(E psi^2 - sum_l lo_l)/2``."""
    return _up(_tail_energy(e)[1] / 2)


def profile_degree(profile: Profile, d: int, tol: float = PROFILE_TOL) -> int:
    """The least odd L (<= PROFILE_DEGREE_CAP) whose tail energy is <= 2 tol: a function of
    the profile and d only (the start of the search in :func:`profile_heads_needed`)."""
    d = check_dim(d)
    tol = check_float("tol", tol, lo=0.0, lo_open=True)
    L, done, cum = 7, 0, Fraction(0)
    while True:
        e = profile_energies(profile, d, L)  # its first ``done`` degrees are already summed
        left = Fraction(e.total[1]) - 2 * Fraction(tol)
        for i in range(done, len(e.lo)):
            cum += Fraction(e.lo[i])
            if cum >= left:
                return 2 * i + 1
        if L >= PROFILE_DEGREE_CAP:
            return L
        L, done = min(2 * L + 1, PROFILE_DEGREE_CAP), len(e.lo)


def _sum(e: ProfileEnergies, Ns: list[int], Ds: list[int], H: int,
         ratio: tuple[int, int]) -> tuple[Fraction, Fraction]:
    """An enclosure of the full series: degrees <= e.L term by term; the rest counted with the
    uncaptured fraction ``1 - min(1, H num/den)`` below, fully uncaptured above (Lemma 6,
    "The counted tail", which never uses the target)."""
    lo = hi = Fraction(0)
    for i in range(len(Ns)):
        gap = Ns[i] - H * Ds[i]
        if gap > 0:
            lo += Fraction(e.lo[i]) * Fraction(gap, Ns[i])
            hi += Fraction(e.hi[i]) * Fraction(gap, Ns[i])
    t_lo, t_hi = _tail_energy(e)
    num, den = ratio
    if H * num < den:
        lo += t_lo * Fraction(den - H * num, den)
    return lo / 2, (hi + t_hi) / 2


def _series(profile: Profile, d: int, r: int, H: int, L: int, vc: str
            ) -> tuple[ProfileEnergies, float, float]:
    e = profile_energies(profile, d, L)
    _, Ns, Ds = _tables(d, r, L, vc)
    lo, hi = _sum(e, Ns, Ds, H, tail_capture_ratio(d, r, L, vc))
    return e, _down(lo), _up(hi)


def profile_bound(
    profile: Profile, d: int, r: int, H: int, *, max_degree: int | None = None,
    tol: float = PROFILE_TOL, value_class: str = "eq2",
) -> ProfileBound:
    """The harmonic count of ``profile`` for H heads of key-rank r in dimension d (N = 2, D_2),
    the full series (the truncation rule of :mod:`.truncation` from ``PROFILE_START``, doubling
    up to ``PROFILE_AUTO_CAP``, unless ``max_degree`` is given); for ``tanh`` profiles also
    step S6. ``sign`` gives :func:`harmonic_bound`'s numbers exactly; zero for ``r >= d-1``.
    ``tol`` is accepted for compatibility and checked; the rule does not use it."""
    d, r, H = check_layer(d, r, H)
    vc = _check_class(value_class)
    check_float("tol", tol, lo=0.0, lo_open=True)
    if sign_of(profile) is not None:  # sign or -sign: harmonic_bound's energies
        hb = harmonic_bound(d, r, H, max_degree=max_degree, value_class=vc)
        part = Part(SERIES, hb.enclosure, True, hb.method, hb.truncation)
        return ProfileBound(d, r, H, profile.label, hb.value, hb.enclosure, hb.degrees_summed,
                            hb.tail, hb.method, vc, True, (part,), hb.truncation)
    if r >= d - 1:
        L = PROFILE_START if max_degree is None else _odd(max_degree)
        tr = truncation_of(L, 0.0, True)
        part = Part(SERIES, (0.0, 0.0), True, "arithmetic: r >= d-1 gives 0", tr)
        return ProfileBound(d, r, H, profile.label, 0.0, (0.0, 0.0), L, 0.0,
                            "arithmetic: r >= d-1 gives 0", vc, True, (part,), tr)

    def evaluate(L: int) -> tuple[ProfileEnergies, float, float]:
        return _series(profile, d, r, H, L, vc)

    def settled(res: tuple[ProfileEnergies, float, float]) -> bool:
        return digits_settled(res[1], res[2])

    if max_degree is None:
        L, (e, lo, hi), ok = settle_degrees(evaluate, settled, PROFILE_START,
                                            PROFILE_AUTO_CAP, growth=2)
    else:
        L = _odd(max_degree)
        e, lo, hi = evaluate(L)
        ok = settled((e, lo, hi))
    tr = truncation_of(L, hi - lo, ok)
    parts = [Part(SERIES, (lo, hi), e.rigorous, f"{e.method}; exact N(d,l), D_l; the rest as "
                  "a counted tail", tr)]
    beta = tanh_beta(profile)
    if beta is not None:
        from workbench.core.bounds.profiles.soft_limit import s6_enclosure

        hard = harmonic_bound(d, r, H, value_class=vc)
        parts.append(Part(S6, s6_enclosure(beta, d, hard.enclosure), True,
                          "hardmax harmonic count minus sqrt(2 LB) ||psi_beta - sign|| (arb)",
                          hard.truncation))
    bv = BoundValue(tuple(parts))
    # every part encloses the same full series, so the least upper end is one too
    enc = (bv.value, max(bv.value, min(p.enclosure[1] for p in bv.parts)))
    value = min(max((lo + hi) / 2, enc[0]), enc[1])
    return ProfileBound(d, r, H, profile.label, value, enc, L, hi - lo,
                        bv.chosen.method, vc, bv.rigorous, bv.parts, tr)


def _odd(max_degree: int) -> int:
    L = check_int("max_degree", max_degree, lo=1, hi=PROFILE_DEGREE_CAP * 4)
    return L if L % 2 == 1 else L - 1


@dataclass(frozen=True)
class ProfileHeads:
    """Result of :func:`profile_heads_needed`: every H below ``heads`` has (harmonic count)
    error > eps; ``truncation_limited`` when the full series at ``heads`` could still lie above
    eps (``bound_at_heads``, the upper end of its enclosure, > eps). ``tail``: the energy of
    the degrees above ``max_degree``, halved. ``rigorous`` as in :class:`ProfileBound`."""

    heads: int
    max_degree: int
    tail: float
    bound_at_heads: float
    truncation_limited: bool
    rigorous: bool
    truncation: Truncation | None = None


def profile_heads_needed(
    profile: Profile, d: int, r: int, eps: float, *, max_degree: int | None = None,
    value_class: str = "eq2",
) -> ProfileHeads:
    """Least H whose harmonic count for ``profile`` (the larger of its parts, as in
    :func:`profile_bound`) does not exclude error <= eps (bisection in exact rationals: the
    bound is non-increasing in H), every H judged by :func:`profile_bound`'s own lower end (its
    truncation rule, or ``max_degree``). ``sign`` is :func:`heads_needed_search`."""
    d = check_dim(d)
    r = check_rank(r, d)
    eps = check_float("eps", eps, lo=0.0, hi=1.0, lo_open=True)
    vc = _check_class(value_class)
    if sign_of(profile) is not None:
        hn = heads_needed_search(d, r, eps, max_degree=max_degree, value_class=vc)
        return ProfileHeads(hn.heads, hn.max_degree, hn.tail, hn.bound_at_heads,
                            hn.truncation_limited, True, hn.truncation)

    def lower(H: int) -> ProfileBound:  # the value bounds lower prints at H
        return profile_bound(profile, d, r, H, max_degree=max_degree, value_class=vc)

    # a first answer from the prefix sums at the starting truncation, then every H is judged by
    # profile_bound's own lower end (so heads-needed and bounds lower agree at H - 1 and H);
    # every smaller H is excluded because the full series does not increase with H
    start = PROFILE_START if max_degree is None else _odd(max_degree)
    guess = _least_heads(profile, d, r, eps, start, vc).heads
    if guess > 1 and not lower(guess - 1).enclosure[0] > eps:
        lo_h, hi_h = 0, guess - 1
    else:
        lo_h, hi_h = guess - 1, guess
        while lower(hi_h).enclosure[0] > eps:
            lo_h, hi_h = hi_h, 2 * hi_h
    while hi_h - lo_h > 1:
        mid = (lo_h + hi_h) // 2
        lo_h, hi_h = (mid, hi_h) if lower(mid).enclosure[0] > eps else (lo_h, mid)
    at = lower(hi_h)
    ok = at.enclosure[1] <= eps
    e = profile_energies(profile, d, at.degrees_summed)
    return ProfileHeads(hi_h, at.degrees_summed, _tail(e), at.enclosure[1], not ok,
                        at.rigorous, truncation_of(at.degrees_summed,
                                                   at.enclosure[1] - at.enclosure[0], ok))


def _least_heads(profile: Profile, d: int, r: int, eps: float, L: int, vc: str) -> ProfileHeads:
    e = profile_energies(profile, d, L)
    tail = _tail(e)
    if r >= d - 1:
        return ProfileHeads(1, L, tail, 0.0, False, e.rigorous, truncation_of(L, 0.0, True))
    _, Ns, Ds = _tables(d, r, L, vc)
    ratio = tail_capture_ratio(d, r, L, vc)
    h_max = max([(n - 1) // D + 1 for n, D in zip(Ns, Ds)] + [(ratio[1] - 1) // ratio[0] + 1])
    target = Fraction(eps)
    beta = tanh_beta(profile)
    if beta is not None:
        from workbench.core.bounds.harmonic_count.harmonic import _resolve_degree
        from workbench.core.bounds.profiles.soft_limit import s6_enclosure

        L_hard = _resolve_degree(d, None, 1e-3, vc)

    def enclosure(H: int) -> tuple[Fraction, Fraction]:
        lo, hi = _sum(e, Ns, Ds, H, ratio)
        if beta is not None:  # step S6 from the hardmax count (a fixed truncation)
            s_lo, s_hi = s6_enclosure(beta, d, harmonic_bound(
                d, r, H, max_degree=L_hard, value_class=vc).enclosure)
            lo, hi = max(lo, Fraction(s_lo)), min(hi, Fraction(s_hi))
        return lo, hi

    lo_h, hi_h = 1, h_max
    if not enclosure(1)[0] > target:
        hi_h = 1
    while hi_h - lo_h > 1:
        mid = (lo_h + hi_h) // 2
        lo_h, hi_h = (mid, hi_h) if enclosure(mid)[0] > target else (lo_h, mid)
    lo, hi = enclosure(hi_h)
    at = _up(hi)
    return ProfileHeads(hi_h, L, tail, at, at > eps, e.rigorous,
                        truncation_of(L, _up(hi - lo), at <= eps))
