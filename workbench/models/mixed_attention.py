"""Standard multi-head attention for K models of mixed rank and head count, in one call.

Model ``k`` is the standard multi-head attention of ``core.attention.MultiHeadAttention`` (the
rank-r dot-product special case of Eq. 2 in docs/paper.md) with ``H_k`` heads of rank ``r_k``:

    A_k(X, y) = sum_h W_O,h^T (W_V,h X + b_V,h) normalize(scale_k (W_K,h X + b_K,h)^T (W_Q,h y
                + b_Q,h)) + b_O.

Every model of one layer shares the projection width ``P = H_k r_k`` (in the paper's sweeps
``H = c d / r``, so ``H r`` is the same for every rank of a sweep). Projections are stored flat,
``Wq, Wk, Wv, Wo`` of shape ``(K, P, d)`` with row ``p = h r + i`` for coordinate ``i`` of head
``h`` (the row-major flattening of the core layer's ``(K, H, r, d)``), biases ``(K, P)`` and
``(K, d)``. So all K models, whatever their ``(r, H)`` split, share one projection matmul and one
output matmul; only the score/mixing core runs per run of equal ``(r, scale)``, with one of:

- ``sdpa``: ``torch.nn.functional.scaled_dot_product_attention`` over a ``(K B, H, T, r)`` view
  (fused kernels; softmax only);
- ``matmul``: batched ``q k^T``, normalisation, ``p v``;
- ``broadcast``: batch-innermost elementwise products summed over the head's coordinates
  (no tiny matmuls; best for rank 1 and 2 at small sizes);
- ``fused``: the whole stack in one call of the C kernel of ``native.fused_attention`` (CPU,
  float32, softmax; probabilities recomputed in the backward pass, never stored);
- ``membership``: the whole stack at once, with a 0/1 head-membership matrix ``G_k`` (``P x
  H_max``): ``s = (q * k) G``, softmax per head (unused head columns masked), ``o = (p G^T) v``.

``kernel="auto"`` picks ``fused`` where it applies (and the kernel could be built), else per
run: ``broadcast`` for ranks 1-2 at small sizes, else ``sdpa`` (``matmul`` for hardmax).
Shape rules are those of the core layers: keys ``(B, N, d)`` or ``(K, B, N, d)``; a lone query
``(B, d)``/``(K, B, d)``, T queries, or self-attention.
``select(k)`` returns model ``k`` as a core ``MultiHeadAttention`` (for checking).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from workbench.core.validation import (
    check_choice,
    check_dim,
    check_heads,
    check_index,
    check_int,
    check_positive,
    check_rank,
)
from workbench.models.attention import NORMALIZERS, MultiHeadAttention, init_attention_weights
from workbench.models.stacked_affine import stacked_affine
from workbench.native.fused_attention import fused_attention, fused_self_attention, supports

KERNELS: tuple[str, ...] = ("auto", "fused", "sdpa", "matmul", "broadcast", "membership")
_BROADCAST_MAX = 2**21  # auto: broadcast kernel while K B T N P stays under ~8 MB per run


def _per_model(name: str, value: object, models: int | None) -> list[object]:
    if isinstance(value, (list, tuple)):
        if not value:
            raise ValueError(f"{name} must hold at least one value (got an empty sequence)")
        if models is not None and len(value) != models:
            raise ValueError(f"{name} must hold models = {models} values (got {len(value)})")
        return list(value)
    return [value] * (models or 1)


def normalize_along(scores: torch.Tensor, normalizer: str, dim: int) -> torch.Tensor:
    """Softmax, or one-hot argmax (ties: lowest index), along ``dim``."""
    if normalizer == "softmax":
        return torch.softmax(scores, dim=dim)
    idx = scores.argmax(dim=dim, keepdim=True)
    return torch.zeros_like(scores).scatter_(dim, idx, 1.0)


class MixedAttention(nn.Module):
    """K standard multi-head attention models with per-model ``(rank, heads)``, ``H r = P`` shared.

    ``ranks`` and ``heads`` are ints (every model alike; then ``models`` sets K) or sequences
    of K values; ``scale`` likewise (default 1, as the core layer). ``bias`` adds the four
    biases. ``kernel`` in ``KERNELS``. Initialisation matches the core layer's draws.
    """

    def __init__(
        self,
        d: int,
        ranks: int | Sequence[int],
        heads: int | Sequence[int],
        models: int | None = None,
        normalizer: str = "softmax",
        scale: float | Sequence[float] = 1.0,
        bias: bool = False,
        kernel: str = "auto",
        generator: torch.Generator | None = None,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        self.d = check_dim(d)
        if models is not None:
            models = check_int("models", models, lo=1)
        seqs = [v for v in (ranks, heads, scale) if isinstance(v, (list, tuple))]
        K = models if models is not None else (len(seqs[0]) if seqs else 1)
        self.ranks = tuple(check_rank(r, self.d, "ranks") for r in _per_model("ranks", ranks, K))
        self.head_counts = tuple(check_heads(h, "heads") for h in _per_model("heads", heads, K))
        self.scales = tuple(check_positive("scale", s) for s in _per_model("scale", scale, K))
        self.models = K
        widths = {r * h for r, h in zip(self.ranks, self.head_counts)}
        if len(widths) != 1:
            raise ValueError(
                f"heads * ranks must be the same width P for every model (got {sorted(widths)})"
            )
        self.P = widths.pop()
        self.normalizer = check_choice("normalizer", normalizer, NORMALIZERS)
        self.kernel = check_choice("kernel", kernel, KERNELS)
        if self.kernel in ("sdpa", "fused") and self.normalizer != "softmax":
            raise ValueError(f"kernel {self.kernel!r} needs normalizer 'softmax' (got 'hardmax')")
        self.bias = bool(bias)
        shape = (K, self.P, self.d)
        self.Wq, self.Wk = nn.Parameter(torch.empty(shape)), nn.Parameter(torch.empty(shape))
        self.Wv, self.Wo = nn.Parameter(torch.empty(shape)), nn.Parameter(torch.empty(shape))
        if self.bias:
            self.bq = nn.Parameter(torch.zeros(K, self.P))
            self.bk = nn.Parameter(torch.zeros(K, self.P))
            self.bv = nn.Parameter(torch.zeros(K, self.P))
            self.bo = nn.Parameter(torch.zeros(K, self.d))
        self._runs = self._make_runs()
        self._rank_t: torch.Tensor  # per-model ranks and scales for the fused kernel
        self._scale_t: torch.Tensor
        self.register_buffer("_rank_t", torch.tensor(self.ranks), persistent=False)
        self.register_buffer("_scale_t", torch.tensor(self.scales), persistent=False)
        self.reset_parameters(generator)
        self.to(dtype)

    # -- configuration -------------------------------------------------------------------
    def _make_runs(self) -> list[tuple[int, int, int, int, float]]:
        """Maximal runs ``(start, stop, r, H, scale)`` of consecutive models alike."""
        runs: list[tuple[int, int, int, int, float]] = []
        for k, key in enumerate(zip(self.ranks, self.head_counts, self.scales)):
            if runs and runs[-1][2:] == key:
                runs[-1] = (runs[-1][0], k + 1, *key)
            else:
                runs.append((k, k + 1, *key))
        return runs

    def config(self) -> dict[str, object]:
        """Constructor arguments; ``MixedAttention(**config)`` builds a like layer."""
        return {"d": self.d, "ranks": list(self.ranks), "heads": list(self.head_counts),
                "models": self.models, "normalizer": self.normalizer,
                "scale": list(self.scales), "bias": self.bias, "kernel": self.kernel}

    def paper_params(self) -> int:
        """``H r d = P d``: the paper's parameter count of one model (§4)."""
        return self.P * self.d

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """As the core layer: projections ~ N(0, 1/d), ``Wo`` ~ N(0, 1/(r H)), biases 0."""
        init_attention_weights(self, self.d, self.P, generator)

    @classmethod
    def from_core(cls, layers: Sequence[MultiHeadAttention], kernel: str = "auto"
                  ) -> MixedAttention:
        """Stack the models of core layers (any ``(r, H)`` with equal ``H r``), in order."""
        if not layers:
            raise ValueError("layers must hold at least one MultiHeadAttention")
        first = layers[0]
        ranks, heads, scales = [], [], []
        for i, layer in enumerate(layers):
            if not isinstance(layer, MultiHeadAttention):
                raise ValueError(f"layers[{i}] must be a MultiHeadAttention")
            if (layer.d, layer.bias, layer.normalizer) != (first.d, first.bias, first.normalizer):
                raise ValueError(f"layers[{i}] must have the d, bias and normalizer of layers[0]")
            ranks += [layer.rank] * layer.models
            heads += [layer.heads] * layer.models
            scales += [layer.scale] * layer.models
        out = cls(first.d, ranks, heads, normalizer=first.normalizer, scale=scales,
                  bias=first.bias, kernel=kernel, dtype=first.Wq.dtype)
        names = ("Wq", "Wk", "Wv", "Wo") + (("bq", "bk", "bv", "bo") if first.bias else ())
        with torch.no_grad():
            for name in names:
                dst = getattr(out, name)
                dst.copy_(torch.cat([getattr(m, name).reshape(m.models, *dst.shape[1:])
                                     for m in layers]))
        return out.to(first.Wq.device)

    def select(self, k: int) -> MultiHeadAttention:
        """Model ``k`` alone as a core ``MultiHeadAttention`` (parameters copied)."""
        k = check_index("k", k, self.models)
        r, H = self.ranks[k], self.head_counts[k]
        core = MultiHeadAttention(self.d, r, H, models=1, normalizer=self.normalizer,
                                  scale=self.scales[k], bias=self.bias, dtype=self.Wq.dtype)
        with torch.no_grad():
            for name in ("Wq", "Wk", "Wv", "Wo"):
                getattr(core, name).copy_(getattr(self, name)[k].reshape(1, H, r, self.d))
            if self.bias:
                for name in ("bq", "bk", "bv"):
                    getattr(core, name).copy_(getattr(self, name)[k].reshape(1, H, r))
                core.bo.copy_(self.bo[k : k + 1])
        return core.to(self.Wq.device)

    # -- forward -------------------------------------------------------------------------
    def _prepare(self, X: torch.Tensor, y: torch.Tensor | None
                 ) -> tuple[torch.Tensor, torch.Tensor | None, bool]:
        """Keys ``(Kx, B, N, d)``, queries ``(Ky, B, T, d)`` (None: self-attention), lone flag."""
        if not isinstance(X, torch.Tensor) or X.ndim not in (3, 4) or not X.is_floating_point():
            raise ValueError(f"X must be a floating tensor of shape (B, N, d) or (K, B, N, d) "
                             f"with d = {self.d} (got {_desc(X)})")
        if X.shape[-1] != self.d:
            raise ValueError(f"X must have last dimension d = {self.d} (got {X.shape[-1]})")
        if X.ndim == 4 and X.shape[0] not in (1, self.models):
            raise ValueError(
                f"X must have leading dimension K in {{1, {self.models}}} (got {X.shape[0]})")
        if X.shape[-2] < 1:
            raise ValueError("N must be an integer >= 1 (got 0 keys in X)")
        Xk = X if X.ndim == 4 else X.unsqueeze(0)
        if y is None:
            return Xk, None, False
        if not isinstance(y, torch.Tensor) or y.ndim not in (X.ndim - 1, X.ndim):
            raise ValueError(f"y must have {X.ndim - 1} dimensions (one query) or {X.ndim} "
                             f"(T queries) to match X of shape {tuple(X.shape)} (got {_desc(y)})")
        lone = y.ndim == X.ndim - 1
        Yk = y.unsqueeze(-2) if lone else y
        Yk = Yk if X.ndim == 4 else Yk.unsqueeze(0)
        if Yk.shape[-1] != self.d or Yk.shape[1] != Xk.shape[1] or Yk.shape[0] not in (
                1, self.models):
            raise ValueError(f"y must have batch {Xk.shape[1]} and last dimension d = {self.d} "
                             f"(got shape {tuple(y.shape)})")
        return Xk, Yk, lone

    def _project(self, Z: torch.Tensor, names: tuple[str, ...]) -> torch.Tensor:
        """``Z (Kz, B, L, d)`` by the stacked rows of ``names``: ``(K, B, L, len(names) P)``."""
        Kz, B, L, d = Z.shape
        W = torch.cat([getattr(self, n) for n in names], 1) if len(names) > 1 else getattr(
            self, names[0])
        b = torch.cat([getattr(self, "b" + n[1]) for n in names], 1) if self.bias else None
        out = stacked_affine(Z.reshape(Kz, B * L, d), W, b, transposed=True)
        return out.view(self.models, B, L, -1)

    def forward(self, X: torch.Tensor, y: torch.Tensor | None = None) -> torch.Tensor:
        Xk, Yk, lone = self._prepare(X, y)
        P = self.P
        if Yk is None and self.kernel in ("auto", "fused") and supports(Xk, self.normalizer):
            return self._output(self._fused_self(Xk))
        if Yk is None:
            q, k, v = self._project(Xk, ("Wq", "Wk", "Wv")).split(P, dim=-1)
        else:
            q = self._project(Yk, ("Wq",))
            k, v = self._project(Xk, ("Wk", "Wv")).split(P, dim=-1)
        whole = self._kernel_for(q.shape[1], q.shape[2], k.shape[2],
                                 fused=supports(q, self.normalizer))
        if whole == "fused":
            o = fused_attention(q, k, v, self._rank_t, self._scale_t.float())
        elif whole == "membership":
            o = self._membership(q, k, v)
        else:
            outs = []
            for a, b, r, H, s in self._runs:
                kern = self._kernel_for(q.shape[1], q.shape[2], k.shape[2], r, b - a)
                outs.append(_CORES[kern](q[a:b], k[a:b], v[a:b], r, H, s, self.normalizer))
            o = outs[0] if len(outs) == 1 else torch.cat(outs)
        out = self._output(o)
        return out.squeeze(-2) if lone else out

    def _fused_self(self, X: torch.Tensor) -> torch.Tensor:
        """Self-attention core through the packed kernel: one projection GEMM with its bias (whose
        gradient the GEMM's backward pass sums) and one gradient buffer for ``q, k, v``."""
        qkv = self._project(X, ("Wq", "Wk", "Wv"))
        return fused_self_attention(qkv, self._rank_t, self._scale_t.float())

    def _output(self, o: torch.Tensor) -> torch.Tensor:
        """``o W_O + b_O`` for the stacked head outputs ``o (K, B, T, P)``."""
        K, B, T, P = o.shape
        out = stacked_affine(o.reshape(K, B * T, P), self.Wo, self.bo if self.bias else None)
        return out.view(K, B, T, self.d)

    def _kernel_for(self, B: int, T: int, N: int, r: int | None = None, K: int = 1,
                    fused: bool = False) -> str:
        if self.kernel == "auto" and r is None:
            return "fused" if fused else "auto"
        if self.kernel != "auto" or r is None:
            return self.kernel
        if r <= 2 and K * B * T * N * self.P <= _BROADCAST_MAX:
            return "broadcast"
        return "sdpa" if self.normalizer == "softmax" else "matmul"

    def _membership(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """All K models in one set of ops via the 0/1 head-membership matrices ``G_k``."""
        K, B, T, P = q.shape
        N, Hm = k.shape[2], max(self.head_counts)
        G = torch.zeros(K, P, Hm, dtype=q.dtype, device=q.device)
        p_idx = torch.arange(P, device=q.device)
        for i, r in enumerate(self.ranks):
            G[i, p_idx, p_idx // r] = 1.0
        used = G.sum(1) > 0  # (K, Hm)
        scale = torch.tensor(self.scales, dtype=q.dtype, device=q.device).view(K, 1, 1)
        prod = (q[:, :, :, None, :] * k[:, :, None, :, :]).reshape(K, B * T * N, P)
        s = (scale * (prod @ G)).view(K, B, T, N, Hm)
        s = s.masked_fill(~used[:, None, None, None, :], 0.0)  # unused heads: never read
        pr = normalize_along(s, self.normalizer, dim=3)
        pe = (pr.reshape(K, B * T * N, Hm) @ G.mT).view(K, B, T, N, P)
        return (pe * v[:, :, None, :, :]).sum(3)


def _core_sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, r: int, H: int,
               scale: float, normalizer: str) -> torch.Tensor:
    K, B, T, P = q.shape
    N = k.shape[2]
    qh = q.reshape(K * B, T, H, r).transpose(1, 2)
    kh = k.reshape(K * B, N, H, r).transpose(1, 2)
    vh = v.reshape(K * B, N, H, r).transpose(1, 2)
    o = F.scaled_dot_product_attention(qh, kh, vh, scale=scale)  # (K B, H, T, r)
    return o.transpose(1, 2).reshape(K, B, T, P)


def _core_matmul(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, r: int, H: int,
                 scale: float, normalizer: str) -> torch.Tensor:
    K, B, T, P = q.shape
    N = k.shape[2]
    qh = q.reshape(K, B, T, H, r).transpose(2, 3)  # (K, B, H, T, r)
    kh = k.reshape(K, B, N, H, r).transpose(2, 3)
    vh = v.reshape(K, B, N, H, r).transpose(2, 3)
    p = normalize_along(scale * (qh @ kh.mT), normalizer, dim=-1)
    return (p @ vh).transpose(2, 3).reshape(K, B, T, P)


def _core_broadcast(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, r: int, H: int,
                    scale: float, normalizer: str) -> torch.Tensor:
    """Batch innermost: ``s[k,h,t,n,b] = sum_i q[k,h,i,t,b] k[k,h,i,n,b]``, no tiny matmuls."""
    K, B, T, P = q.shape
    N = k.shape[2]
    qt = q.permute(0, 3, 2, 1).contiguous().view(K, H, r, T, 1, B)
    kt = k.permute(0, 3, 2, 1).contiguous().view(K, H, r, 1, N, B)
    vt = v.permute(0, 3, 2, 1).contiguous().view(K, H, r, 1, N, B)
    s = (qt * kt).squeeze(2) if r == 1 else (qt * kt).sum(2)  # (K, H, T, N, B)
    p = normalize_along(s * scale, normalizer, dim=3)
    o = (p.unsqueeze(2) * vt).sum(4)  # (K, H, r, T, B)
    return o.view(K, P, T, B).permute(0, 3, 2, 1)


_CORES = {"sdpa": _core_sdpa, "matmul": _core_matmul, "broadcast": _core_broadcast}


def _desc(t: object) -> str:
    if isinstance(t, torch.Tensor):
        return f"{t.dtype} tensor of shape {tuple(t.shape)}"
    return type(t).__name__

