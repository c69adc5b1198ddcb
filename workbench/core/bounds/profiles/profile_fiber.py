"""The fiber bound for any odd profile psi, and the profile's lower bound as a
:class:`~workbench.core.bounds.value.BoundValue` (docs/derivations/soft_targets.md, step F and
Lemmas P1-P5).

Every Eq. 2 model with H heads of key-rank r, ``H r < d``, has on D_2

    err >= F(psi) = 1/2 (E psi^2 - E_{c ~ Beta(Hr/2, m/2)} KyFan_H(c)),

with the fiber values of the kernel ``k_psi = sum_l eta_l(psi)^2 P_l`` (Lemmas F1-F4 with
``k_psi`` in place of the arcsine kernel); query-dependent value maps take the trace. Dropping
the degrees above L gives ``F_L <= F`` (Lemma P4), and ``F - F_L <= tail`` (the harmonic count's
``tail``). For large beta the direct series is long; then Lemma P5 (``|F(psi) - F(sign)| <=
||psi - sign||``) gives the part ``fiber via hardmax`` from the hardmax fiber bound.

A profile without an exact form (numpy only) runs the same code on its quadrature energies:
its parts are ``rigorous = False``, estimates never called certified.
"""

from __future__ import annotations

import math
from typing import Any

from workbench.core import rigorous as rig
from workbench.core.bounds import EQ2, VALUE_CLASSES
from workbench.core.bounds.fiber_bound.fiber import trusted_fiber_bound
from workbench.core.bounds.fiber_bound.fiber_enclosure import ky_fan_average
from workbench.core.bounds.numerics.gegenbauer_ball import CACHE, rho_ball
from workbench.core.bounds.numerics.truncation import (
    digits_settled,
    digits_tolerance,
    settle_degrees,
    truncation_of,
)
from workbench.core.bounds.profiles import panel_energy
from workbench.core.bounds.profiles.profile_energy import ProfileEnergies, profile_energies
from workbench.core.bounds.profiles.profile_fiber_kernel import ProfileFiber, value_multiplicities
from workbench.core.bounds.profiles.profile_form import exact_form
from workbench.core.bounds.profiles.profile_harmonic import (
    PROFILE_DEGREE_CAP,
    _odd,
    _tail,
    profile_bound,
    profile_degree,
)
from workbench.core.bounds.value import BoundValue, Part
from workbench.core.profiles import Profile, sign_of, tanh_beta
from workbench.core.validation import check_choice, check_layer

__all__ = ["DIRECT_FROM", "FIBER_TOL", "HARDMAX_BELOW", "distance_to_sign", "profile_distance",
           "direct_fiber_part", "hardmax_fiber_part", "profile_fiber_parts",
           "profile_lower_bound"]

_TOL = 1e-12  # target absolute error of E_c KyFan (cells left crude, spread as in fiber_enclosure)
HARDMAX_BELOW = 0.25  # ... and below this the hardmax route (Lemma P5) as well
DIRECT_FROM = 0.2  # below this distance the direct series is skipped (too many degrees)
FIBER_TOL = 1e-5  # the fiber part sums the odd degrees until its uncounted tail is below this


def _span_count(d: int, r: int, H: int, value_class: str) -> tuple[int, int]:
    r_star = min(H * r, d)
    m = d - r_star
    return r_star, (H if value_class == EQ2 else sum(value_multiplicities(m)) if m else 0)


def _eta_balls(e: ProfileEnergies) -> list[Any]:
    return [rig.ball((rig.arb(lo) + rig.arb(hi)) / 2, (rig.arb(hi) - rig.arb(lo)) / 2)
            for lo, hi in zip(e.lo, e.hi)]


