"""A fused CPU kernel for the softmax attention core of ``MixedAttention`` (float32).

For K stacked models of mixed rank (model ``k``: ``P / r_k`` heads of rank ``r_k``) it computes
``o = softmax(scale_k q k^T) v`` per head in one pass over each sample, and its gradient in a
second pass that recomputes the probabilities (nothing of size ``B H T N`` is ever stored).
This is the memory-bound part of training the paper's small attention layers (docs/paper.md §6).
The C code is in ``cpu_kernels.c`` (built by ``native.build``); the mathematics in
``docs/derivations/fused_attention.md``.

``fused_attention(q, k, v, ranks, scales)`` is differentiable in ``q, k, v``; ``supports``
says whether it applies to a tensor (CPU, float32, softmax, kernel built).
"""

from __future__ import annotations

from typing import Any

import torch

from workbench.native import build as native
from workbench.native.build import available, unavailable_reason

__all__ = ["available", "fused_attention", "fused_self_attention", "supports",
           "unavailable_reason"]


def _blocks(B: int) -> int:
    return -(-B // native.LANES)


def _prep(t: torch.Tensor, K: int) -> torch.Tensor:
    t = t.expand(K, *t.shape[1:])
    return t if t.stride(-1) == 1 else t.contiguous()


def _forward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, ranks: torch.Tensor,
             scales: torch.Tensor) -> torch.Tensor:
    lib = native.lib()
    assert lib is not None
    K, B, T, P = q.shape
    o = torch.empty(K, B, T, P, dtype=q.dtype)
    ins = [native.view(t) for t in (q, k, v)]
    native.run(lib.fused_attention_forward, K * _blocks(B), B, T, k.shape[2], P,
               ranks.data_ptr(), scales.data_ptr(), *ins, native.view(o))
    return o


def _backward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, ranks: torch.Tensor,
              scales: torch.Tensor, do: torch.Tensor,
              grads: tuple[torch.Tensor, torch.Tensor, torch.Tensor]) -> None:
    """Write the gradients of ``q, k, v`` into ``grads`` (views; any strides, last axis 1)."""
    lib = native.lib()
    assert lib is not None
    K, B, T, P = q.shape
    ins = [native.view(t) for t in (q, k, v)]
    native.run(lib.fused_attention_backward, K * _blocks(B), B, T, k.shape[2], P,
               ranks.data_ptr(), scales.data_ptr(), *ins, native.view(_prep(do, K)),
               *(native.view(g) for g in grads))


class _FusedCore(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                ranks: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
        K = q.shape[0]
        ctx.lead = (k.shape[0], v.shape[0])
        q, k, v = _prep(q, K), _prep(k, K), _prep(v, K)
        ctx.save_for_backward(q, k, v, ranks, scales)
        return _forward(q, k, v, ranks, scales)

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        q, k, v, ranks, scales = ctx.saved_tensors
        dq = torch.empty(q.shape, dtype=q.dtype)
        dk, dv = torch.empty(k.shape, dtype=q.dtype), torch.empty(v.shape, dtype=q.dtype)
        _backward(q, k, v, ranks, scales, grads[0], (dq, dk, dv))
        k_lead, v_lead = ctx.lead
        dk = dk if k_lead == q.shape[0] else dk.sum(0, keepdim=True)
        dv = dv if v_lead == q.shape[0] else dv.sum(0, keepdim=True)
        return dq, dk, dv, None, None


class _FusedPacked(torch.autograd.Function):
    """Self-attention on one ``(K, B, N, 3P)`` projection ``[q | k | v]``, its gradient written
    into one packed buffer."""

    @staticmethod
    def forward(ctx: Any, qkv: torch.Tensor, ranks: torch.Tensor,
                scales: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(qkv, ranks, scales)
        return _forward(*_split(qkv), ranks, scales)

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        qkv, ranks, scales = ctx.saved_tensors
        dqkv = torch.empty(qkv.shape, dtype=qkv.dtype)
        _backward(*_split(qkv), ranks, scales, grads[0], _split(dqkv))
        return dqkv, None, None


def _split(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    P = t.shape[-1] // 3
    return t[..., :P], t[..., P : 2 * P], t[..., 2 * P :]


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
    _check(q, k, v, ranks, scales)
    return _FusedCore.apply(q, k, v, ranks.contiguous(), scales.contiguous())


def fused_self_attention(qkv: torch.Tensor, ranks: torch.Tensor,
                         scales: torch.Tensor) -> torch.Tensor:
    """Self-attention from one packed projection ``qkv (K, B, N, 3P)`` (biases included):
    ``(K, B, N, P)``, differentiable in ``qkv``."""
    if qkv.ndim != 4 or qkv.shape[-1] % 3 or qkv.stride(-1) != 1:
        raise ValueError(f"qkv must be (K, B, N, 3P) with a contiguous last axis (got "
                         f"{tuple(qkv.shape)})")
    _check(*_split(qkv), ranks, scales)
    return _FusedPacked.apply(qkv, ranks.contiguous(), scales.contiguous())


def _check(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, ranks: torch.Tensor,
           scales: torch.Tensor) -> None:
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
