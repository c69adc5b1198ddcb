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
from workbench.core.bounds.panel_quadrature import Box, gl_error_factor, panels
from workbench.core.harmonics import dim_harmonics

__all__ = ["FAST_TOL", "PANEL_BETA", "PANEL_DEGREES", "panels_pay", "tanh_bound", "tanh_etas",
           "tanh_sign_gap_sq"]

FAST_TOL = 2.0**-30  # the largest error accepted for one eta_l: it moves eta_l^2 by <= 2e-9
# below these the adaptive integrals are cheaper than the panels (benchmarks/soft_iid_speed.py):
PANEL_DEGREES = 31  # ... from this many degrees on, one panel sum for all of them pays
PANEL_BETA = 8.0  # ... and from this temperature on at once (its series runs past 31 degrees)


def panels_pay(b: float, degrees: int = 0) -> bool:
    """Whether the panel quadrature is used for ``psi_b`` when ``degrees`` degrees are asked
    for (the energies and step S6's gap to sign share this rule)."""
    return degrees >= PANEL_DEGREES or b >= PANEL_BETA


def tanh_bound(b: float, box: Box) -> float:
    """An upper float of ``|tanh(b sin th/sqrt2)|`` on the box (``inf`` where the box is not
    proved free of poles): 1 in the strip ``|Im w| <= pi/4``, ``coth(Re w)`` where
    ``Re w >= b min(sin x)/sqrt2 > 0`` (``Re sin(x + iy) = sin x cosh y``)."""
    if b == 0:
        return 0.0
    with rig.precision(128):
        w_scale = rig.arb(b) / rig.arb(2).sqrt()
        if rig.upper_float(w_scale * box.y_max.sinh()) <= rig.lower_float(rig.pi() / 4):
            return 1.0
        if rig.lower_float(box.x_lo) > 0 and rig.upper_float(box.x_hi) < rig.lower_float(rig.pi()):
            re = min(rig.lower_float(box.x_lo.sin()), rig.lower_float(box.x_hi.sin()))
            re_w = rig.lower_float(w_scale * rig.arb(re))
            if re_w > 0:
                return rig.upper_float(1 / rig.arb(re_w).tanh())
    return math.inf


def _nodes(d: int, prec: int = 128) -> tuple[list[Any], list[Any]]:
    """``sin th_i`` and ``h w_i cos^{d-2} th_i`` at every node of every panel (cached per d and
    precision)."""
    key = ("panel nodes", d, prec)
    if key not in gb.CACHE:
        with rig.precision(prec):
            sins, base = [], []
            for p in panels(prec):
                for th, w in zip(p.nodes, p.weights):
                    sins.append(th.sin())
                    base.append(w * th.cos() ** (d - 2))
        gb.CACHE[key] = (sins, base)
    return gb.CACHE[key]


