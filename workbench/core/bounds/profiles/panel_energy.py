"""The energies of a profile and the distances between profiles by proved panel quadrature
(docs/derivations/soft_targets.md, Lemma Q): every degree from one set of node values, instead of
one adaptive ``acb.integral`` per degree.

``eta_l = 2 rho_d int_0^{pi/2} psi(sin th) q_l(sin th) cos^{d-2} th dth`` with
``q_l = sqrt(N(d,l)) P_l`` is the panel sum (:mod:`panel_quadrature`) plus, per panel, the
Gauss-Legendre error for ``M = G |cos|_max^{d-2} sqrt(N) e^{l y_max}``: ``G`` bounds ``|psi|``
on the ellipse's box and proves psi analytic there, and ``|P_l(cos phi)| <= e^{l |Im phi|}``
(Laplace's integral) with ``sin th = cos(pi/2 - th)``. For the soft profile
``tanh(b t/sqrt2)`` G is closed-form (``<= 1`` where ``|Im w| <= pi/4``, ``<= coth(Re w)`` where
``Re w > 0``, ``w = b sin th/sqrt2``); for any other profile with an exact form it is its arb
form on the box as one complex ball, with flint's ``analytic`` flag (non-finite unless analytic:
the contract ``acb.integral`` relies on too). A degree whose error bound exceeds ``FAST_TOL`` is
left to ``acb.integral`` (the caller's fallback).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from workbench.core import rigorous as rig
from workbench.core.bounds.numerics import gegenbauer_ball as gb
from workbench.core.bounds.numerics.panel_quadrature import (
    Box,
    finest_level,
    gl_error_factor,
    panels,
)
from workbench.core.bounds.profiles.profile_form import exact_form
from workbench.core.harmonics import dim_harmonics
from workbench.core.profiles import ZERO_PROFILE, Profile, sign_of, tanh_beta

__all__ = ["FAST_TOL", "LEVELS", "PANEL_BETA", "PANEL_DEGREES", "panel_etas", "panel_gap_sq",
           "panels_pay", "tanh_bound"]

FAST_TOL = 2.0**-30  # the largest error accepted for one eta_l: it moves eta_l^2 by <= 2e-9
# below these the adaptive integrals are cheaper than the panels (benchmarks/soft_iid_speed.py):
PANEL_DEGREES = 31  # ... from this many degrees on, one panel sum for all of them pays
PANEL_BETA = 8.0  # ... and from this temperature on at once (its series runs past 31 degrees)


LEVELS = (8, 12, 17)  # the layouts tried for a profile other than tanh, coarsest first


def panels_pay(profile: Profile, degrees: int = 0) -> bool:
    """Whether the panel quadrature is used for ``profile`` when ``degrees`` degrees are asked
    for (the energies and the distances share this rule): for ``tanh(b t/sqrt2)`` from
    ``PANEL_DEGREES`` degrees or from ``b = PANEL_BETA``; for sign and the zero profile always;
    for any other profile with an exact form and a cache key always (each adaptive integral of
    a general form costs more than all the node values)."""
    b = tanh_beta(profile)
    if b is not None:
        return degrees >= PANEL_DEGREES or b >= PANEL_BETA
    return profile.has_exact_form and bool(profile.key)


_INV_SQRT2_UP, _INV_SQRT2_DOWN = 0.7071067811865476, 0.7071067811865475  # around 1/sqrt2
_PI_4_DOWN = 0.7853981633974483  # below pi/4
_UP, _DOWN = 1 + 2.0**-50, 1 - 2.0**-50  # cover a few roundings of a float product


def tanh_bound(b: float, box: Box) -> float:
    """An upper float of ``|tanh(b sin th/sqrt2)|`` on the box (``inf`` where the box is not
    proved free of poles): 1 in the strip ``|Im w| <= pi/4`` (``|Im sin(x + iy)| <= sinh y``),
    and where ``Re w >= b sin_min/sqrt2 =: u > 0`` (``Re sin(x + iy) = sin x cosh y``)
    ``coth u <= 1 + 1/u`` (``e^{2u} - 1 >= 2u``). Float products with margins for their
    rounding: the box's ends are already outward floats."""
    if b == 0:
        return 0.0
    if b * box.sinh_y * _INV_SQRT2_UP * _UP <= _PI_4_DOWN:
        return 1.0
    u = b * box.sin_min * _INV_SQRT2_DOWN * _DOWN
    return (1 + 1 / u) * _UP * _UP if u > 0 else math.inf


