"""Helpers shared by the Theorem 2 claim modules."""

from __future__ import annotations

import math

import torch

from workbench.models.attention import GeneralizedAttention

SQRT2 = math.sqrt(2.0)
_TINY = math.ulp(0.0)  # ">= _TINY" states "> 0"


# --------------------------------------------------------------------------- helpers
def _random_model(
    d: int, r: int, H: int, models: int, score: str, normalizer: str, g: torch.Generator
) -> GeneralizedAttention:
    """K random generalized-attention models (Eq. 2) of key-rank r, float64."""
    return GeneralizedAttention(
        d,
        r,
        H,
        models=models,
        score=score,
        normalizer=normalizer,
        scale=3.0,
        generator=g,
        dtype=torch.float64,
    )


def _decompose(X: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """``u = (x1+x2)/sqrt2``, ``w = (x1-x2)/sqrt2``, ``s = sign<y,w>``."""
    u = (X[:, 0] + X[:, 1]) / SQRT2
    w = (X[:, 0] - X[:, 1]) / SQRT2
    return u, w, torch.sign((y * w).sum(-1))


def _G(model: GeneralizedAttention, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``G = sum_h (w^T M_h u + psi_h w^T M_h w)`` with ``psi_h = 2 phi_h[1] - 1``: (K, n)."""
    u, w, _ = _decompose(X, y)
    p = model.probabilities(X, y)[..., 0, :]  # (K, H, n, 2)
    psi = p[..., 0] - p[..., 1]
    wMu = torch.einsum("nd,khde,ne->khn", w, model.M, u)
    wMw = torch.einsum("nd,khde,ne->khn", w, model.M, w)
    return (wMu + psi * wMw).sum(1)


_MODEL_CASES = (  # (d, r, H, score, normalizer)
    (6, 2, 3, "mlp", "softmax"),
    (5, 1, 2, "dot", "hardmax"),
    (8, 3, 4, "rope", "softmax"),
)
