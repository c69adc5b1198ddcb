"""The energies of the soft profile ``psi_b(t) = tanh(b t/sqrt2)`` by proved
panel quadrature (docs/derivations/soft_targets.md, Lemma Q): every degree from one set of node
values, instead of one adaptive ``acb.integral`` per degree.

``eta_l = 2 rho_d int_0^{pi/2} tanh(b sin th/sqrt2) q_l(sin th) cos^{d-2} th dth`` with
``q_l = sqrt(N(d,l)) P_l`` is the panel sum (:mod:`panel_quadrature`) plus, per panel, the
Gauss-Legendre error for ``M = G |cos|_max^{d-2} sqrt(N) e^{l y_max}``: ``G`` bounds ``|tanh|``
on the ellipse's box (``<= 1`` where ``|Im w| <= pi/4``, ``<= coth(Re w)`` where ``Re w > 0``,
``w = b sin th/sqrt2``; either proves tanh analytic there) and ``|P_l(cos phi)| <= e^{l |Im phi|}``
(Laplace's integral) with ``sin th = cos(pi/2 - th)``. A degree whose error bound exceeds
``FAST_TOL`` is left to ``acb.integral`` (the caller's fallback).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from workbench.core import rigorous as rig
from workbench.core.bounds import gegenbauer_ball as gb
from workbench.core.bounds.panel_quadrature import Box, finest_level, gl_error_factor, panels
from workbench.core.harmonics import dim_harmonics

__all__ = ["FAST_TOL", "PANEL_BETA", "PANEL_DEGREES", "panels_pay", "tanh_bound", "tanh_etas",
           "tanh_gap_sq"]

FAST_TOL = 2.0**-30  # the largest error accepted for one eta_l: it moves eta_l^2 by <= 2e-9
# below these the adaptive integrals are cheaper than the panels (benchmarks/soft_iid_speed.py):
PANEL_DEGREES = 31  # ... from this many degrees on, one panel sum for all of them pays
PANEL_BETA = 8.0  # ... and from this temperature on at once (its series runs past 31 degrees)


def panels_pay(b: float, degrees: int = 0) -> bool:
    """Whether the panel quadrature is used for ``psi_b`` when ``degrees`` degrees are asked
    for (the energies and step S6's gap to sign share this rule)."""
    return degrees >= PANEL_DEGREES or b >= PANEL_BETA


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


def _state(b: float, d: int, level: int) -> tuple[Any, Any, Any]:
    """``psi_b = tanh(b sin th_i/sqrt2)`` at the nodes of the layout and ``h w_i cos^{d-2} th_i
    psi_b`` (n x 1 ball matrices), and the log of a bound of ``|psi_b|`` per panel and box
    (cached per (b, d, layout)); ``b = 0`` is the zero profile and ``b = inf`` is sign (the
    constant 1 on ``(0, pi/2]``)."""
    key = ("panel state", b, d, level)
    if key not in gb.CACHE:
        sins, base = _nodes(d, level)
        with rig.precision(128):
            if math.isinf(b):
                tv = [rig.arb(1)] * len(sins)
            else:
                w_scale = rig.arb(b) / rig.arb(2).sqrt()
                tv = [(w_scale * s).tanh() for s in sins]
            v = [w * t for w, t in zip(base, tv)]
        bound = 1.0 if math.isinf(b) else None
        with np.errstate(divide="ignore"):
            log_g = np.log(np.array([[bound or tanh_bound(b, box) for box in p.boxes]
                                     for p in panels(128, level)]))
        gb.CACHE[key] = (rig.arb_mat(len(tv), 1, tv), rig.arb_mat(len(v), 1, v), log_g)
    return gb.CACHE[key]


def tanh_etas(b: float, d: int, degrees: list[int]) -> dict[int, Any]:
    """Balls of ``eta_l(psi_b)`` for the odd ``l`` in ``degrees`` and of ``E psi_b^2`` for
    ``l = 0``, each with its proved quadrature error, on the panels of ``finest_level(b)``; a
    degree whose error exceeds FAST_TOL is omitted."""
    level = finest_level(b)
    tv, v, log_g = _state(b, d, level)
    out: dict[int, Any] = {}
    with rig.precision(128):
        rho2 = 2 * gb.rho_ball(d)
        odd = [l for l in degrees if l > 0]
        if odd:
            scales = [rig.upper_float(rho2 * rig.arb(dim_harmonics(d, l)).sqrt()) for l in odd]
            errs = _errors(d, level, log_g, odd, scales)
            for l, e in zip(odd, errs):
                if e <= FAST_TOL:
                    out[l] = rho2 * (_row(d, l, level) * v)[0, 0] + rig.ball(0, e)
        if 0 in degrees:
            e = _errors(d, level, 2 * log_g, [0], [rig.upper_float(rho2)])[0]
            if e <= FAST_TOL:
                out[0] = rho2 * (v.transpose() * tv)[0, 0] + rig.ball(0, e)
    return out


def tanh_gap_sq(b1: float, b2: float, d: int, tol: float = 2.0**-50) -> Any | None:
    """A ball of ``||psi_b1 - psi_b2||^2 = 2 rho_d int_0^{pi/2} (psi_b1 - psi_b2)(sin th)^2
    cos^{d-2} th dth`` from the node values on the panels of ``finest_level`` of the larger
    finite b (``b`` in ``[0, inf]``: 0 the zero profile, inf sign, which has no poles;
    ``|psi_b1 - psi_b2| <= G_1 + G_2`` on each box), or None when the quadrature error exceeds
    ``tol``. Step S6's ``delta^2`` is ``b2 = inf``."""
    level = finest_level(max((b for b in (b1, b2) if not math.isinf(b)), default=math.inf))
    t1, v1, g1 = _state(b1, d, level)
    t2, v2, g2 = _state(b2, d, level)
    with rig.precision(128):
        rho2 = 2 * gb.rho_ball(d)
        e = _errors(d, level, 2 * np.logaddexp(g1, g2), [0], [rig.upper_float(rho2)])[0]
        if e > tol:
            return None
        # sum_i h w_i cos^{d-2} th_i (x_i - y_i)^2 = (v1 - v2)^T (t1 - t2)
        return rho2 * ((v1 - v2).transpose() * (t1 - t2))[0, 0] + rig.ball(0, e)
