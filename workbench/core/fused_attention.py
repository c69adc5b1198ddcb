"""A fused CPU kernel for the softmax attention core of ``MixedAttention`` (float32).

For K stacked models of mixed rank (model ``k``: ``P / r_k`` heads of rank ``r_k``) it computes
``o = softmax(scale_k q k^T) v`` per head in one pass over each sample, and its gradient in a
second pass that recomputes the probabilities (nothing of size ``B H T N`` is ever stored).
This is the memory-bound part of training the paper's small attention layers (PAPER.md §4).
The C code is in ``native_kernels.c`` (built by ``core.native``); the mathematics in
``docs/derivations/fused_attention.md``.

``fused_attention(q, k, v, ranks, scales)`` is differentiable in ``q, k, v``; ``supports``
says whether it applies to a tensor (CPU, float32, softmax, kernel built).
"""

from __future__ import annotations

from typing import Any

import torch

from workbench.core import native
from workbench.core.native import available, unavailable_reason

__all__ = ["available", "fused_attention", "supports", "unavailable_reason"]


def _blocks(B: int) -> int:
    return -(-B // native.LANES)


def _prep(t: torch.Tensor, K: int) -> torch.Tensor:
    t = t.expand(K, *t.shape[1:])
    return t if t.stride(-1) == 1 else t.contiguous()


class _FusedCore(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                ranks: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
        lib = native.lib()
        assert lib is not None
        K, B, T, P = q.shape
        N = k.shape[2]
        k_lead, v_lead = k.shape[0], v.shape[0]
        q, k, v = _prep(q, K), _prep(k, K), _prep(v, K)
        o = torch.empty(K, B, T, P, dtype=q.dtype)
        native.run(lib.fused_attention_forward, K * _blocks(B), B, T, N, P, ranks.data_ptr(),
                   scales.data_ptr(), native.view(q), native.view(k), native.view(v),
                   o.data_ptr())
        ctx.save_for_backward(q, k, v, ranks, scales)
        ctx.lead = (k_lead, v_lead)
        return o

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        lib = native.lib()
        assert lib is not None
        q, k, v, ranks, scales = ctx.saved_tensors
        do = _prep(grads[0], q.shape[0])
        K, B, T, P = q.shape
        N = k.shape[2]
        dq, dk, dv = torch.empty_like(q, memory_format=torch.contiguous_format), \
            torch.empty(K, B, N, P, dtype=q.dtype), torch.empty(K, B, N, P, dtype=q.dtype)
        views = [native.view(t) for t in (q, k, v, do)]
        native.run(lib.fused_attention_backward, K * _blocks(B), B, T, N, P, ranks.data_ptr(),
                   scales.data_ptr(), *views, dq.data_ptr(), dk.data_ptr(), dv.data_ptr())
        k_lead, v_lead = ctx.lead
        dk = dk if k_lead == K else dk.sum(0, keepdim=True)
        dv = dv if v_lead == K else dv.sum(0, keepdim=True)
        return dq, dk, dv, None, None


def supports(q: torch.Tensor, normalizer: str) -> bool:
    """Whether the fused kernel applies: CPU float32 softmax attention, kernel built."""
    return (normalizer == "softmax" and q.device.type == "cpu" and q.dtype == torch.float32
            and native.available())


def fused_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                    ranks: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    """``(K, B, T, P)`` softmax attention outputs of K mixed-rank models (see module doc).

    ``q (K, B, T, P)``, ``k, v (K|1, B, N, P)`` float32 on the CPU; ``ranks`` int64 ``(K,)``
    dividing ``P``; ``scales`` float32 ``(K,)``. Differentiable in ``q, k, v``.
    """
    if not native.available():
        raise RuntimeError("the fused attention kernel is unavailable: "
                           f"{native.unavailable_reason()}")
    if not all(t.dtype == torch.float32 and t.device.type == "cpu" for t in (q, k, v)):
        raise ValueError("q, k and v must be float32 CPU tensors for the fused kernel "
                         f"(got {q.dtype} on {q.device.type})")
    K, B, T, P = q.shape
    if ranks.dtype != torch.int64 or ranks.shape != (K,) or bool((P % ranks).any()):
        raise ValueError(f"ranks must be an int64 tensor of K = {K} divisors of P = {P}")
    if scales.dtype != torch.float32 or scales.shape != (K,):
        raise ValueError(f"scales must be a float32 tensor of shape ({K},)")
    if k.shape[1:] != v.shape[1:] or k.shape[1] != B or k.shape[3] != P:
        raise ValueError(f"k and v must have shape (K, {B}, N, {P}) (got {tuple(k.shape)}, "
                         f"{tuple(v.shape)})")
    return _FusedCore.apply(q, k, v, ranks.contiguous(), scales.contiguous())
