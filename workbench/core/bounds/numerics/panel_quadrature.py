"""Composite Gauss-Legendre on ``th in [0, pi/2]`` with a proved error per panel
(docs/derivations/soft_targets.md, "Lemma Q (the energies of tanh by panels)").

On a panel ``[c - h, c + h]`` the n-point Gauss-Legendre sum of an integrand f analytic in the
Bernstein ellipse ``E_rho`` of the panel (foci at the panel's ends, semi-axes
``h (rho + 1/rho)/2`` and ``h (rho - 1/rho)/2``) with ``|f| <= M`` there errs by at most
``h (64/15) M / ((1 - rho^-2) rho^(2n))``. The ellipse lies in the box ``[c - h a, c + h a] x
[-h b, h b]`` (``a, b`` its semi-axes over h), where ``|cos th|^2 = cos^2 x + sinh^2 y`` is
bounded in closed form.

The panels are graded towards ``th = 0`` (where a soft profile's poles come close) and uniform
beyond ``pi/32``; the nodes and weights are arb balls (``arb.legendre_p_root``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from workbench.core import rigorous as rig

__all__ = ["NODES", "RHOS", "Box", "Panel", "finest_level", "gl_error_factor", "panels"]

NODES = 32  # Gauss-Legendre nodes per panel
RHOS = (1.25, 1.5, 2.0, 3.0, 4.0, 5.5, 8.0, 12.0, 16.0)  # the ellipses tried on each panel
_GRADED = 17  # the first panel is [0, 2^-17 pi/2]
_UNIFORM = 16  # panels of width pi/32 cover [pi/32, pi/2]


@dataclass(frozen=True)
class Box:
    """The bounding box of a panel's ellipse ``E_rho``: ``x in [x_lo, x_hi]``, ``|y| <= y_max``
    (arb balls: use their outer ends), with ``cos_max >= |cos th|`` on it, ``sinh_y >=
    sinh(y_max)``, and ``0 < sin_min <= sin x`` on ``[x_lo, x_hi]`` where ``0 < x_lo`` and
    ``x_hi < pi`` (else ``sin_min = 0``): upper and lower floats."""

    rho: float
    x_lo: Any
    x_hi: Any
    y_max: Any
    cos_max: float
    sinh_y: float
    sin_min: float


@dataclass(frozen=True)
class Panel:
    """``[c - h, c + h]``: its half-width h (a float upper bound), the nodes ``th_i`` and the
    weights ``h w_i`` (arb balls), and the box of each ellipse in :data:`RHOS`."""

    h: float
    nodes: tuple[Any, ...]
    weights: tuple[Any, ...]
    boxes: tuple[Box, ...]


def _box(c: Any, h: Any, rho: float) -> Box:
    r = rig.arb(rho)
    a, b = (r + 1 / r) / 2, (r - 1 / r) / 2
    x_lo, x_hi, y_max = c - h * a, c + h * a, h * b
    # cos^2 x is largest where x is closest to a multiple of pi; the box's x lies in
    # (-pi/2, pi) for every panel here, so the largest value is at x = 0 when 0 is inside, and
    # at the end nearer to 0 or to pi otherwise (squares as products: flint's ``x ** 2`` of a
    # ball centred at 0 is nan)
    ends = [x_lo.cos() * x_lo.cos(), x_hi.cos() * x_hi.cos()]
    if rig.lower_float(x_lo) <= 0.0:
        ends.append(rig.arb(1))
    cos2 = max(rig.upper_float(e) for e in ends)
    sinh2 = y_max.sinh() ** 2
    cos_max = rig.upper_float((rig.arb(cos2) + sinh2).sqrt())
    sin_min = 0.0  # sin is concave on [0, pi]: its least value on the box is at an end
    if rig.lower_float(x_lo) > 0 and rig.upper_float(x_hi) < rig.lower_float(rig.pi()):
        sin_min = max(0.0, min(rig.lower_float(x_lo.sin()), rig.lower_float(x_hi.sin())))
    return Box(rho, x_lo, x_hi, y_max, cos_max, rig.upper_float(y_max.sinh()), sin_min)


def finest_level(b: float) -> int:
    """The layout for ``tanh(b sin th/sqrt2)``: its first panel is ``[0, 2^-k]`` (units of
    ``pi/2``), k = 8 below ``b = 128``, 12 below 2048, else 17 (the poles lie at distance
    ``~pi/(sqrt2 b)`` from 0). Coarser layouts have fewer nodes; every layout's error is proved,
    and a degree it cannot prove is left to the caller's fallback."""
    return 8 if b < 128 else 12 if b < 2048 else 17


@lru_cache(maxsize=16)
def panels(prec: int = 128, level: int = _GRADED) -> tuple[Panel, ...]:
    """The panels of ``[0, pi/2]`` (in units of ``pi/2``: ``[0, 2^-level]``, ``[2^-k-1, 2^-k]``
    up to ``1/16``, then ``1/16``-wide panels), with their nodes and weights at ``prec`` bits
    and the boxes of their ellipses (at 128 bits: they only bound)."""
    fracs = [0.0] + [2.0 ** -k for k in range(level, 4, -1)]
    fracs += [k / _UNIFORM for k in range(1, _UNIFORM + 1)]
    fracs = sorted(set(fracs))
    if prec != 128:
        boxes = [p.boxes for p in panels(128, level)]
    with rig.precision(prec):
        roots = [rig.arb_legendre_root(NODES, k) for k in range(NODES)]
        half_pi = rig.pi() / 2
        out = []
        for i, (lo, hi) in enumerate(zip(fracs, fracs[1:])):
            a, b = half_pi * rig.arb(lo), half_pi * rig.arb(hi)
            c, h = (a + b) / 2, (b - a) / 2
            out.append(Panel(rig.upper_float(h), tuple(c + h * x for x, _ in roots),
                             tuple(h * w for _, w in roots),
                             tuple(_box(c, h, rho) for rho in RHOS) if prec == 128 else boxes[i]))
    return tuple(out)


@lru_cache(maxsize=64)
def gl_error_factor(rho: float) -> float:
    """An upper float of ``(64/15) / ((1 - rho^-2) rho^(2 NODES))``: the error of NODES-point
    Gauss-Legendre on ``[-1, 1]`` per unit of ``sup |f|`` on ``E_rho`` (Trefethen,
    Approximation Theory and Approximation Practice, Theorem 19.3, there with n + 1 nodes)."""
    with rig.precision(128):
        r = rig.arb(rho)
        return rig.upper_float(rig.arb(64) / 15 / ((1 - 1 / (r * r)) * r ** (2 * NODES)))
