"""Kernels of rank-1 hardmax heads with scalar values on ``D_2`` (docs/paper.md §4).

Head ``(q, k)`` picks ``x_1`` iff ``<q,y><k, x_1 - x_2> > 0``. With ``w = (x_1-x_2)/sqrt2`` (uniform
on the sphere, independent of ``y``) the head's choice is ``sign<q,y> sign<k,w>`` and the target's
is ``sign<y,w>``. Hence (docs/derivations/harmonics.md, §"Kernels"):

- ``C_hh' = Pr[h, h' agree] = 1/2 + (2/pi^2) arcsin<q,q'> arcsin<k,k'>``;
- ``b(c) = Pr[head picks the target] = 1/2 + kappa_d sign(c) int_0^|c| F(1-x^2) dx`` with
  ``c = <q,k>``, ``F = 2F1(1/2, 1/2; (d+1)/2; .)`` and ``kappa_d = 2 rho_d / (pi (d-1))``;
  equivalently ``b(c) = 1/2 + 1/2 sum_{l odd} eta_l^3 P_l^{(d)}(c) / sqrt(N(d,l))``;
- the error of ``sum_h a_h x_{pick_h}`` is ``1 - 2 a.b + a.C.a``.

``b`` is computed in numpy (torch is not imported here): a tensor argument gives a tensor back,
anything else a numpy array. ``C`` and the error take tensors, so their functions import torch
when called.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.polynomial import chebyshev as cheb

from workbench.core.harmonics import (
    _sqrt_int_float,
    density_at_zero,
    dim_harmonics,
    is_tensor,
    legendre_d,
    sign_coefficients,
)
from workbench.core.validation import check_dim, check_int, check_tensor

if TYPE_CHECKING:
    import torch

    Cosines = torch.Tensor | float | np.ndarray

__all__ = [
    "agreement_kernel",
    "agreement_kernel_cross",
    "head_target_agreement",
    "head_target_agreement_series",
    "head_target_agreement_d2",
    "kernel_error",
]

_TWO_OVER_PI2 = 2.0 / math.pi**2


def _unit_rows(name: str, M: object, d: int | None = None) -> torch.Tensor:
    import torch

    t = check_tensor(name, M, (None, d))
    t = t.to(torch.float64)
    if not torch.isfinite(t).all():
        raise ValueError(f"{name} must be finite")
    norms = t.norm(dim=1, keepdim=True)
    if (norms == 0).any():
        raise ValueError(f"{name} must have non-zero rows")
    return t / norms


def agreement_kernel_cross(
    Q1: torch.Tensor, K1: torch.Tensor, Q2: torch.Tensor, K2: torch.Tensor
) -> torch.Tensor:
    """Block ``C[h, h'] = 1/2 + (2/pi^2) arcsin<q_h,q'_h'> arcsin<k_h,k'_h'>``, shape (H1, H2).

    Rows are normalised; ``Q1, K1`` are ``(H1, d)``, ``Q2, K2`` are ``(H2, d)`` (float64 out).
    """
    q1 = _unit_rows("Q1", Q1)
    d = q1.shape[1]
    k1 = _unit_rows("K1", K1, d)
    q2 = _unit_rows("Q2", Q2, d)
    k2 = _unit_rows("K2", K2, d)
    if k1.shape[0] != q1.shape[0]:
        raise ValueError(f"K1 must have shape ({q1.shape[0]}, {d}) like Q1 (got {tuple(K1.shape)})")
    if k2.shape[0] != q2.shape[0]:
        raise ValueError(f"K2 must have shape ({q2.shape[0]}, {d}) like Q2 (got {tuple(K2.shape)})")
    import torch

    k2 = k2.to(q1.device)
    q2 = q2.to(q1.device)
    k1 = k1.to(q1.device)
    aq = torch.asin((q1 @ q2.T).clamp(-1.0, 1.0))
    ak = torch.asin((k1 @ k2.T).clamp(-1.0, 1.0))
    return 0.5 + _TWO_OVER_PI2 * aq * ak


def agreement_kernel(Q: torch.Tensor, K: torch.Tensor) -> torch.Tensor:
    """Head-vs-head agreement kernel ``C`` (H, H) of rank-1 hardmax heads on D_2 (docs/paper.md §4).

    The diagonal is exactly 1 (a head always agrees with itself); computing it through
    ``arcsin(<q, q>)`` would lose ~1e-8 to the steepness of arcsin at 1.
    """
    import torch

    C = agreement_kernel_cross(Q, K, Q, K)
    C = torch.triu(C, 1) + torch.triu(C, 1).T  # exactly symmetric (a GEMM need not be)
    C.diagonal().fill_(1.0)
    return C


def kernel_error(a: torch.Tensor, b: torch.Tensor, C: torch.Tensor) -> float:
    """Error ``1 - 2 a.b + a.C.a`` of value weights ``a`` (docs/paper.md §4)."""
    import torch

    a_t = check_tensor("a", a, (None,)).to(torch.float64)
    H = a_t.shape[0]
    b_t = check_tensor("b", b, (H,)).to(torch.float64)
    C_t = check_tensor("C", C, (H, H)).to(torch.float64)
    return float(1.0 - 2.0 * (a_t @ b_t) + a_t @ (C_t @ a_t))


# --- b(c): head-vs-target agreement ---------------------------------------------------------

_PANELS = 26  # geometric panels [2^-(k+1), 2^-k], k < 26, plus [0, 2^-26]
_NODES = 22  # Chebyshev points per panel
_DE_STEP = 1.0 / 32  # exp-sinh step and half-width (F to half an ulp; checked against mpmath)
_DE_HALF_WIDTH = 4.5


def _hypergeometric_on_nodes(d: int, x: np.ndarray) -> np.ndarray:
    """``F(1 - x^2) = 2F1(1/2, 1/2; (d+1)/2; 1 - x^2)`` for ``x`` in (0, 1], by Euler's integral
    in ``u = tan psi`` (docs/derivations/harmonics.md, Lemma H4):

        F(1 - x^2) = S(x) / S(1),   S(x) = int_0^inf (1 + u^2)^(-d/2) (1 + x^2 u^2)^(-1/2) du,

    (``F(0) = 1`` fixes the constant), a positive integrand, analytic on the half line and
    decaying like ``u^-d``, summed by the exp-sinh rule ``u = exp(pi/2 sinh t)`` (trapezoidal in
    t, double-exponential decay at both ends) in numpy's long double (80-bit on x86), so the
    float64 values are rounded from about 19 digits."""
    ld = np.longdouble
    t = np.arange(-_DE_HALF_WIDTH, _DE_HALF_WIDTH + _DE_STEP / 2, _DE_STEP).astype(ld)
    log_u = 2 * np.arctan(ld(1)) * np.sinh(t)  # (pi/2) sinh t
    u2 = np.exp(2 * log_u)
    w = np.exp(log_u - ld(d) / 2 * np.log1p(u2)) * np.cosh(t)  # du/dt (1 + u^2)^(-d/2), / (pi/2)
    xl = np.asarray(x, dtype=ld)
    S = (w[None, :] / np.sqrt(1 + (xl * xl)[:, None] * u2[None, :])).sum(axis=1)
    return (S / (w / np.sqrt(1 + u2)).sum()).astype(np.float64)  # type: ignore[no-any-return]


@lru_cache(maxsize=64)
def _antiderivative_table(d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Piecewise-Chebyshev antiderivative of ``F(1 - x^2)`` on [0, 1].

    ``F(1-x^2)`` is analytic on (0, 1] and its only singularity (``|x|^(d-1)``, with a log for odd
    d) sits at 0, so geometric panels give ``rho ~ 5.8`` Bernstein ellipses on every panel.
    """
    edges = np.array([0.0] + [2.0 ** (-k) for k in range(_PANELS, -1, -1)])
    lo, hi = edges[:-1], edges[1:]
    mid, hw = (lo + hi) / 2, (hi - lo) / 2
    u = np.cos(np.pi * (np.arange(_NODES) + 0.5) / _NODES)  # Chebyshev points of the 1st kind
    vals = _hypergeometric_on_nodes(d, (mid[:, None] + hw[:, None] * u[None, :]).reshape(-1))
    vals = vals.reshape(len(lo), _NODES)
    coefs = np.empty((len(lo), _NODES + 1))
    totals = np.empty(len(lo))
    for p in range(len(lo)):
        g = cheb.chebfit(u, vals[p], _NODES - 1)
        coefs[p] = cheb.chebint(g, lbnd=-1, scl=hw[p])
        totals[p] = cheb.chebval(1.0, coefs[p])
    cum = np.concatenate([[0.0], np.cumsum(totals)[:-1]])
    return edges, mid, hw, np.column_stack([cum, coefs])


def _clenshaw_rows(coef: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Evaluate a Chebyshev series with per-point coefficient rows ``coef`` (n, m) at ``u`` (n,)."""
    b1 = np.zeros_like(u)
    b2 = np.zeros_like(u)
    for k in range(coef.shape[1] - 1, 0, -1):
        b1, b2 = coef[:, k] + 2 * u * b1 - b2, b1
    return coef[:, 0] + u * b1 - b2


def _integral_F(d: int, x: np.ndarray) -> np.ndarray:
    """``int_0^x F(1-t^2) dt`` for ``x`` in [0, 1]."""
    edges, mid, hw, table = _antiderivative_table(d)
    idx = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, len(mid) - 1)
    u = np.clip((x - mid[idx]) / hw[idx], -1.0, 1.0)
    rows = table[idx]
    return rows[:, 0] + _clenshaw_rows(rows[:, 1:], u)


def _cosines(cos_qk: object) -> tuple[np.ndarray, torch.Tensor | None]:
    if is_tensor(cos_qk):
        import torch

        assert isinstance(cos_qk, torch.Tensor)
        c = cos_qk.detach().to("cpu", torch.float64).numpy()
        like = cos_qk
    else:
        if isinstance(cos_qk, bool):
            raise ValueError(f"cos_qk must be a real number or tensor in [-1, 1] (got {cos_qk!r})")
        c = np.asarray(cos_qk, dtype=np.float64)
        like = None
    if not np.isfinite(c).all() or (np.abs(c) > 1 + 1e-12).any():
        raise ValueError("cos_qk must lie in [-1, 1]")
    return np.asarray(np.clip(c, -1.0, 1.0)), like


def _out(vals: np.ndarray, like: torch.Tensor | None) -> Any:
    """A float64 tensor on ``like``'s device when the cosines came as a tensor, else an array."""
    arr = np.asarray(vals, dtype=np.float64)
    if like is None:
        return arr
    import torch

    return torch.from_numpy(np.ascontiguousarray(arr).reshape(arr.shape)).to(like.device)


def head_target_agreement_d2(cos_qk: Cosines) -> Any:
    """d = 2 closed form ``b = 1/2 + sgn(pi/2-theta)(1/4 - (theta~/pi)^2)`` (docs/paper.md §4)."""
    c, like = _cosines(cos_qk)
    tt = np.arccos(np.abs(c))  # theta~ = min(theta, pi - theta)
    return _out(0.5 + np.sign(c) * (0.25 - (tt / math.pi) ** 2), like)


def head_target_agreement(d: int, cos_qk: Cosines) -> Any:
    """``b = Pr[head (q,k) picks the nearest neighbour]`` on D_2 vs ``cos_qk = <q,k>`` (float64).

    Exact 1-D integral ``b = 1/2 + kappa_d sign(c) int_0^|c| 2F1(1/2,1/2;(d+1)/2;1-x^2) dx``,
    tabulated once per d (piecewise Chebyshev, ~1e-15) and evaluated by Clenshaw: O(1) per cosine.
    """
    d = check_dim(d)
    c, like = _cosines(cos_qk)
    if d == 2:
        return head_target_agreement_d2(c if like is None else like)
    kappa = 2.0 * density_at_zero(d) / (math.pi * (d - 1))
    flat = c.reshape(-1)
    vals = 0.5 + kappa * np.sign(flat) * _integral_F(d, np.abs(flat))
    return _out(vals.reshape(c.shape), like)


def head_target_agreement_series(
    d: int, cos_qk: Cosines, max_degree: int = 401
) -> Any:
    """Gegenbauer series ``b = 1/2 + 1/2 sum_{l odd <= L} eta_l^3 P_l^{(d)}(c) / sqrt(N(d,l))``.

    Converges like ``L^-(d/2+1)`` at ``c = +-1`` (slowly for small d); the independent check of
    :func:`head_target_agreement`.
    """
    d = check_dim(d)
    L = check_int("max_degree", max_degree, lo=1)
    c, like = _cosines(cos_qk)
    eta = sign_coefficients(d, L)
    w = np.zeros(L + 1)
    for l in range(1, L + 1, 2):
        w[l] = eta[l] ** 3 / _sqrt_int_float(dim_harmonics(d, l))
    P = legendre_d(d, L, c.reshape(-1))
    vals = 0.5 + 0.5 * (w @ P)
    return _out(vals.reshape(c.shape), like)
