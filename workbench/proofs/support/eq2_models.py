"""Generalized-attention (Eq. 2) models and the instance decomposition of Lemma 1 that the
Theorem 2 claims share (docs/derivations/lower_bound.md, Lemma 1: ``u``, ``w``, ``s`` and the
scalar ``G`` the error is projected on)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    import torch

    from workbench.models.attention import GeneralizedAttention




SQRT2 = math.sqrt(2.0)
TINY = math.ulp(0.0)  # ">= TINY" states "> 0"
# The claims the certified bound (workbench.core.bounds.certified: the larger of the harmonic
# count and the fiber bound) rests on: what a claim confronting models with it depends on.
CERTIFIED_BOUND_CLAIMS = ("thm2.harmonic_bound", "thm2.fiber_bound")


def random_model(
    d: int, r: int, H: int, models: int, score: str, normalizer: str, g: torch.Generator
) -> GeneralizedAttention:
    """K random generalized-attention models (Eq. 2) of key-rank r, float64."""
    import torch

    from workbench.models.attention import GeneralizedAttention
    return GeneralizedAttention(d, r, H, models=models, score=score, normalizer=normalizer,
                                scale=3.0, generator=g, dtype=torch.float64)


def aligned_model(d: int, H: int, models: int, g: torch.Generator) -> GeneralizedAttention:
    """K full-rank dot-score models whose G correlates with s: ``W_h = Q_h = I`` (scores
    ``4 <y, x_i>``, so ``psi_h = tanh(2 <y, x_1 - x_2>)`` is odd in y) and ``M_h = (I + R_h) / H``
    with a random ``R_h`` (whose ``w^T M_h u`` term is even in y)."""
    import torch

    from workbench.models.attention import GeneralizedAttention
    from workbench.models.scores import DotScore
    model = GeneralizedAttention(
        d, d, H, models=models, score="dot", scale=4.0, generator=g, dtype=torch.float64
    )
    eye = torch.eye(d, dtype=torch.float64).expand(models, H, d, d)
    R = torch.randn(models, H, d, d, generator=g, dtype=torch.float64) / (2 * math.sqrt(d))
    with torch.no_grad():
        model.W.copy_(eye)
        cast(DotScore, model.score).Q.copy_(eye)
        model.M.copy_((eye + R) / H)
    return model


def fit_output_maps(model: GeneralizedAttention, X: torch.Tensor, y: torch.Tensor) -> None:
    """Least-squares ``M_h`` for fixed scores: ``A = sum_h M_h z_h`` with ``z_h = X phi_h``."""
    import torch

    from workbench.core.targets import nearest_neighbour
    p = model.probabilities(X, y)[..., 0, :]  # (K, H, n, 2)
    Z = torch.einsum("khni,nid->knhd", p, X).flatten(2)  # (K, n, H d)
    f = nearest_neighbour(X, y)
    # SVD (``gelsd``): torch's default ``gelsy`` reads a pivot array it never clears, so its
    # rounding, and for a rank-deficient Z its answer, depend on the allocator's state
    sol = torch.linalg.lstsq(Z, f.expand(Z.shape[0], -1, -1), driver="gelsd").solution
    K, H, d = model.models, model.heads, model.d
    model.M.copy_(sol.reshape(K, H, d, d).transpose(-1, -2))


def decompose(X: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """``u = (x1+x2)/sqrt2``, ``w = (x1-x2)/sqrt2``, ``s = sign<y,w>``."""
    import torch
    u = (X[:, 0] + X[:, 1]) / SQRT2
    w = (X[:, 0] - X[:, 1]) / SQRT2
    return u, w, torch.sign((y * w).sum(-1))


def G(model: GeneralizedAttention, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``G = sum_h (w^T M_h u + psi_h w^T M_h w)`` with ``psi_h = 2 phi_h[1] - 1``: (K, n)."""
    import torch
    u, w, _ = decompose(X, y)
    p = model.probabilities(X, y)[..., 0, :]  # (K, H, n, 2)
    psi = p[..., 0] - p[..., 1]
    wMu = torch.einsum("nd,khde,ne->khn", w, model.M, u)
    wMw = torch.einsum("nd,khde,ne->khn", w, model.M, w)
    return (wMu + psi * wMw).sum(1)


MODEL_CASES = (  # (d, r, H, score, normalizer)
    (6, 2, 3, "mlp", "softmax"),
    (5, 1, 2, "dot", "hardmax"),
    (8, 3, 4, "rope", "softmax"),
)
