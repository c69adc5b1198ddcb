"""LayerNorm over the last axis with a per-model affine map, for K stacked models (float32 CPU).

``y[k, m] = (x[k, m] - mean) / sqrt(var + eps) * w[k] + b[k]``: the LayerNorm of the encoder
layers of docs/paper.md §6, every model with its own ``w, b``. ``torch.nn.functional.layer_norm``
takes one shared affine map, so the plain form needs a second pass (and three more in the
backward pass); the native kernel of ``native.build`` does each direction in one pass over the
rows. The weight gradients are summed per fixed chunk of rows, then over chunks, so they do not
depend on the thread count or on how many models are stacked.
"""

from __future__ import annotations

from typing import Any

import torch

from workbench.native import build as native

_CHUNK_ROWS = 64 * native.LANES  # rows per partial weight-gradient sum (LN_CHUNK blocks)


def _items(K: int, M: int) -> tuple[int, int]:
    chunks = -(-M // _CHUNK_ROWS)
    return K * chunks, chunks


class _LayerNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor,
                eps: float) -> torch.Tensor:
        lib = native.lib()
        assert lib is not None
        K, M, d = x.shape
        x, w, b = x.contiguous(), w.contiguous(), b.contiguous()
        y = torch.empty_like(x)
        mean, rstd = x.new_empty(K, M), x.new_empty(K, M)
        native.run(lib.layernorm_forward, _items(K, M)[0], M, d, x.data_ptr(), w.data_ptr(),
                   b.data_ptr(), eps, y.data_ptr(), mean.data_ptr(), rstd.data_ptr())
        ctx.save_for_backward(x, w, mean, rstd)
        return y

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        lib = native.lib()
        assert lib is not None
        x, w, mean, rstd = ctx.saved_tensors
        dy = grads[0].contiguous()
        K, M, d = x.shape
        items, chunks = _items(K, M)
        dx = torch.empty_like(x)
        dwp, dbp = x.new_empty(K, chunks, d), x.new_empty(K, chunks, d)
        native.run(lib.layernorm_backward, items, M, d, x.data_ptr(), w.data_ptr(),
                   mean.data_ptr(), rstd.data_ptr(), dy.data_ptr(), dx.data_ptr(),
                   dwp.data_ptr(), dbp.data_ptr())
        return dx, dwp.sum(1), dbp.sum(1), None


def supports(x: torch.Tensor) -> bool:
    """Whether the native kernel applies: a float32 CPU tensor and the kernels built."""
    return x.device.type == "cpu" and x.dtype == torch.float32 and native.available()


def layer_norm_apply(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                     eps: float) -> torch.Tensor:
    """The native LayerNorm of ``x (K, ..., d)``; callers check ``supports(x)`` first."""
    K, d = x.shape[0], x.shape[-1]
    return _LayerNorm.apply(x.reshape(K, -1, d), weight, bias, eps).view(x.shape)
