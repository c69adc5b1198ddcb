"""A lower bound for N = 2 on D_2 that keeps ``|psi_h| <= 1`` together with a norm bound on the
value maps: a curve in the norm (docs/derivations/sandwich.md, "Bounded scores and the norm of
the value maps"; status: ours).

For Eq. 2 with value maps of *form norm* ``rho = sum_h ||q_h||_{L^2(S^{d-1})}``,
``q_h(w) = w^T M_h w``, every model has

    err >= 1/2 phi_A(rho),   phi_A(rho) = 1 - A               if rho^2 >= A,
                                         = 1 - 2 rho sqrt(A) + rho^2   otherwise,

where ``A = 1 - 2 LB`` bounds the energy of ``sign<y, .>`` the heads' space can capture (``LB``
the harmonic count's certified lower end). At ``rho^2 >= A`` this is the harmonic count; below,
it is larger. Without a norm bound it is the harmonic count (the page's Proposition N).
"""

from __future__ import annotations

import math

import numpy as np

from workbench.core.bounds.harmonic_count.harmonic import harmonic_bound
from workbench.core.validation import check_float, check_layer

__all__ = ["captured_energy", "form_norm", "norm_curve", "norm_curve_bound"]


def form_norm(M: np.ndarray) -> float:
    """``sum_h ||w^T M_h w||_{L^2}`` for ``w`` uniform on the sphere, exactly:
    ``E (w^T S w)^2 = ((tr S)^2 + 2 tr S^2) / (d (d + 2))``, ``S = (M + M^T) / 2``."""
    M = np.asarray(M, dtype=float)
    if M.ndim != 3 or M.shape[1] != M.shape[2]:
        raise ValueError(f"M must have shape (H, d, d) (got {M.shape})")
    d = M.shape[1]
    S = (M + M.transpose(0, 2, 1)) / 2
    tr = np.trace(S, axis1=1, axis2=2)
    tr2 = np.einsum("hij,hji->h", S, S)
    return float(np.sqrt((tr**2 + 2 * tr2) / (d * (d + 2))).sum())


def captured_energy(d: int, r: int, H: int) -> float:
    """An upper bound ``A`` on ``E_y ||P_V sign<y, .>||^2`` over the Eq. 2 heads' spaces:
    ``1 - 2 LB`` with ``LB`` the harmonic count's certified lower end (rounded up)."""
    d, r, H = check_layer(d, r, H)
    lb = harmonic_bound(d, r, H).enclosure[0]
    return min(1.0, math.nextafter(1.0 - 2.0 * lb, math.inf))


def norm_curve(A: float, rho: float) -> float:
    """``1/2 phi_A(rho)``: the least of ``1/2 E_y (1 - 2 a_y g + g^2)`` over ``g <= rho`` and
    laws of ``a_y`` in ``[0, 1]`` with ``E a_y^2 <= A`` (Jensen: ``phi`` is convex in ``a^2``)."""
    A = check_float("A", A, lo=0.0, hi=1.0)
    rho = check_float("rho", rho, lo=0.0)
    if rho * rho >= A:
        return 0.5 * (1.0 - A)
    return 0.5 * (1.0 - 2.0 * rho * math.sqrt(A) + rho * rho)


def norm_curve_bound(d: int, r: int, H: int, rho: float) -> float:
    """The lower bound on the D_2 error (N = 2) of Eq. 2 models with ``H`` heads of key-rank
    ``r`` whose value maps have form norm at most ``rho`` (:func:`form_norm`)."""
    A = captured_energy(d, r, H)
    return max(0.0, math.nextafter(norm_curve(A, rho), -math.inf))