def direct_fiber_part(profile: Profile, d: int, r: int, H: int, value_class: str,
                      L: int) -> Part:
    """``F_L(psi)`` (Lemma P4) as a part named ``fiber``: the profile kernel's fiber values
    (:class:`ProfileFiber`), their Ky Fan average in arb balls, minus nothing above L."""
    r_star, count = _span_count(d, r, H, value_class)
    e = profile_energies(profile, d, L)
    tail = _tail(e)  # Lemma P4: the degrees above L could raise the part by at most this
    kind = "rigorous enclosure (arb balls" if e.rigorous else "estimate from quadrature energies ("
    if r_star >= d:
        return Part("fiber", (0.0, 0.0), e.rigorous, "arithmetic: H r >= d gives 0",
                    truncation_of(L, 0.0, True))
    with rig.precision(128):
        eta = _eta_balls(e)
        fib = ProfileFiber(d, r_star, eta, L)
        captured = ky_fan_average(fib, count, _TOL, 0)
        half = sum(eta, rig.arb(0)) - captured
        lo, hi = rig.to_interval(half / 2)
    method = (f"{kind}: the kernel sum_l eta_l^2 P_l over odd l <= {L} on each fiber as exact "
              f"cosine series, its Ky Fan sum averaged over Beta({r_star}/2, {d - r_star}/2) "
              "between proved crossings)")
    lo = max(0.0, lo)
    trunc = truncation_of(L, tail, digits_settled(lo, lo + tail))
    return Part("fiber", (lo, max(0.0, hi)), e.rigorous, method, trunc)


def distance_to_sign(profile: Profile, d: int) -> tuple[float, float]:
    """An enclosure of ``||psi - sign||`` (:func:`profile_distance` to ``sign``; for a soft
    profile, the square root of step S6's ``delta^2``, one enclosure for both uses)."""
    from workbench.core.profiles import sign_profile

    beta = tanh_beta(profile)
    if beta is not None:
        from workbench.core.bounds.profiles.soft_limit import distance_to_sign as delta_squared

        lo, hi = delta_squared(beta, d)
        with rig.precision(128):
            return rig.lower_float(rig.arb(lo).sqrt()), rig.upper_float(rig.arb(hi).sqrt())
    return profile_distance(profile, sign_profile(), d)


def profile_distance(a: Profile, b: Profile, d: int) -> tuple[float, float]:
    """An enclosure of ``||psi_a - psi_b||`` in ``L^2`` of the law of ``t = <y, w>``:
    ``(2 rho_d int_0^{pi/2} (psi_a - psi_b)(sin th)^2 cos^{d-2} th dth)^{1/2}`` (both odd), an
    arb integral; ``(nan, nan)`` unless both profiles have an exact form."""
    if not (a.has_exact_form and b.has_exact_form):
        return (math.nan, math.nan)
    if a.key and a.key == b.key:
        return (0.0, 0.0)  # (the integral of 0 has no finite relative enclosure in flint)
    key = ("distance", a.key, b.key, d)
    if a.key and b.key and key in CACHE:
        return CACHE[key]
    out = _panel_distance(a, b, d) or _distance(a, b, d)
    if a.key and b.key:
        CACHE[key] = out
    return out


def _panel_distance(a: Profile, b: Profile, d: int) -> tuple[float, float] | None:
    """For two profiles with exact forms (the caller's test) and cache keys, the panel
    quadrature of Lemma Q on their node values where it pays for either and its proved error is
    below 2^-50; else None."""
    if not (a.key and b.key and (panel_energy.panels_pay(a) or panel_energy.panels_pay(b))):
        return None
    sq = panel_energy.panel_gap_sq(a, b, d)
    if sq is None:
        return None
    with rig.precision(128):
        sq = rig.arb(max(sq.lower(), rig.arb(0))).union(sq.upper())
        return rig.to_interval(sq.sqrt())


def _distance(a: Profile, b: Profile, d: int) -> tuple[float, float]:
    fa, fb = exact_form(a), exact_form(b)
    with rig.precision(128):
        def f(th: Any, analytic: bool) -> Any:
            s = th.sin()
            gap = fa(s, analytic) - fb(s, analytic)
            return gap * gap * th.cos() ** (d - 2)

        sq = 2 * rho_ball(d) * rig.integrate(f, 0, rig.pi() / 2, eval_limit=10**6)
        sq = rig.arb(max(sq.lower(), rig.arb(0))).union(sq.upper())
        return rig.to_interval(sq.sqrt())


