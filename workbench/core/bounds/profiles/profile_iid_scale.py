"""The i.i.d. bound for any profile target (docs/derivations/soft_targets.md, step T, "Any
profile"): a mixture over the profile's scales.

A profile target ``f = (x1 + x2)/2 + psi(<y, x1 - x2>/sqrt2) (x1 - x2)/2`` has, on keys at
``<x1, x2> = t``, the D_2 profile ``psi_t(s) = psi(sqrt(1 - t) s)``, so every model has
``err >= E_t[(1 - t) B(psi_t)]`` as for soft-nearest. The cells are Lemma T1's chords
(:func:`~workbench.core.bounds.profiles.profile_iid.chord_terms`) in the scale ``c = sqrt(1-t)``,
the energies' curvature in c bounded by ``psi'`` and ``psi''`` as balls over pieces of theta
(:func:`scale_curvature`). Without soft-nearest's monotonicity in the temperature, a cell
without a finite curvature bound takes its larger end as reference and bounds
``||psi_t - psi_ref||`` for every t of the cell at once (:func:`scale_gap`: the integrand
``(psi(C s) - psi(c_ref s))^2 cos^{d-2}`` with the whole scale interval C as one ball on each of
``PIECES`` pieces of ``s = sin(theta)``, an upper Riemann sum);
``||psi_t + psi_ref||/2 <= ||psi_ref|| + gap/2``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from workbench.core import rigorous as rig
from workbench.core.bounds import EQ2
from workbench.core.bounds.numerics.gegenbauer_ball import rho_ball
from workbench.core.bounds.profiles.profile_fiber import profile_distance, profile_lower_bound
from workbench.core.bounds.profiles.profile_form import exact_form, sympy_to_arb
from workbench.core.bounds.profiles.profile_iid import (
    CELLS,
    ZERO_PROFILE,
    bins_of,
    check_cell_args,
    chord_terms,
    grid,
    mixture_value,
    soft_iid_bound,
    tanh_terms,
)
from workbench.core.bounds.value import BoundValue
from workbench.core.profiles import Profile, tanh_beta
from workbench.core.quadrature import gauss_legendre

__all__ = ["PIECES", "check_scalable", "profile_iid_bins", "profile_iid_bound", "profile_iid_cells",
           "scale_gap", "scaled_profile"]

PIECES = 256  # pieces of theta in [0, pi/2] for the scale-interval enclosure
CURVATURE_PIECES = 64  # pieces of theta for the curvature bound (a second-order term)
_GRID = 2001  # points of [0, sqrt2] where a profile must be finite and within [-1, 1]


def scaled_profile(profile: Profile, c: float) -> Profile:
    """``psi(c .)``: the D_2 profile of the target on keys with ``sqrt(1 - <x1, x2>) = c``."""
    form = None
    if profile.has_exact_form:
        base, cb = exact_form(profile), rig.arb(c)
        form = lambda z, analytic: base(z * cb, analytic)  # noqa: E731
    return Profile(f"{profile.label} at scale {c:.6g}", lambda s: profile.psi(c * s), arb=form,
                   key=(*profile.key, "scale", c) if profile.key else ())


def check_scalable(profile: Profile, label: str) -> None:
    """Refuse a profile that is not a profile on ``[-sqrt2, sqrt2]``, where i.i.d. keys
    evaluate it (``sqrt(1 - t) <= sqrt2``): finite, odd, within [-1, 1] (a numeric check)."""
    s = np.linspace(0.0, math.sqrt(2), _GRID)
    with np.errstate(all="ignore"):
        v = np.asarray(profile.psi(s), dtype=float)
        odd = np.abs(v + np.asarray(profile.psi(-s), dtype=float)) <= 1e-9
    bad = ~np.isfinite(v) | (np.abs(v) > 1 + 1e-12) | ~odd
    if bad.any():
        at, val = float(s[np.argmax(bad)]), float(v[np.argmax(bad)])
        raise ValueError(f"--points iid with --target {label}: on i.i.d. keys the profile is "
                         f"evaluated on [-sqrt2, sqrt2] (psi(sqrt(1-t) s)), and psi({at:.4g}) = "
                         f"{val:.6g} is not in [-1, 1] or psi is not odd there; use --points "
                         "orthonormal")


def scale_gap(profile: Profile, c_lo: float, c_hi: float, c_ref: float, d: int
              ) -> tuple[float, bool]:
    """An upper bound of ``sup_{c in [c_lo, c_hi]} ||psi(c .) - psi(c_ref .)||`` in ``L^2`` of
    the law of ``s = <y, w>``, and whether it is proved (exact form: the ball enclosure of the
    module note; else the largest of 9 scales by 256-node Gauss-Legendre, an estimate)."""

    if not profile.has_exact_form:
        x, w = gauss_legendre(256)
        th = (x + 1) * (math.pi / 4)
        wt = w * (math.pi / 4) * np.cos(th) ** (d - 2) * 2 * math.exp(
            math.lgamma(d / 2) - math.lgamma((d - 1) / 2)) / math.sqrt(math.pi)
        ref = np.asarray(profile.psi(c_ref * np.sin(th)), dtype=float)
        worst = max(float(wt @ (np.asarray(profile.psi(c * np.sin(th)), dtype=float) - ref) ** 2)
                    for c in np.linspace(c_lo, c_hi, 9))
        return math.sqrt(worst), False
    form, dform = exact_form(profile), _derivative_form(profile)
    with rig.precision(128):
        C = rig.arb(c_lo).union(rig.arb(c_hi))
        ref = rig.arb(c_ref)
        half = rig.arb(rig.upper_float(abs(C - ref)))  # max |c - c_ref| over C
        half_pi = rig.pi() / 2
        total = rig.arb(0)
        for k in range(PIECES):
            th = (half_pi * k / PIECES).union(half_pi * (k + 1) / PIECES)
            s = th.sin()
            g = form(rig.acb(s * C), False) - form(rig.acb(s * ref), False)
            bound = rig.upper_float(abs(g))
            if dform is not None:  # mean value theorem in the scale
                slope = abs(dform(rig.acb(s * C.union(ref)), False))
                bound = min(bound, rig.upper_float(half * s.upper() * slope))
            val = rig.arb(bound) ** 2 * th.cos() ** (d - 2)
            total += rig.arb(rig.upper_float(val)) * (half_pi / PIECES)
        sq = 2 * rho_ball(d) * total
        return rig.upper_float(sq.sqrt()), bool(sq.is_finite())


_FORMS: dict[tuple[Any, ...], Any] = {}


def _derivative_form(profile: Profile, order: int = 1) -> Any:
    """``psi'`` (``order`` 2: ``psi''``) on balls, from the profile's sympy form (sympy
    differentiates it, once per profile key); None for a profile with an arb form only."""
    if profile.sympy is None:
        return None
    key = (*profile.key, "derivative", order)
    if profile.key and key in _FORMS:
        return _FORMS[key]
    import sympy as sp

    t = sp.Symbol("t", real=True)
    form = sympy_to_arb(sp.diff(profile.sympy(t), t, order), t)
    if profile.key:
        _FORMS[key] = form
    return form


def scale_curvature(profile: Profile, c_lo: float, c_hi: float, d: int) -> Any:
    """``M >= sup_{c in [c_lo, c_hi]} sum_l |d^2 eta_l(psi(c .))^2 / dc^2|``:
    ``2 (||s psi'(c s)||^2 + ||psi(c .)|| ||s^2 psi''(c s)||)`` (Bessel and Cauchy-Schwarz, as
    for soft-nearest), each supremum over c bounded by an upper Riemann sum over
    ``CURVATURE_PIECES`` pieces of theta with C as one ball; None without a sympy form or
    where a sum is not finite."""
    form, d1, d2 = exact_form(profile), _derivative_form(profile), _derivative_form(profile, 2)
    if d1 is None or d2 is None:
        return None
    with rig.precision(128):
        C = rig.arb(c_lo).union(rig.arb(c_hi))
        half_pi = rig.pi() / 2
        sums = [rig.arb(0), rig.arb(0), rig.arb(0)]
        for k in range(CURVATURE_PIECES):
            th = (half_pi * k / CURVATURE_PIECES).union(half_pi * (k + 1) / CURVATURE_PIECES)
            s = th.sin()
            u = rig.acb(s * C)
            weight = rig.arb(rig.upper_float(th.cos() ** (d - 2))) * (half_pi / CURVATURE_PIECES)
            for i, val in enumerate((form(u, False), s * d1(u, False), s * s * d2(u, False))):
                top = rig.arb(rig.upper_float(abs(val)))
                sums[i] += top * top * weight
        psi2, first, second = (2 * rho_ball(d) * x for x in sums)
        m = 2 * (first + psi2.sqrt() * second.sqrt())
        return m if m.is_finite() else None


def _scale_terms(profile: Profile, d: int, r: int, H: int, value_class: str, cells: int
                 ) -> tuple[list[tuple[float, float, Any, Any]], bool]:
    """The scale mixture's cell terms: the D_2 bound at the grid scales
    ``c_k = sqrt(1 - sin theta_k)``, each cell the chord (:func:`chord_terms`, the curvature by
    :func:`scale_curvature`) or its larger end as reference with the scale gap
    (``||psi_t + psi_ref||/2 <= ||psi_ref|| + gap/2``)."""
    scales, ends = grid(1.0, d, cells)
    refs_p = [scaled_profile(profile, c) for c in scales]
    bvs = [profile_lower_bound(p, d, r, H, value_class) for p in refs_p]
    exact = profile.has_exact_form

    def size(p: Profile) -> float:  # ||psi_ref|| (numpy only: an estimate, psi odd)
        return profile_distance(p, ZERO_PROFILE, d)[1] if exact else scale_gap(
            p, 0.0, 0.0, 1.0, d)[0]

    refs: list[list[tuple[BoundValue, float]]] = []
    curvatures: list[Any] = []
    for k in range(cells):
        curvature = scale_curvature(profile, scales[k + 1], scales[k], d) if exact else None
        curvatures.append(curvature)
        if curvature is not None:  # the chord: its loss is of second order
            refs.append([])
            continue
        gap, proved = scale_gap(profile, scales[k + 1], scales[k], scales[k], d)
        gap = gap if proved or not exact else math.inf  # the route then adds nothing
        with rig.precision(128):  # the drop rounded up
            drop = rig.upper_float(rig.arb(gap) * (rig.arb(size(refs_p[k])) + rig.arb(gap) / 2))
        refs.append([(bvs[k], drop if math.isfinite(gap) else math.inf)])
    rigorous = exact and all(bv.rigorous for bv in bvs)
    return chord_terms(1.0, scales, ends, bvs, refs, curvatures, d), rigorous


def profile_iid_cells(profile: Profile, d: int, r: int, H: int, value_class: str = EQ2, *,
                      cells: int = CELLS, label: str = ""
                      ) -> tuple[list[tuple[float, float, Any, Any]], bool]:
    """The cell terms of the scale mixture (``tanh_terms``'s layout) and whether they are
    proved: soft-nearest's rule for a tanh profile, else the scale cells of the module note."""
    d, r, H, value_class, cells = check_cell_args(d, r, H, value_class, cells)
    beta = tanh_beta(profile)
    if beta is not None:
        return tanh_terms(beta, d, r, H, value_class, cells)
    check_scalable(profile, label or profile.label)
    return _scale_terms(profile, d, r, H, value_class, cells)


def profile_iid_bound(profile: Profile, d: int, r: int, H: int, value_class: str = EQ2, *,
                      cells: int = CELLS, label: str = "") -> BoundValue:
    """A lower bound on the error of every model of the class on i.i.d. keys for the profile
    target of ``profile`` (N = 2), one part ``i.i.d. mixture`` (:func:`profile_iid_cells`).
    Proved when the profile has an exact form."""
    beta = tanh_beta(profile)
    if beta is not None:
        return soft_iid_bound(beta, d, r, H, value_class, cells=cells)
    terms, rigorous = profile_iid_cells(profile, d, r, H, value_class, cells=cells, label=label)
    return mixture_value(terms, rigorous, "mixture over the profile's scales psi(sqrt(1-t) s)")


def profile_iid_bins(profile: Profile, d: int, r: int, H: int, value_class: str = EQ2, *,
                     bins: int = 6, cells: int = CELLS) -> list[tuple[float, float, float]]:
    """:func:`profile_iid_bound` per bin of t (``(t_lo, t_hi, lower)``, as ``soft_iid_bins``)."""
    return bins_of(profile_iid_cells(profile, d, r, H, value_class, cells=cells)[0], bins)
