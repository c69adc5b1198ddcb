"""The encoder's feed-forward block ``relu(x W1 + b1) W2 + b2`` for K stacked models as one native
kernel per direction (float32 CPU; docs/derivations/fused_ffn.md).

At the sizes of the quick sweeps (d = 8, FFN 64) the block's products have inner dimensions 8
and 64, where batched GEMM calls run far below the core's peak and the forward, recompute and
backward passes each stream the hidden layer. The kernel of ``ffn_kernels.c`` (built by
``native.build``) goes through each model's rows a small block at a time, keeps that block's
hidden layer in cache, and recomputes it in the backward pass (only ``x`` is kept). The weight
gradients are summed per fixed chunk of rows, then over chunks, so nothing depends on the thread
count or on the other models of the stack.
"""

from __future__ import annotations

from typing import Any

import torch

from workbench.native import build as native

CHUNK_ROWS = 1024  # rows per partial weight-gradient sum, as FFN_CHUNK in ffn_kernels.c


def _chunks(M: int) -> int:
    return -(-M // CHUNK_ROWS)


class _FusedFFN(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, W1: torch.Tensor, b1: torch.Tensor,
                W2: torch.Tensor, b2: torch.Tensor) -> torch.Tensor:
        lib = native.lib()
        assert lib is not None
        x, W1, b1, W2, b2 = (t.contiguous() for t in (x, W1, b1, W2, b2))
        K, M, d = x.shape
        f, e = W1.shape[2], W2.shape[2]
        y = x.new_empty(K, M, e)
        native.run(lib.ffn_forward, K * _chunks(M), M, d, f, e, x.data_ptr(), W1.data_ptr(),
                   b1.data_ptr(), W2.data_ptr(), b2.data_ptr(), y.data_ptr())
        ctx.save_for_backward(x, W1, b1, W2)
        return y

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor) -> tuple[torch.Tensor, ...]:
        lib = native.lib()
        assert lib is not None
        x, W1, b1, W2 = ctx.saved_tensors
        dy = grads[0].contiguous()
        K, M, d = x.shape
        f, e, C = W1.shape[2], W2.shape[2], _chunks(M)
        dx = torch.empty_like(x)
        dW1, db1 = x.new_empty(K, C, d, f), x.new_empty(K, C, f)
        dW2, db2 = x.new_empty(K, C, f, e), x.new_empty(K, C, e)
        native.run(lib.ffn_backward, K * C, M, d, f, e, x.data_ptr(), W1.data_ptr(),
                   b1.data_ptr(), W2.data_ptr(), dy.data_ptr(), dx.data_ptr(), dW1.data_ptr(),
                   db1.data_ptr(), dW2.data_ptr(), db2.data_ptr())
        return dx, *(sum_chunks(t) for t in (dW1, db1, dW2, db2))


def sum_chunks(parts: torch.Tensor) -> torch.Tensor:
    """A weight gradient from its per-chunk partial sums ``(K, chunks, ...)``, in chunk order."""
    return parts[:, 0] if parts.shape[1] == 1 else parts.sum(1)


def supports(x: torch.Tensor, *weights: torch.Tensor) -> bool:
    """Whether the native kernel applies: float32 CPU tensors and the kernels built."""
    return (all(t.device.type == "cpu" and t.dtype == torch.float32 for t in (x, *weights))
            and native.available())


def fused_ffn(x: torch.Tensor, W1: torch.Tensor, b1: torch.Tensor, W2: torch.Tensor,
              b2: torch.Tensor) -> torch.Tensor:
    """``relu(x W1 + b1) W2 + b2`` for ``x (K, M, d)``; callers check ``supports`` first."""
    return _FusedFFN.apply(x, W1, b1, W2, b2)