def hardmax_fiber_part(d: int, r: int, H: int, value_class: str,
                       distance: tuple[float, float]) -> Part:
    """``F(sign) - ||psi - sign||`` (Lemma P5), named ``fiber via hardmax``: rigorous when the
    distance is an arb enclosure and the hardmax fiber bound is (it always is)."""
    fb = trusted_fiber_bound(d, r, H, value_class)
    with rig.precision(128):
        lo = rig.lower_float(rig.arb(fb.enclosure[0]) - rig.arb(distance[1]))
        hi = rig.upper_float(rig.arb(fb.enclosure[1]) - rig.arb(distance[0]))
    method = (f"hardmax fiber bound {fb.enclosure[0]:.6g} minus ||psi - sign|| <= "
              f"{distance[1]:.3g} (docs/derivations/soft_targets.md, Lemma P5)")
    return Part("fiber via hardmax", (max(0.0, lo), max(0.0, hi)), fb.rigorous, method)


def profile_fiber_parts(profile: Profile, d: int, r: int, H: int, value_class: str = EQ2, *,
                        max_degree: int | None = None) -> tuple[Part, ...]:
    """The fiber parts for ``profile``: ``fiber`` (direct series, :func:`direct_fiber_part`)
    unless psi is so close to sign that its series would be very long, and ``fiber via
    hardmax`` (Lemma P5) when psi is close to sign. ``sign`` itself is the hardmax fiber bound,
    bit for bit."""
    d, r, H = check_layer(d, r, H)
    value_class = check_choice("value_class", value_class, VALUE_CLASSES)
    if sign_of(profile) is not None:  # -sign (farthest) has the same kernel
        fb = trusted_fiber_bound(d, r, H, value_class)
        return (Part("fiber", fb.enclosure, fb.rigorous, fb.method),)
    dist = distance_to_sign(profile, d)
    parts = []
    if max_degree is not None:
        parts.append(direct_fiber_part(profile, d, r, H, value_class, _odd(max_degree)))
    elif math.isnan(dist[0]) or dist[0] >= DIRECT_FROM:
        parts.append(_settled_fiber_part(profile, d, r, H, value_class))
    if not math.isnan(dist[1]) and dist[1] < HARDMAX_BELOW:
        parts.append(hardmax_fiber_part(d, r, H, value_class, dist))
    return tuple(parts)


def _settled_fiber_part(profile: Profile, d: int, r: int, H: int, value_class: str) -> Part:
    """:func:`direct_fiber_part` at the degree the truncation rule picks: from the degree
    whose tail is ``FIBER_TOL``, raised to the least degree whose tail is below a quarter of
    the printed digits' tolerance, until they are settled (``PROFILE_DEGREE_CAP`` at most)."""
    def evaluate(L: int) -> Part:
        return direct_fiber_part(profile, d, r, H, value_class, L)

    def settled(part: Part) -> bool:
        return part.truncation is None or part.truncation.settled

    def nxt(L: int, part: Part) -> int:
        tol = digits_tolerance(part.enclosure[0]) / 4
        return profile_degree(profile, d, tol) if tol > 0 else PROFILE_DEGREE_CAP

    start = profile_degree(profile, d, FIBER_TOL)
    return settle_degrees(evaluate, settled, start, max(start, PROFILE_DEGREE_CAP),
                          next_degree=nxt)[1]


def profile_lower_bound(profile: Profile, d: int, r: int, H: int, value_class: str = EQ2, *,
                        max_degree: int | None = None) -> BoundValue:
    """The profile's certified lower bound: the harmonic count (:func:`profile_bound`) and its
    fiber parts (:func:`profile_fiber_parts`), the larger lower end wins (same labels and rules
    as hardmax's :func:`~workbench.core.bounds.certified.certified_lower_bound`)."""
    d, r, H = check_layer(d, r, H)
    value_class = check_choice("value_class", value_class, VALUE_CLASSES)
    hb = profile_bound(profile, d, r, H, max_degree=max_degree, value_class=value_class)
    return BoundValue((*hb.parts, *profile_fiber_parts(profile, d, r, H, value_class,
                                                       max_degree=max_degree)))
