"""Rank-1 hardmax heads with scalar values: the generic machinery behind random features and
every rank-1 construction (docs/paper.md §4; docs/derivations/constructions.md, random features).

Head ``h`` has query ``q_h`` and key ``k_h`` (rank 1) and value ``a_h I``; it picks ``x_1`` iff
``<q_h, y><k_h, x_1 - x_2> > 0``. On ``D_2`` the error of ``sum_h a_h x_{pick_h}`` is exactly
``1 - 2 a.b + a.C.a`` with ``b_h = target_agreement`` and ``C`` the head-vs-head agreement
kernel (``workbench.core.head_kernels``); the optimal values solve ``C a = b``
(:func:`solve_heads`). Any design of heads ``(Q, K)`` (random, tied, deterministic) goes through
:func:`solve_heads`, :func:`exact_error` and :func:`rank_one_model`.
"""

from __future__ import annotations

from typing import cast

import torch

from workbench.constructions._kernel_solve import (
    SOLVERS,
    SolveResult,
    dense_kernel,
    solve_value_weights,
)
from workbench.core.head_kernels import head_target_agreement, kernel_error
from workbench.core.validation import check_tensor
from workbench.models.attention import GeneralizedAttention
from workbench.models.scores import DotScore

__all__ = ["SOLVERS", "SolveResult", "exact_error", "rank_one_model", "solve_heads",
           "target_agreement"]


def target_agreement(Q: torch.Tensor, K: torch.Tensor) -> torch.Tensor:
    """``b_h = Pr[head h picks the target]`` on ``D_2`` (float64, ``(H,)``)."""
    check_tensor("Q", Q, (None, None))
    check_tensor("K", K, tuple(Q.shape))
    q = Q.to(torch.float64) / Q.to(torch.float64).norm(dim=-1, keepdim=True)
    k = K.to(torch.float64) / K.to(torch.float64).norm(dim=-1, keepdim=True)
    cos = (q * k).sum(-1).clamp(-1.0, 1.0)
    return head_target_agreement(Q.shape[1], cos)


def exact_error(Q: torch.Tensor, K: torch.Tensor, a: torch.Tensor) -> float:
    """Exact ``D_2`` error ``1 - 2 a.b + a.C.a`` of heads ``(Q, K)`` with values ``a`` (dense C).

    ``C`` is built with ``C_hh = 1`` exactly (see ``_kernel_solve.kernel_block``).
    """
    return kernel_error(a, target_agreement(Q, K), dense_kernel(Q, K))


def rank_one_model(Q: torch.Tensor, K: torch.Tensor, a: torch.Tensor) -> GeneralizedAttention:
    """Eq. 2 layer, rank 1, hardmax: ``W_h = k_h^T``, ``Q_h = q_h^T``, ``M_h = a_h I``."""
    Q = check_tensor("Q", Q, (None, None))
    H, d = Q.shape
    K = check_tensor("K", K, (H, d))
    a = check_tensor("a", a, (H,))
    model = GeneralizedAttention(d, 1, H, score="dot", normalizer="hardmax", dtype=torch.float64)
    with torch.no_grad():
        model.W.copy_(K.reshape(1, H, 1, d))
        cast(DotScore, model.score).Q.copy_(Q.reshape(1, H, 1, d))
        model.M.copy_(a.reshape(1, H, 1, 1) * torch.eye(d, dtype=torch.float64))
    return model


def solve_heads(
    Q: torch.Tensor, K: torch.Tensor, solver: str = "auto", tol: float = 1e-8, max_iter: int = 1000
) -> SolveResult:
    """Optimal values for given heads: ``C a = b`` (Cholesky or matrix-free CG)."""
    return solve_value_weights(Q, K, target_agreement(Q, K), solver, tol, max_iter)
