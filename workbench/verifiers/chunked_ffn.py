"""The encoder's feed-forward block, ``relu(x W1 + b1) W2 + b2`` for K stacked models, computed a
few models at a time so each group's hidden layer stays in the cache.

The hidden activations of a batched step (``K x tokens x ffn_width``, 8 MiB at d = 16, K = 16)
are the largest tensors of the encoder of docs/paper.md §6; materialised for all K models at once,
each of the passes over them (GEMM, ReLU, and three in the backward pass) goes to main memory.
Here the forward pass runs group by group and keeps only its inputs; the backward pass
recomputes each group's hidden layer. Groups are whole models (contiguous slices, so the GEMMs
stay batched and no gradient is summed across groups), and the first layer's bias rides inside
its GEMM as a row of ``[W1; b1]`` against ``[x | 1]``. Same mathematics as the plain form
(checked against it in ``tests/verifiers/test_chunked_ffn.py``).

``chunked_ffn`` runs the native kernel of ``workbench.native.fused_ffn`` (the same scheme in one
call per direction) where it applies (float32 on the CPU, kernels built, ``WORKBENCH_FUSED`` not
0), and the torch form below otherwise.
"""

from __future__ import annotations

from typing import Any

import torch

from workbench.native import fused_ffn

CHUNK_BYTES = 1 << 20  # hidden-layer bytes per group of models


def _group(K: int, M: int, f: int) -> int:
    return max(1, min(K, CHUNK_BYTES // (4 * M * f)))


def _augment(x: torch.Tensor, W1: torch.Tensor, b1: torch.Tensor
             ) -> tuple[torch.Tensor, torch.Tensor]:
    """``[x | 1]`` and ``[W1; b1]``: the first layer's bias inside its GEMM (no bias pass)."""
    ones = x.new_ones(1, 1, 1).expand(*x.shape[:2], 1)
    return torch.cat((x, ones), -1), torch.cat((W1, b1.unsqueeze(1)), 1)


class _ChunkedFFN(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, W1: torch.Tensor, b1: torch.Tensor,
                W2: torch.Tensor, b2: torch.Tensor) -> torch.Tensor:
        K, M, _ = x.shape
        g = _group(K, M, W1.shape[2])
        xa, Wa = _augment(x, W1, b1)
        out = torch.empty(K, M, W2.shape[2], dtype=x.dtype, device=x.device)
        for a in range(0, K, g):
            h = torch.bmm(xa[a : a + g], Wa[a : a + g]).relu_()
            torch.baddbmm(b2[a : a + g].unsqueeze(1), h, W2[a : a + g], out=out[a : a + g])
        ctx.save_for_backward(xa, Wa, W2)
        return out

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor) -> tuple[torch.Tensor, ...]:
        xa, Wa, W2 = ctx.saved_tensors
        dy = grads[0].contiguous()
        K, M, d1 = xa.shape
        g = _group(K, M, Wa.shape[2])
        dx = torch.empty(K, M, d1 - 1, dtype=xa.dtype, device=xa.device)
        dWa, dW2 = torch.empty_like(Wa), torch.empty_like(W2)
        for a in range(0, K, g):
            s = slice(a, a + g)
            h = torch.bmm(xa[s], Wa[s]).relu_()
            torch.bmm(h.mT, dy[s], out=dW2[s])
            dpre = torch.ops.aten.threshold_backward(torch.bmm(dy[s], W2[s].mT), h, 0.0)
            torch.bmm(xa[s].mT, dpre, out=dWa[s])
            torch.bmm(dpre, Wa[s, : d1 - 1].mT, out=dx[s])
        return dx, dWa[:, : d1 - 1], dWa[:, d1 - 1], dW2, dy.sum(1)


def chunked_ffn(x: torch.Tensor, W1: torch.Tensor, b1: torch.Tensor, W2: torch.Tensor,
                b2: torch.Tensor) -> torch.Tensor:
    """``relu(x W1 + b1) W2 + b2`` for ``x (K, M, d)``, ``W1 (K, d, f)``, ``W2 (K, f, d')``."""
    if fused_ffn.supports(x, W1, b1, W2, b2):
        return fused_ffn.fused_ffn(x, W1, b1, W2, b2)
    return _ChunkedFFN.apply(x, W1, b1, W2, b2)
