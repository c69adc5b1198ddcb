"""Per-model LayerNorm for K stacked models: ``y[k] = LN(x[k]) * w[k] + b[k]`` (docs/paper.md §6).

The native one-pass kernel (``workbench.native.fused_layernorm``) where it applies; otherwise the
pure-torch form below (``F.layer_norm`` then the per-model affine map), with the same results to
float tolerance.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from workbench.native import fused_layernorm


def stacked_layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                       eps: float = 1e-5) -> torch.Tensor:
    """LayerNorm of ``x (K, ..., d)`` with model ``k``'s affine ``weight[k], bias[k]`` (``(K, d)``).

    The native kernel where ``supports(x)``; else ``F.layer_norm`` and the affine map in torch.
    """
    K, d = x.shape[0], x.shape[-1]
    if weight.shape != (K, d) or bias.shape != (K, d):
        raise ValueError(f"weight and bias must have shape (K, d) = ({K}, {d}) "
                         f"(got {tuple(weight.shape)} and {tuple(bias.shape)})")
    if not fused_layernorm.supports(x) or weight.dtype != x.dtype:
        y = F.layer_norm(x, (d,), eps=eps)
        shape = (K,) + (1,) * (x.ndim - 2) + (d,)
        return torch.addcmul(bias.view(shape), y, weight.view(shape))
    return fused_layernorm.layer_norm_apply(x, weight, bias, eps)
