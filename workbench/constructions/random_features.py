"""Random features: H random rank-1 hardmax heads with optimal scalar values (docs/paper.md §4).

The heads are drawn at random (:func:`sample_heads`); everything else is the generic rank-1
machinery of ``workbench.constructions.rank_one``: on ``D_2`` the error of
``sum_h a_h x_{pick_h}`` is exactly ``1 - 2 a.b + a.C.a`` and the optimal ``a`` solves
``C a = b``. This is the paper's upper-bound curve of error against H (Section 7, theory figure);
it can never beat the certified lower bound of Theorem 2 (``workbench.core.bounds.certified``).

Head laws: ``independent`` (q, k i.i.d. uniform), ``tied`` (q = k), ``cosine_uniform``
(``<q,k>`` uniform on [-1, 1], as in the paper's figure).
"""

from __future__ import annotations

import torch

from workbench.constructions._montecarlo import ClaimedError
from workbench.constructions.rank_one import SOLVERS, rank_one_model, solve_heads
from workbench.core.sphere import Generator, as_generator, uniform_sphere
from workbench.core.validation import check_choice, check_dim, check_heads
from workbench.models.attention import GeneralizedAttention

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
