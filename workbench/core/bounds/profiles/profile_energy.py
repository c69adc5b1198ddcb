"""The harmonic energies ``eta_l(psi)^2`` of an N = 2 target profile (docs/derivations/
soft_targets.md, step S3): the squared coefficients of an odd ``psi`` on the normalised
Gegenbauer polynomials of S^{d-1},

    eta_l(psi) = E_t[psi(t) sqrt(N(d,l)) P_l(t)] = 2 rho_d int_0^{pi/2} psi(sin th)
                 sqrt(N(d,l)) P_l(sin th) cos(th)^(d-2) dth          (l odd; 0 for l even),

with ``t = sin th`` (the weight ``(1-t^2)^((d-3)/2) dt`` becomes ``cos(th)^(d-2) dth``, analytic:
no branch point at t = 1) and ``rho_d = Gamma(d/2)/(sqrt(pi) Gamma((d-1)/2))``. Integrating over
``(0, 1]`` only uses oddness, so ``sign`` is the constant 1 there (analytic).

A profile with an exact form (``Profile.arb`` or ``Profile.sympy``) gets arb-ball enclosures by
``acb.integral`` (:mod:`workbench.core.rigorous`): ``rigorous = True``. A numpy-only profile gets
Gauss-Legendre values in ``th`` (the same formula), ``rigorous = False``, with the gap to a rule
of half the nodes as its error estimate (not a bound).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.core.bounds.numerics import gegenbauer_ball as gb
from workbench.core.bounds.profiles import panel_energy
from workbench.core.bounds.profiles.profile_form import exact_form
from workbench.core.harmonics import normalized_gegenbauer
from workbench.core.profiles import Profile
from workbench.core.quadrature import gauss_legendre
from workbench.core.validation import check_dim, check_int

__all__ = ["ProfileEnergies", "clear_cache", "profile_energies"]

_QUAD_NODES = 1024
# the integrator's goal (the ball stays a proved enclosure; a tighter goal only costs time):
# 2^-60 keeps the energies' widths at the float rounding of their ends, 2 to 10 x faster
# than the working precision's default (benchmarks/soft_bound_speed.py)
REL_TOL = 2.0**-60
_CACHE = gb.CACHE  # (profile key, d, l) -> eta_l ball or float, with the polynomials


def clear_cache() -> None:
    """Forget the cached balls (they are keyed by the profile's ``key``, d and l): for a test
    that plants a fault in the integrand and must see it recomputed."""
    _CACHE.clear()


@dataclass(frozen=True)
class ProfileEnergies:
    """``lo[i] <= eta_l^2 <= hi[i]`` for the odd ``l = 2i + 1 <= L`` and ``total`` enclosing
    ``E psi(t)^2``. ``rigorous``: proved enclosures (arb); otherwise quadrature values
    (``lo == hi``) with ``error_estimate`` the largest gap to a coarser rule."""

    d: int
    L: int
    lo: tuple[float, ...]
    hi: tuple[float, ...]
    total: tuple[float, float]
    rigorous: bool
    method: str
    error_estimate: float = 0.0


def _eta_ball(profile: Profile, form: Any, d: int, l: int) -> Any:
    """A real ball containing ``eta_l(psi)`` (``l = 0``: ``E psi^2``)."""
    key = (profile.key, d, l, "arb")
    if profile.key and key in _CACHE:
        return _CACHE[key]
    from workbench.core.rigorous import integrate, pi, precision

    with precision(gb.node_precision(l)):
        cos_pow = d - 2
        if l == 0:
            def f(th: Any, analytic: bool) -> Any:
                p = form(th.sin(), analytic)
                return p * p * th.cos() ** cos_pow
        else:
            def f(th: Any, analytic: bool) -> Any:
                s = th.sin()
                return form(s, analytic) * gb.normalized_at(d, l, s) * th.cos() ** cos_pow
        val = 2 * gb.rho_ball(d) * integrate(f, 0, pi() / 2, eval_limit=10**6,
                                      deg_limit=64 + 4 * l, rel_tol=REL_TOL)
    if profile.key:
        _CACHE[key] = val
    return val


def _energy_interval(profile: Profile, form: Any, d: int, l: int) -> tuple[float, float]:
    """Floats ``lo <= eta_l^2 <= hi`` from :func:`_eta_ball` (cached beside it)."""
    key = (profile.key, d, l, "squared")
    if profile.key and key in _CACHE:
        return _CACHE[key]
    out = _square_interval(_eta_ball(profile, form, d, l))
    if profile.key:
        _CACHE[key] = out
    return out


def _square_interval(ball: Any) -> tuple[float, float]:
    from workbench.core.rigorous import arb, lower_float, upper_float

    a_lo, a_hi = lower_float(ball), upper_float(ball)
    m_hi = max(abs(a_lo), abs(a_hi))
    m_lo = 0.0 if a_lo <= 0 <= a_hi else min(abs(a_lo), abs(a_hi))
    return lower_float(arb(m_lo) * arb(m_lo)), upper_float(arb(m_hi) * arb(m_hi))


def _quadrature(profile: Profile, d: int, L: int, n: int) -> tuple[np.ndarray, float]:
    x, w = gauss_legendre(n)
    th = (x + 1) * (math.pi / 4)  # [-1, 1] -> [0, pi/2]
    wt = w * (math.pi / 4) * np.cos(th) ** (d - 2)
    s = np.sin(th)
    psi = np.asarray(profile.psi(s), dtype=np.float64)
    rho = math.exp(math.lgamma(d / 2) - math.lgamma((d - 1) / 2)) / math.sqrt(math.pi)
    eta = 2 * rho * (normalized_gegenbauer(d, L, s) @ (wt * psi))
    return eta, 2 * rho * float(wt @ (psi * psi))


def _panel_energies(profile: Profile, d: int, L: int) -> None:
    """Fill the cache with the balls of the panel quadrature
    (:mod:`workbench.core.bounds.profiles.panel_energy`, all degrees from one set of node values)
    where
    :func:`~workbench.core.bounds.profiles.panel_energy.panels_pay` says so; a degree it cannot
    enclose
    tightly is left to ``acb.integral``."""
    if not panel_energy.panels_pay(profile, L):
        return
    todo = [l for l in [0, *range(1, L + 1, 2)] if (profile.key, d, l, "arb") not in _CACHE]
    if todo:
        for l, val in panel_energy.panel_etas(profile, d, todo).items():
            _CACHE[(profile.key, d, l, "arb")] = val


def profile_energies(profile: Profile, d: int, L: int) -> ProfileEnergies:
    """Enclosures of ``eta_l(psi)^2`` for the odd ``l <= L`` and of ``E psi^2`` (see the module
    note); rigorous when the profile has an exact form."""
    d = check_dim(d)
    L = check_int("max_degree", L, lo=1)
    degrees = range(1, L + 1, 2)
    if profile.has_exact_form:
        _panel_energies(profile, d, L)
        form = exact_form(profile)
        pairs = [_energy_interval(profile, form, d, l) for l in degrees]
        from workbench.core.rigorous import lower_float, upper_float

        tot = _eta_ball(profile, form, d, 0)
        total = (max(0.0, lower_float(tot)), upper_float(tot))
        return ProfileEnergies(d, L, tuple(p[0] for p in pairs), tuple(p[1] for p in pairs),
                               total, True, "arb balls (acb.integral), odd degrees "
                               f"1..{L}")
    n = max(_QUAD_NODES, 4 * L)
    eta, tot = _quadrature(profile, d, L, n)
    eta_c, tot_c = _quadrature(profile, d, L, n // 2)
    e2 = tuple(float(v) for v in eta[1::2] ** 2)
    err = float(max(np.abs(eta[1::2] - eta_c[1::2]).max(), abs(tot - tot_c)))
    return ProfileEnergies(d, L, e2, e2, (tot, tot), False,
                           f"Gauss-Legendre ({n} nodes in the angle; not rigorous)", err)