def _nodes(d: int, level: int, prec: int = 128) -> tuple[list[Any], list[Any]]:
    """``sin th_i`` and ``h w_i cos^{d-2} th_i`` at every node of every panel of the layout
    (cached per d, layout and precision)."""
    key = ("panel nodes", d, level, prec)
    if key not in gb.CACHE:
        with rig.precision(prec):
            sins, base = [], []
            for p in panels(prec, level):
                for th, w in zip(p.nodes, p.weights):
                    sins.append(th.sin())
                    base.append(w * th.cos() ** (d - 2))
        gb.CACHE[key] = (sins, base)
    return gb.CACHE[key]


def _row(d: int, l: int, level: int) -> Any:
    """``q_l(sin th_i)`` at every node, a 1 x n ball matrix (cached per (d, l, layout); through
    ``gb.normalized_at`` so that a fault planted there is seen)."""
    key = ("panel row", d, l, level)
    if key not in gb.CACHE:
        # Horner's rule on the monomial form multiplies the nodes' radii by up to ~2^(1.5 l)
        # and loses as many bits to cancellation; on the real nodes (no complex widening)
        # nodes at 64 + 2l bits (rounded up to a multiple of 64) and 64 + 1.5 l working bits
        # leave radii below 1e-18 up to l = 151 at d = 64 (values up to 3e27)
        sins = _nodes(d, level, 64 * -(-(64 + 2 * l) // 64))[0]
        with rig.precision(64 + (3 * l + 1) // 2):
            vals = [gb.normalized_at(d, l, s) for s in sins]
        gb.CACHE[key] = rig.arb_mat(1, len(vals), vals)
    return gb.CACHE[key]


def _box_constants(d: int, level: int) -> tuple[Any, Any]:
    """Per panel and box (numpy arrays): ``log`` of an upper float of
    ``h factor(rho) |cos|_max^{d-2}`` and of ``e^{y_max}`` (cached per d and layout)."""
    key = ("panel boxes", d, level)
    if key not in gb.CACHE:
        with rig.precision(128):
            log_a = [[math.log(rig.upper_float(rig.arb(p.h) * rig.arb(gl_error_factor(box.rho))
                                               * rig.arb(box.cos_max) ** (d - 2)))
                      for box in p.boxes] for p in panels(128, level)]
            log_e = [[rig.upper_float(box.y_max) for box in p.boxes] for p in panels(128, level)]
        gb.CACHE[key] = (np.array(log_a), np.array(log_e))
    return gb.CACHE[key]


def _errors(d: int, level: int, log_g: Any, powers: list[int], scales: list[float]
            ) -> list[float]:
    """For each power l: an upper bound of ``scale sum_p min_rho h factor G e^{l y_max}
    |cos|_max^{d-2}`` (``log_g``: log of G per panel and box, ``-inf`` for 0, ``inf`` where
    unproved). Evaluated in floats from upper floats of every factor, and doubled: the
    rounding of ``log``, ``exp`` and the sum is below ``1e-12`` relative."""
    log_a, log_e = _box_constants(d, level)
    logs = log_a[None] + log_g[None] + np.array(powers, dtype=float)[:, None, None] * log_e[None]
    best = logs.min(axis=2)  # the best ellipse per panel
    with np.errstate(over="ignore"):
        total = np.exp(best).sum(axis=1)
    return [2.0 * float(t) * s for t, s in zip(total, scales)]


def _kind(profile: Profile) -> tuple[str, float]:
    """``("tanh", b)``, ``("const", c)`` (the zero profile, ``+-sign``: the constant c on
    ``(0, pi/2]``) or ``("form", 0)``."""
    b = tanh_beta(profile)
    if b is not None:
        return "tanh", b
    if profile.key == ZERO_PROFILE.key:
        return "const", 0.0
    s = sign_of(profile)
    if s is not None:
        return "const", s
    return "form", 0.0


def _tanh_at_nodes(b: float, d: int, level: int) -> list[Any]:
    """``tanh(b sin th_i/sqrt2)`` at the nodes of the layout."""
    with rig.precision(128):
        w_scale = rig.arb(b) / rig.arb(2).sqrt()
        return [(w_scale * s).tanh() for s in _nodes(d, level)[0]]


_SPLITS = 3  # a box whose ball evaluation is not finite is quartered up to this many times


def _form_at_nodes(form: Any, d: int, level: int) -> list[Any]:
    """A profile's arb form at the nodes of the layout (real balls)."""
    with rig.precision(128):
        return [form(rig.acb(s), False).real for s in _nodes(d, level)[0]]


def _form_bound(form: Any, box: Box) -> float:
    """An upper float of ``|psi(sin th)|`` on the box, from the arb form on the box as complex
    balls with ``analytic`` true: the whole box, or where that is not finite (not proved
    analytic, or the ball's wrapping reaches a branch cut) the largest over its quarters,
    recursively (``inf`` where a piece stays unproved after ``_SPLITS`` quarterings)."""
    with rig.precision(128):
        def bound(x_lo: float, x_hi: float, y_lo: float, y_hi: float, splits: int) -> float:
            z = rig.acb(rig.arb(x_lo).union(rig.arb(x_hi)), rig.arb(y_lo).union(rig.arb(y_hi)))
            val = form(z.sin(), True)
            if val.is_finite():
                return rig.upper_float(abs(val))
            if splits == 0:
                return math.inf
            xm, ym = (x_lo + x_hi) / 2, (y_lo + y_hi) / 2  # any split point covers the box
            return max(bound(a, b, c, e, splits - 1)
                       for a, b in ((x_lo, xm), (xm, x_hi)) for c, e in ((y_lo, ym), (ym, y_hi)))

        y = rig.upper_float(box.y_max)
        return bound(rig.lower_float(box.x_lo), rig.upper_float(box.x_hi), -y, y, _SPLITS)


def _form_bounds(form: Any, boxes: tuple[Box, ...]) -> list[float]:
    """:func:`_form_bound` on a panel's boxes, smallest ellipse first; the boxes are nested, so
    once one is unproved the larger ones are left unproved (``inf``: never used) unevaluated."""
    out: list[float] = []
    for box in boxes:
        out.append(_form_bound(form, box) if not out or math.isfinite(out[-1]) else math.inf)
    return out


def _state(profile: Profile, d: int, level: int) -> tuple[Any, Any, Any]:
    """``psi(sin th_i)`` at the nodes of the layout and ``h w_i cos^{d-2} th_i psi`` (n x 1 ball
    matrices), and the log of a bound of ``|psi|`` per panel and box (cached per profile key, d
    and layout)."""
    key = ("panel state", profile.key, d, level)
    if key not in gb.CACHE:
        kind, b = _kind(profile)
        sins, base = _nodes(d, level)
        boxes = [p.boxes for p in panels(128, level)]
        with rig.precision(128):
            if kind == "tanh":
                tv = _tanh_at_nodes(b, d, level)
                bounds = [[tanh_bound(b, box) for box in row] for row in boxes]
            elif kind == "const":
                tv = [rig.arb(b)] * len(sins)
                bounds = [[abs(b)] * len(row) for row in boxes]
            else:
                form = exact_form(profile)
                tv = _form_at_nodes(form, d, level)
                bounds = [_form_bounds(form, row) for row in boxes]
            v = [w * t for w, t in zip(base, tv)]
        with np.errstate(divide="ignore"):
            log_g = np.log(np.array(bounds))
        gb.CACHE[key] = (rig.arb_mat(len(tv), 1, tv), rig.arb_mat(len(v), 1, v), log_g)
    return gb.CACHE[key]


def _levels(profiles: list[Profile]) -> tuple[int, ...]:
    """The layouts to try: for a tanh profile the one of its temperature (the largest, with
    several), for constants the coarsest, else every layout, coarsest first."""
    kinds = [_kind(p) for p in profiles]
    temps = [b for kind, b in kinds if kind == "tanh"]
    if temps:
        return (finest_level(max(temps)),)
    if all(kind == "const" for kind, _ in kinds):
        return LEVELS[:1]
    return LEVELS


def panel_etas(profile: Profile, d: int, degrees: list[int]) -> dict[int, Any]:
    """Balls of ``eta_l(psi)`` for the odd ``l`` in ``degrees`` and of ``E psi^2`` for
    ``l = 0``, each with its proved quadrature error, on the coarsest layout of :func:`_levels`
    that encloses every degree asked for within FAST_TOL (else the one that encloses most); a
    degree whose error exceeds FAST_TOL is omitted."""
    out: dict[int, Any] = {}
    with rig.precision(128):
        rho2 = 2 * gb.rho_ball(d)
        odd = [l for l in degrees if l > 0]
        scales = [rig.upper_float(rho2 * rig.arb(dim_harmonics(d, l)).sqrt()) for l in odd]
        best: tuple[int, int, list[float], float] | None = None  # (count, level, errs, e0)
        for level in _levels([profile]):
            log_g = _state(profile, d, level)[2]
            errs = _errors(d, level, log_g, odd, scales)
            e0 = _errors(d, level, 2 * log_g, [0], [rig.upper_float(rho2)])[0]
            count = sum(e <= FAST_TOL for e in [*errs, e0])
            if best is None or count > best[0]:
                best = (count, level, errs, e0)
            if count == len(odd) + 1:
                break
        assert best is not None
        _, level, errs, e0 = best
        tv, v, _ = _state(profile, d, level)
        for l, e in zip(odd, errs):
            if e <= FAST_TOL:
                out[l] = rho2 * (_row(d, l, level) * v)[0, 0] + rig.ball(0, e)
        if 0 in degrees and e0 <= FAST_TOL:
            out[0] = rho2 * (v.transpose() * tv)[0, 0] + rig.ball(0, e0)
    return out


def panel_gap_sq(a: Profile, b: Profile, d: int, tol: float = 2.0**-50) -> Any | None:
    """A ball of ``||psi_a - psi_b||^2 = 2 rho_d int_0^{pi/2} (psi_a - psi_b)(sin th)^2
    cos^{d-2} th dth`` from the node values (``|psi_a - psi_b| <= G_a + G_b`` on each box) on
    the coarsest layout of :func:`_levels` whose error is within ``tol``, or None. Step S6's
    ``delta^2`` is the gap to sign, Lemma T1's norms the gaps to the zero profile."""
    with rig.precision(128):
        rho2 = 2 * gb.rho_ball(d)
        for level in _levels([a, b]):
            t1, v1, g1 = _state(a, d, level)
            t2, v2, g2 = _state(b, d, level)
            e = _errors(d, level, 2 * np.logaddexp(g1, g2), [0], [rig.upper_float(rho2)])[0]
            if e <= tol:
                # sum_i h w_i cos^{d-2} th_i (x_i - y_i)^2 = (v1 - v2)^T (t1 - t2)
                return rho2 * ((v1 - v2).transpose() * (t1 - t2))[0, 0] + rig.ball(0, e)
    return None
