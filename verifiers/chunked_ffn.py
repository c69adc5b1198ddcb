"""The encoder's feed-forward block, ``relu(x W1 + b1) W2 + b2`` for K stacked models, computed
over chunks of tokens so the hidden layer never leaves the cache.

The hidden activations of a batched step (``K x tokens x ffn_width``, 8 MiB at d = 16, K = 16)
are the largest tensors of the encoder of PAPER.md §4; materialised whole, each of the six
passes over them (GEMM, ReLU, and four in the backward pass) goes to main memory. Here the
forward pass runs chunk by chunk and keeps nothing but its inputs; the backward pass recomputes
each chunk's hidden layer and accumulates the weight gradients. Same mathematics as the plain
form (checked against it in ``tests/test_models.py``), summed in a different order.
"""

from __future__ import annotations

from typing import Any

import torch

CHUNK_BYTES = 1 << 20  # hidden-layer bytes per chunk (all K models together)


def _rows(K: int, M: int, f: int) -> int:
    return max(1, min(M, CHUNK_BYTES // (4 * K * f)))


class _ChunkedFFN(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, W1: torch.Tensor, b1: torch.Tensor,
                W2: torch.Tensor, b2: torch.Tensor) -> torch.Tensor:
        K, M, _ = x.shape
        step = _rows(K, M, W1.shape[2])
        out = torch.empty(K, M, W2.shape[2], dtype=x.dtype, device=x.device)
        for a in range(0, M, step):
            h = torch.baddbmm(b1.unsqueeze(1), x[:, a : a + step], W1).relu_()
            torch.baddbmm(b2.unsqueeze(1), h, W2, out=out[:, a : a + step])
        ctx.save_for_backward(x, W1, b1, W2)
        return out

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor) -> tuple[torch.Tensor, ...]:
        x, W1, b1, W2 = ctx.saved_tensors
        dy = grads[0]
        K, M, _ = x.shape
        step = _rows(K, M, W1.shape[2])
        dx = torch.empty_like(x, memory_format=torch.contiguous_format)
        dW1, dW2 = torch.zeros_like(W1), torch.zeros_like(W2)
        db1 = torch.zeros_like(b1)
        for a in range(0, M, step):
            xc, dyc = x[:, a : a + step], dy[:, a : a + step]
            h = torch.baddbmm(b1.unsqueeze(1), xc, W1).relu_()
            dW2.baddbmm_(h.mT, dyc)
            dpre = torch.ops.aten.threshold_backward(torch.bmm(dyc, W2.mT), h, 0.0)
            dW1.baddbmm_(xc.mT, dpre)
            db1.add_(dpre.sum(1))
            torch.bmm(dpre, W1.mT, out=dx[:, a : a + step])
        return dx, dW1, db1, dW2, dy.sum(1)


def chunked_ffn(x: torch.Tensor, W1: torch.Tensor, b1: torch.Tensor, W2: torch.Tensor,
                b2: torch.Tensor) -> torch.Tensor:
    """``relu(x W1 + b1) W2 + b2`` for ``x (K, M, d)``, ``W1 (K, d, f)``, ``W2 (K, f, d')``."""
    return _ChunkedFFN.apply(x, W1, b1, W2, b2)