def _row(d: int, l: int) -> Any:
    """``q_l(sin th_i)`` at every node, a 1 x n ball matrix (cached per (d, l); through
    ``gb.normalized_at`` so that a fault planted there is seen)."""
    key = ("panel row", d, l)
    if key not in gb.CACHE:
        # Horner's rule on the monomial form multiplies the nodes' radii by up to ~2^(1.5 l)
        # and loses as many bits to cancellation; on the real nodes (no complex widening)
        # nodes at 64 + 2l bits (rounded up to a multiple of 64) and 64 + 1.5 l working bits
        # leave radii below 1e-18 up to l = 151 at d = 64 (values up to 3e27)
        sins = _nodes(d, 64 * -(-(64 + 2 * l) // 64))[0]
        with rig.precision(64 + (3 * l + 1) // 2):
            vals = [gb.normalized_at(d, l, s) for s in sins]
        gb.CACHE[key] = rig.arb_mat(1, len(vals), vals)
    return gb.CACHE[key]


def _box_constants(d: int) -> tuple[Any, Any]:
    """Per panel and box (numpy arrays): ``log`` of an upper float of
    ``h factor(rho) |cos|_max^{d-2}`` and of ``e^{y_max}`` (cached per d)."""
    key = ("panel boxes", d)
    if key not in gb.CACHE:
        with rig.precision(128):
            log_a = [[math.log(rig.upper_float(rig.arb(p.h) * rig.arb(gl_error_factor(box.rho))
                                               * rig.arb(box.cos_max) ** (d - 2)))
                      for box in p.boxes] for p in panels()]
            log_e = [[rig.upper_float(box.y_max) for box in p.boxes] for p in panels()]
        gb.CACHE[key] = (np.array(log_a), np.array(log_e))
    return gb.CACHE[key]


def _errors(d: int, log_g: Any, powers: list[int], scales: list[float]) -> list[float]:
    """For each power l: an upper bound of ``scale sum_p min_rho h factor G e^{l y_max}
    |cos|_max^{d-2}`` (``log_g``: log of G per panel and box, ``-inf`` for 0, ``inf`` where
    unproved). Evaluated in floats from upper floats of every factor, and doubled: the
    rounding of ``log``, ``exp`` and the sum is below ``1e-12`` relative."""
    log_a, log_e = _box_constants(d)
    logs = log_a[None] + log_g[None] + np.array(powers, dtype=float)[:, None, None] * log_e[None]
    best = logs.min(axis=2)  # the best ellipse per panel
    with np.errstate(over="ignore"):
        total = np.exp(best).sum(axis=1)
    return [2.0 * float(t) * s for t, s in zip(total, scales)]


def _state(b: float, d: int) -> tuple[list[Any], list[Any], Any]:
    """``tanh(b sin th_i/sqrt2)`` at the nodes, ``h w_i cos^{d-2} th_i tanh(...)``, and the log
    of :func:`tanh_bound` per panel and box (cached per (b, d))."""
    key = ("panel state", b, d)
    if key not in gb.CACHE:
        sins, base = _nodes(d)
        with rig.precision(128):
            w_scale = rig.arb(b) / rig.arb(2).sqrt()
            tv = [(w_scale * s).tanh() for s in sins]
            v = [w * t for w, t in zip(base, tv)]
        with np.errstate(divide="ignore"):
            log_g = np.log(np.array([[tanh_bound(b, box) for box in p.boxes] for p in panels()]))
        gb.CACHE[key] = (tv, v, log_g)
    return gb.CACHE[key]


def tanh_etas(b: float, d: int, degrees: list[int]) -> dict[int, Any]:
    """Balls of ``eta_l(psi_b)`` for the odd ``l`` in ``degrees`` and of ``E psi_b^2`` for
    ``l = 0``, each with its proved quadrature error; a degree whose error exceeds FAST_TOL is
    omitted."""
    tv, v, log_g = _state(b, d)
    out: dict[int, Any] = {}
    with rig.precision(128):
        rho2 = 2 * gb.rho_ball(d)
        odd = [l for l in degrees if l > 0]
        if odd:
            scales = [rig.upper_float(rho2 * rig.arb(dim_harmonics(d, l)).sqrt()) for l in odd]
            errs = _errors(d, log_g, odd, scales)
            keep = [(l, e) for l, e in zip(odd, errs) if e <= FAST_TOL]
            if keep:
                column = rig.arb_mat(len(v), 1, v)
                for l, e in keep:
                    out[l] = rho2 * (_row(d, l) * column)[0, 0] + rig.ball(0, e)
        if 0 in degrees:
            e = _errors(d, 2 * log_g, [0], [rig.upper_float(rho2)])[0]
            if e <= FAST_TOL:
                out[0] = rho2 * sum((vi * ti for vi, ti in zip(v, tv)), rig.arb(0)) + rig.ball(
                    0, e)
    return out


def tanh_sign_gap_sq(b: float, d: int, tol: float = 2.0**-50) -> Any | None:
    """A ball of ``||psi_b - sign||^2 = 2 rho_d int_0^{pi/2} (1 - tanh(b sin th/sqrt2))^2
    cos^{d-2} th dth`` from the same node values (``|1 - tanh| <= 1 + G`` on each box; sign is
    the constant 1 on ``(0, pi/2]``), or None when the quadrature error exceeds ``tol``."""
    tv, _, log_g = _state(b, d)
    base = _nodes(d)[1]
    with rig.precision(128):
        rho2 = 2 * gb.rho_ball(d)
        e = _errors(d, 2 * np.log1p(np.exp(log_g)), [0], [rig.upper_float(rho2)])[0]
        if e > tol:
            return None
        return rho2 * sum((w * (1 - t) ** 2 for w, t in zip(base, tv)), rig.arb(0)) + rig.ball(
            0, e)
