"""The harmonic count for any N = 2 target profile psi (docs/derivations/soft_targets.md,
steps S1-S5): every generalized-attention model with H heads of key-rank r has, on D_2,

    err >= LB_L(psi) = 1/2 sum_{l odd <= L} eta_l(psi)^2 (1 - min(1, H D_l / N(d,l))),

with ``D_l`` of the value class (:func:`workbench.core.bounds.harmonic.degree_dimension_bound`)
and the degrees above L dropped (never counted as lost energy; ``tail`` bounds what they could
add). Hardmax (``psi = sign``) is dispatched to :func:`harmonic_bound` itself, so its numbers are
today's bit for bit; every other profile takes its energies from :mod:`.profile_energy`, rigorous
when the profile has an exact form.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from workbench.core.bounds.harmonic import (
    _check_class,
    _tables,
    harmonic_bound,
    heads_needed_search,
)
from workbench.core.bounds.profile_energy import ProfileEnergies, profile_energies
from workbench.core.bounds.value import HARMONIC_COUNT, BoundValue, Part, Truncation, digits_settled
from workbench.core.profiles import Profile
from workbench.core.validation import check_dim, check_float, check_int, check_layer, check_rank

__all__ = ["ProfileBound", "ProfileHeads", "profile_bound", "profile_degree",
           "profile_heads_needed", "PROFILE_DEGREE_CAP"]

PROFILE_DEGREE_CAP = 151  # highest automatic truncation (the arb integrals cost ~l^2 each)
PROFILE_TOL = 1e-3  # default: the least odd L whose uncounted tail is <= this


@dataclass(frozen=True)
class ProfileBound:
    """The harmonic count for a profile: ``enclosure[0]`` is the number; its labels are those
    of :meth:`bound_value` (``rigorous`` is given by the profile's energies)."""

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

    def part(self) -> Part:
        """This bound as a part (the harmonic count of the profile), with its truncation."""
        trunc = Truncation(self.degrees_summed, self.tail,
                           digits_settled(self.enclosure[0], self.tail))
        return Part(HARMONIC_COUNT.name, self.enclosure, self.rigorous, self.method, trunc)

    def bound_value(self) -> BoundValue:
        """The bound for a profile has one part: the fiber bound is not used for it."""
        return BoundValue((self.part(),))


def _is_sign(profile: Profile) -> bool:
    """``sign`` or ``-sign`` (farthest): the same energies, so :func:`harmonic_bound`'s."""
    return profile.key in (("sign", 1.0), ("sign", -1.0))


def _down(x: Fraction) -> float:
    f = float(x)
    return math.nextafter(f, -math.inf) if Fraction(f) > x else f


def _up(x: Fraction) -> float:
    f = float(x)
    return math.nextafter(f, math.inf) if Fraction(f) < x else f


def _tail(e: ProfileEnergies) -> float:
    """What the degrees above ``e.L`` could add: at most ``(E psi^2 - sum_l lo_l)/2``."""
    return max(0.0, _up((Fraction(e.total[1]) - sum(map(Fraction, e.lo), Fraction(0))) / 2))


def profile_degree(profile: Profile, d: int, tol: float = PROFILE_TOL) -> int:
    """The least odd L (<= PROFILE_DEGREE_CAP) whose uncounted tail is <= tol: a function of
    the profile and d only, so the bound stays monotone in r and H."""
    d = check_dim(d)
    tol = check_float("tol", tol, lo=0.0, lo_open=True)
    L = 7
    while True:
        e = profile_energies(profile, d, L)
        cum = Fraction(0)
        for i, lo in enumerate(e.lo):
            cum += Fraction(lo)
            if (Fraction(e.total[1]) - cum) / 2 <= Fraction(tol):
                return 2 * i + 1
        if L >= PROFILE_DEGREE_CAP:
            return L
        L = min(2 * L + 1, PROFILE_DEGREE_CAP)


def _sum(e: ProfileEnergies, Ns: list[int], Ds: list[int], H: int) -> tuple[Fraction, Fraction]:
    lo = hi = Fraction(0)
    for i in range(len(Ns)):
        gap = Ns[i] - H * Ds[i]
        if gap > 0:
            lo += Fraction(e.lo[i]) * Fraction(gap, Ns[i])
            hi += Fraction(e.hi[i]) * Fraction(gap, Ns[i])
    return lo / 2, hi / 2


def profile_bound(
    profile: Profile, d: int, r: int, H: int, *, max_degree: int | None = None,
    tol: float = PROFILE_TOL, value_class: str = "eq2",
) -> ProfileBound:
    """The harmonic count of ``profile`` for H heads of key-rank r in dimension d (N = 2, D_2).
    ``sign`` gives :func:`harmonic_bound`'s numbers exactly; zero for ``r >= d-1``."""
    d, r, H = check_layer(d, r, H)
    vc = _check_class(value_class)
    if _is_sign(profile):
        hb = harmonic_bound(d, r, H, max_degree=max_degree, value_class=vc)
        return ProfileBound(d, r, H, profile.label, hb.value, hb.enclosure, hb.degrees_summed,
                            hb.tail, hb.method, vc, True)
    L = profile_degree(profile, d, tol) if max_degree is None else _odd(max_degree)
    e = profile_energies(profile, d, L)
    tail = _tail(e)
    if r >= d - 1:
        return ProfileBound(d, r, H, profile.label, 0.0, (0.0, 0.0), L, tail,
                            "arithmetic: r >= d-1 gives 0", vc, True)
    _, Ns, Ds = _tables(d, r, L, vc)
    lo, hi = _sum(e, Ns, Ds, H)
    value = float((lo + hi) / 2)
    return ProfileBound(d, r, H, profile.label, value, (_down(lo), _up(hi)), L, tail,
                        f"{e.method}; exact N(d,l), D_l", vc, e.rigorous)


def _odd(max_degree: int) -> int:
    L = check_int("max_degree", max_degree, lo=1, hi=PROFILE_DEGREE_CAP * 4)
    return L if L % 2 == 1 else L - 1


@dataclass(frozen=True)
class ProfileHeads:
    """Result of :func:`profile_heads_needed`: every H below ``heads`` has (harmonic count)
    error > eps; ``truncation_limited`` when the uncounted tail could still lift the bound at
    ``heads`` above eps. ``rigorous`` as in :class:`ProfileBound`."""

    heads: int
    max_degree: int
    tail: float
    bound_at_heads: float
    truncation_limited: bool
    rigorous: bool


def profile_heads_needed(
    profile: Profile, d: int, r: int, eps: float, *, max_degree: int | None = None,
    value_class: str = "eq2",
) -> ProfileHeads:
    """Least H whose harmonic count for ``profile`` does not exclude error <= eps (bisection in
    exact rationals: the bound is non-increasing in H). When the uncounted tail could move the
    answer, the truncation is raised (x2) up to PROFILE_DEGREE_CAP unless ``max_degree`` is
    given. ``sign`` is :func:`heads_needed_search`."""
    d = check_dim(d)
    r = check_rank(r, d)
    eps = check_float("eps", eps, lo=0.0, hi=1.0, lo_open=True)
    vc = _check_class(value_class)
    if _is_sign(profile):
        hn = heads_needed_search(d, r, eps, max_degree=max_degree, value_class=vc)
        return ProfileHeads(hn.heads, hn.max_degree, hn.tail, hn.bound_at_heads,
                            hn.truncation_limited, True)
    L = profile_degree(profile, d) if max_degree is None else _odd(max_degree)
    while True:
        res = _least_heads(profile, d, r, eps, L, vc)
        if not res.truncation_limited or max_degree is not None or L >= PROFILE_DEGREE_CAP:
            return res
        L = min(2 * L + 1, PROFILE_DEGREE_CAP)  # the tail could move the answer: sum further


def _least_heads(profile: Profile, d: int, r: int, eps: float, L: int, vc: str) -> ProfileHeads:
    e = profile_energies(profile, d, L)
    tail = _tail(e)
    if r >= d - 1:
        return ProfileHeads(1, L, tail, 0.0, False, e.rigorous)
    _, Ns, Ds = _tables(d, r, L, vc)
    h_max = max([(n - 1) // D + 1 for n, D in zip(Ns, Ds)] + [1])
    target = Fraction(eps)

    def excluded(H: int) -> bool:
        return _sum(e, Ns, Ds, H)[0] > target

    lo_h, hi_h = 1, h_max
    if not excluded(1):
        hi_h = 1
    while hi_h - lo_h > 1:
        mid = (lo_h + hi_h) // 2
        lo_h, hi_h = (mid, hi_h) if excluded(mid) else (lo_h, mid)
    at = _up(_sum(e, Ns, Ds, hi_h)[1])
    return ProfileHeads(hi_h, L, tail, at, r < d - 1 and at + tail > eps, e.rigorous)
