"""Two i.i.d. keys as the transfer to D_2 sees them (docs/derivations/iid_transfer.md): the
correlation ``t = <x1, x2>``, the orthonormal pair ``(u_hat, w_hat)``, the scalar ``G_t`` the error
is projected on, and the Bayes score of one head, ``E[sign<y, x1 - x2> | W x1, W x2, y]``."""

from __future__ import annotations

import math

import numpy as np
import torch
from scipy.special import betainc, roots_jacobi

from workbench.core.targets import nearest_neighbour
from workbench.models.attention import GeneralizedAttention

SQRT2 = math.sqrt(2.0)
BAYES_NODES = 48  # Gauss-Jacobi nodes for the second key's kernel coordinate


def decompose(X: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """``t = <x1, x2>``, ``u_hat``, ``w_hat`` (the unit vectors along ``x1 + x2`` and ``x1 - x2``)
    and ``s = sign<y, w_hat>``; ``|u| = sqrt(1 + t)`` and ``|w| = sqrt(1 - t)``."""
    t = (X[:, 0] * X[:, 1]).sum(-1)
    u = (X[:, 0] + X[:, 1]) / SQRT2
    w = (X[:, 0] - X[:, 1]) / SQRT2
    u_hat = u / u.norm(dim=-1, keepdim=True)
    w_hat = w / w.norm(dim=-1, keepdim=True)
    return t, u_hat, w_hat, torch.sign((y * w_hat).sum(-1))


def w_norm(t: torch.Tensor) -> torch.Tensor:
    """``|w| = |x1 - x2| / sqrt2 = sqrt(1 - t)``: the factor the projection on ``w_hat`` carries."""
    return torch.sqrt(1 - t)


def G_t(model: GeneralizedAttention, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``G_t = sum_h (kappa_t w_hat^T M_h u_hat + psi_h w_hat^T M_h w_hat)``, ``kappa_t =
    sqrt((1+t)/(1-t))`` and ``psi_h = phi_h[1] - phi_h[2]``: shape (K, n)."""
    t, u_hat, w_hat, _ = decompose(X, y)
    p = model.probabilities(X, y)[..., 0, :]  # (K, H, n, 2)
    psi = p[..., 0] - p[..., 1]
    wMu = torch.einsum("nd,khde,ne->khn", w_hat, model.M, u_hat)
    wMw = torch.einsum("nd,khde,ne->khn", w_hat, model.M, w_hat)
    kappa = torch.sqrt((1 + t) / (1 - t))
    return (kappa * wMu + psi * wMw).sum(1)


def bayes_score(B: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``E[s | B x1, B x2, y]`` for i.i.d. uniform keys, ``B`` (r, d) with orthonormal rows and
    ``m = d - r >= 2``. Given ``B x_i = v_i`` the kernel parts are ``rho_i xi_i``, ``rho_i =
    sqrt(1 - |v_i|^2)``, with independent uniform directions, so ``<y, x1 - x2> =
    <B y, v1 - v2> + |y_perp| (rho_1 tau_1 - rho_2 tau_2)``, ``tau_i`` i.i.d. with density
    ~ ``(1 - tau^2)^((m-3)/2)`` (CDF a regularized incomplete beta); ``tau_2`` is integrated by
    Gauss-Jacobi. Any measurable function of ``(B x1, B x2, y)`` is a valid score: the
    quadrature affects optimality only."""
    m = B.shape[1] - B.shape[0]
    if m < 2:
        raise ValueError(f"bayes_score needs d - r >= 2 (got d - r = {m})")
    a = (m - 1) / 2
    v1, v2, py = X[:, 0] @ B.T, X[:, 1] @ B.T, y @ B.T
    rho1, rho2, y_perp = (np.sqrt(np.clip(1 - (v * v).sum(-1), 0.0, None)) for v in (v1, v2, py))
    k = ((v1 - v2) * py).sum(-1) / y_perp
    nodes, weights = roots_jacobi(BAYES_NODES, a - 1, a - 1)
    weights = weights / weights.sum()
    x = (rho2[:, None] * nodes[None, :] - k[:, None]) / rho1[:, None]  # tau_1 must exceed x
    above = 1 - betainc(a, a, np.clip((1 + x) / 2, 0.0, 1.0))
    return 2 * (above * weights).sum(-1) - 1


def bayes_head_errors(d: int, r: int, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Per-sample error ``||f - A||^2`` of one head with ``M = I``, keys seen through the first
    ``r`` coordinates and the Bayes score: ``A = X phi``, ``phi = ((1 + psi)/2, (1 - psi)/2)``."""
    B = np.eye(d)[:r]
    psi = torch.from_numpy(bayes_score(B, X.numpy(), y.numpy()))
    A = ((1 + psi)[:, None] * X[:, 0] + (1 - psi)[:, None] * X[:, 1]) / 2
    return ((nearest_neighbour(X, y) - A) ** 2).sum(-1)
