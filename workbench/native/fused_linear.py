"""One affine map per stacked model, ``y[k] = x[k] W[k] + b[k]``, as a native kernel per direction
(float32 CPU): the projections of ``MixedAttention`` and the linear maps of the encoder stacks.

The products have inner dimensions of a few to a few dozen (``d = 8`` at the quick sweeps),
where batched GEMM calls run far below the core's peak; the kernel of ``ffn_kernels.c`` (built by
``native.build``) runs the same register-tiled product as ``native.fused_ffn``. A shared input
(one ``x`` for all models, ``x.shape[0] == 1`` or a stride-0 model axis) is read in place.
``W`` is ``(K, din, dout)``, or ``(K, dout, din)`` with ``transposed`` (read as its transpose).
Weight gradients are summed per fixed chunk of rows, then over chunks (``fused_ffn.sum_chunks``),
so nothing depends on the thread count or on the other models of the stack.
"""

from __future__ import annotations

from typing import Any

import torch

from workbench.native import build as native
from workbench.native.fused_ffn import CHUNK_ROWS, sum_chunks


class _FusedLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, W: torch.Tensor, b: torch.Tensor | None,
                transposed: bool) -> torch.Tensor:
        lib = native.lib()
        assert lib is not None
        K, M, din = W.shape[0], x.shape[1], x.shape[2]
        if x.stride(2) != 1 or x.stride(1) != din:
            x = x.contiguous()
        sxk = x.stride(0) if x.shape[0] == K else 0
        W = W.contiguous()
        b = None if b is None else b.contiguous()
        dout = W.shape[1] if transposed else W.shape[2]
        y = x.new_empty(K, M, dout)
        native.run(lib.linear_forward, K * -(-M // CHUNK_ROWS), M, din, dout, sxk,
                   int(transposed), x.data_ptr(), W.data_ptr(), None if b is None else
                   b.data_ptr(), y.data_ptr())
        ctx.save_for_backward(x, W)
        ctx.meta = (sxk, transposed, b is not None)
        return y

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        lib = native.lib()
        assert lib is not None
        x, W = ctx.saved_tensors
        sxk, transposed, has_bias = ctx.meta
        dy = grads[0].contiguous()
        K, M, dout = dy.shape
        din, C = x.shape[2], -(-M // CHUNK_ROWS)
        dx = x.new_empty(K, M, din) if ctx.needs_input_grad[0] else None
        dW, db = x.new_empty(K, C, *W.shape[1:]), x.new_empty(K, C, dout)
        native.run(lib.linear_backward, K * C, M, din, dout, sxk, int(transposed),
                   x.data_ptr(), W.data_ptr(), dy.data_ptr(),
                   None if dx is None else dx.data_ptr(), dW.data_ptr(), db.data_ptr())
        if dx is not None and x.shape[0] != K:
            dx = dx.sum(0, keepdim=True)
        return dx, sum_chunks(dW), sum_chunks(db) if has_bias else None, None


def supports(x: torch.Tensor, W: torch.Tensor) -> bool:
    """Whether the native kernel applies: float32 CPU tensors and the kernels built."""
    return (x.device.type == "cpu" and W.device.type == "cpu" and x.dtype == torch.float32
            and W.dtype == torch.float32 and native.available())


def fused_linear(x: torch.Tensor, W: torch.Tensor, b: torch.Tensor | None = None,
                 transposed: bool = False) -> torch.Tensor:
    """``(K, M, dout)``: ``x (K|1, M, din)`` by model ``k``'s ``W`` plus ``b (K, dout)``;
    callers check ``supports`` first."""
    return _FusedLinear.apply(x, W, b, transposed)
