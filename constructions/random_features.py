"""Random features: H random rank-1 hardmax heads with optimal scalar values (docs/paper.md §4).

Head ``h`` has query ``q_h`` and key ``k_h`` (unit vectors, rank 1) and value ``a_h I``; it picks
``x_1`` iff ``<q_h,y><k_h, x_1 - x_2> > 0``. On ``D_2`` the error of ``sum_h a_h x_{pick_h}`` is
exactly ``1 - 2 a.b + a.C.a`` (``b, C`` from ``core.head_kernels``); the optimal ``a`` solves
``C a = b``. This is the paper's upper-bound curve of error against H (Section 7, theory figure);
it can never beat the certified lower bound of Theorem 2 (``workbench.core.bounds.certified``).

Head laws: ``independent`` (q, k i.i.d. uniform), ``tied`` (q = k), ``cosine_uniform``
(``<q,k>`` uniform on [-1, 1], as in the paper's figure).
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
from workbench.constructions._montecarlo import ClaimedError
from workbench.core.head_kernels import head_target_agreement, kernel_error
from workbench.core.sphere import Generator, as_generator, uniform_sphere
from workbench.core.validation import check_choice, check_dim, check_heads, check_tensor
from workbench.models.attention import GeneralizedAttention
from workbench.models.scores import DotScore

HEAD_LAWS: tuple[str, ...] = ("independent", "tied", "cosine_uniform")
STATEMENT = "random features: err(D_2) == 1 - 2 a.b + a.C.a with C a = b"


def sample_heads(
    H: int, d: int, law: str = "cosine_uniform", generator: Generator = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Unit queries and keys ``(Q, K)``, each ``(H, d)`` float64, drawn from ``law``."""
    H, d = check_heads(H), check_dim(d)
    law = check_choice("law", law, HEAD_LAWS)
    gen = as_generator(generator)
    Q = uniform_sphere(H, d=d, generator=gen)
    if law == "tied":
        return Q, Q.clone()
    if law == "independent":
        return Q, uniform_sphere(H, d=d, generator=gen)
    c = torch.rand(H, generator=gen, dtype=torch.float64) * 2 - 1
    u = uniform_sphere(H, d=d, generator=gen)
    u = u - (u * Q).sum(-1, keepdim=True) * Q  # orthogonal to q (a.s. non-zero)
    u = u / u.norm(dim=-1, keepdim=True)
    K = c[:, None] * Q + (1 - c * c).clamp(min=0).sqrt()[:, None] * u
    return Q, K / K.norm(dim=-1, keepdim=True)


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


def random_features(
    d: int,
    H: int,
    law: str = "cosine_uniform",
    solver: str = "auto",
    generator: Generator = 0,
    tol: float = 1e-8,
    max_iter: int = 1000,
    build_model: bool = True,
) -> tuple[GeneralizedAttention | None, ClaimedError]:
    """Random rank-1 heads with optimal values; the claim is the exact kernel error on ``D_2``.

    ``solver`` is ``auto`` (Cholesky up to 4096 heads, else matrix-free CG), ``cholesky`` or
    ``cg``. ``build_model=False`` skips the ``H d^2`` value tensor (large H benchmarks).
    """
    d, H = check_dim(d), check_heads(H)
    law = check_choice("law", law, HEAD_LAWS)
    solver = check_choice("solver", solver, SOLVERS)
    Q, K = sample_heads(H, d, law, generator)
    sol = solve_heads(Q, K, solver, tol, max_iter)
    claim = ClaimedError.exact(
        sol.error,
        "==",
        "exact_kernel",
        STATEMENT,
        d=d,
        heads=H,
        law=law,
        solver=sol.method,
        iterations=sol.iterations,
        relative_residual=sol.relative_residual,
        jitter=sol.jitter,
        solve_seconds=sol.seconds,
    )
    return (rank_one_model(Q, K, sol.a) if build_model else None), claim


def solve_heads(
    Q: torch.Tensor, K: torch.Tensor, solver: str = "auto", tol: float = 1e-8, max_iter: int = 1000
) -> SolveResult:
    """Optimal values for given heads: ``C a = b`` (Cholesky or matrix-free CG)."""
    return solve_value_weights(Q, K, target_agreement(Q, K), solver, tol, max_iter)
