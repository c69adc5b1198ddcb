"""``y[k] = x[k] W[k] + b[k]`` for K stacked models: the projections of ``MixedAttention`` and the
linear maps of the encoder stacks (docs/paper.md §6).

The native kernel (``workbench.native.fused_linear``) where it applies; otherwise torch's batched
GEMM (the bias inside it when every model has its own input), with the same results to float
tolerance.
"""

from __future__ import annotations

import torch

from workbench.native import fused_linear


def stacked_affine(x: torch.Tensor, W: torch.Tensor, b: torch.Tensor | None = None,
                   transposed: bool = False) -> torch.Tensor:
    """``(K, M, dout)`` from ``x (K|1, M, din)``, ``W (K, din, dout)`` (``(K, dout, din)`` read
    transposed with ``transposed``) and ``b (K, dout)`` or None."""
    if fused_linear.supports(x, W) and (b is None or b.dtype == W.dtype):
        return fused_linear.fused_linear(x, W, b, transposed)
    Wm = W.mT if transposed else W
    if b is not None and x.shape[0] == W.shape[0]:
        return torch.baddbmm(b.unsqueeze(1), x, Wm)
    out = x @ Wm
    return out if b is None else out + b.unsqueeze(1)
