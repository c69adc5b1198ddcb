"""Attention layers with stacked parameters: K independent models in one call.

- ``GeneralizedAttention``: ``A(X, y) = sum_h M_h X phi_h(W_h X, y)`` (docs/paper.md, Eq. 2), the
  class the lower bounds (Theorems 2 and 3) are proved against.
- ``MultiHeadAttention``: H standard heads of rank r, ``W_O^T W_V X softmax(K^T Q)``.

Shape rules (both layers). Keys ``X`` are ``(B, N, d)`` (shared by the K models) or
``(K, B, N, d)``. Queries ``y`` have one dimension less than ``X`` for a lone query
(``(B, d)`` / ``(K, B, d)``, output ``(K, B, d)``), the same number for T queries
(``(B, T, d)`` / ``(K, B, T, d)``, output ``(K, B, T, d)``), or are omitted for self-attention.
Keys sit at positions ``0..N-1``; a lone query at position ``N``; T queries at ``0..T-1``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn

from workbench.core.validation import (
    check_choice,
    check_index,
    check_int,
    check_layer,
    check_positive,
)
from workbench.models.scores import DotScore, ScoreFunction, make_score, pair_scores, project

NORMALIZERS: tuple[str, ...] = ("softmax", "hardmax")


def normalize(scores: torch.Tensor, normalizer: str) -> torch.Tensor:
    """Probability vector over the last axis: softmax, or one-hot argmax (ties: lowest index)."""
    if normalizer == "softmax":
        return torch.softmax(scores, dim=-1)
    idx = scores.argmax(dim=-1, keepdim=True)
    return torch.zeros_like(scores).scatter_(-1, idx, 1.0)


class StackedAttention(nn.Module):
    """Common shape handling, cloning, ``select`` and ``stack`` for stacked layers."""

    def __init__(self, d: int, rank: int, heads: int, models: int, normalizer: str, scale: float):
        super().__init__()
        self.d, self.rank, self.heads = check_layer(d, rank, heads)
        self.models = check_int("models", models, lo=1)
        self.normalizer = check_choice("normalizer", normalizer, NORMALIZERS)
        self.scale = check_positive("scale", scale)

    # -- configuration -------------------------------------------------------------------
    def config(self) -> dict[str, Any]:
        """Constructor arguments; ``type(self)(**config)`` builds a like layer."""
        return {
            "d": self.d,
            "rank": self.rank,
            "heads": self.heads,
            "models": self.models,
            "normalizer": self.normalizer,
            "scale": self.scale,
        }

    def select(self, k: int) -> StackedAttention:
        """Model ``k`` alone, as a layer with ``models=1`` (parameters copied)."""
        k = check_index("k", k, self.models)
        return stack_models([self], index=k)

    # -- shapes --------------------------------------------------------------------------
    def _prepare(
        self, X: torch.Tensor, y: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, bool]:
        """Return keys ``(Kx,1,B,N,d)``, queries ``(Ky,1,B,T,d)``, positions, lone-query flag."""
        if not isinstance(X, torch.Tensor) or X.ndim not in (3, 4) or not X.is_floating_point():
            raise ValueError(
                f"X must be a floating tensor of shape (B, N, d) or (K, B, N, d) with d = {self.d}"
                f" (got {_desc(X)})"
            )
        if X.shape[-1] != self.d:
            raise ValueError(f"X must have last dimension d = {self.d} (got {X.shape[-1]})")
        if X.ndim == 4 and X.shape[0] not in (1, self.models):
            raise ValueError(
                f"X must have leading dimension K in {{1, {self.models}}} (got {X.shape[0]})"
            )
        if X.shape[-2] < 1:
            raise ValueError("N must be an integer >= 1 (got 0 keys in X)")
        Xk = X if X.ndim == 4 else X.unsqueeze(0)
        lone = False
        if y is None:
            Yk = Xk
        else:
            if not isinstance(y, torch.Tensor) or y.ndim not in (X.ndim - 1, X.ndim):
                raise ValueError(
                    f"y must have {X.ndim - 1} dimensions (one query) or {X.ndim} (T queries) to"
                    f" match X of shape {tuple(X.shape)} (got {_desc(y)})"
                )
            lone = y.ndim == X.ndim - 1
            Yk = y.unsqueeze(-2) if lone else y
            Yk = Yk if X.ndim == 4 else Yk.unsqueeze(0)
            if (
                Yk.shape[-1] != self.d
                or Yk.shape[1] != Xk.shape[1]
                or Yk.shape[0]
                not in (
                    1,
                    self.models,
                )
            ):
                raise ValueError(
                    f"y must have batch {Xk.shape[1]} and last dimension d = {self.d} "
                    f"(got shape {tuple(y.shape)})"
                )
        N, T = Xk.shape[-2], Yk.shape[-2]
        key_pos = torch.arange(N, device=X.device)
        query_pos = (
            torch.full((1,), N, device=X.device) if lone else torch.arange(T, device=X.device)
        )
        return Xk.unsqueeze(1), Yk.unsqueeze(1), key_pos, query_pos, lone


class GeneralizedAttention(StackedAttention):
    """Eq. 2: ``sum_h M_h X phi_h(W_h X, y)`` with a pluggable score function.

    Parameters: ``W`` ``(K, H, r, d)`` (rank-r key maps), ``M`` ``(K, H, d, d)`` (output maps) and
    the score function's own. ``score`` is a name from ``scores.SCORE_KINDS`` or an instance.
    """

    def __init__(
        self,
        d: int,
        rank: int,
        heads: int,
        models: int = 1,
        score: str | ScoreFunction = "dot",
        normalizer: str = "softmax",
        scale: float = 1.0,
        score_options: dict[str, Any] | None = None,
        generator: torch.Generator | None = None,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__(d, rank, heads, models, normalizer, scale)
        if isinstance(score, ScoreFunction):
            if (score.models, score.heads, score.rank, score.d) != (models, heads, rank, d):
                raise ValueError("score must be built for the same (models, heads, rank, d)")
            self.score = score
        else:
            self.score = make_score(score, models, heads, rank, d, **(score_options or {}))
        self.W = nn.Parameter(torch.empty(models, heads, rank, d))
        self.M = nn.Parameter(torch.empty(models, heads, d, d))
        self.reset_parameters(generator)
        self.to(dtype)

    def config(self) -> dict[str, Any]:
        return {
            **super().config(),
            "score": self.score.kind,
            "score_options": self.score.extra_config(),
        }

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """``W`` ~ N(0, 1/d), ``M`` ~ N(0, 1/(d H)), and the score's own initialisation."""
        with torch.no_grad():
            g = generator
            self.W.copy_(torch.randn(self.W.shape, generator=g, dtype=torch.float64) / self.d**0.5)
            m = torch.randn(self.M.shape, generator=g, dtype=torch.float64)
            self.M.copy_(m / (self.d * self.heads) ** 0.5)
            self.score.reset_parameters(g)

    def probabilities(self, X: torch.Tensor, y: torch.Tensor | None = None) -> torch.Tensor:
        """``phi_h(W_h X, y)``: shape ``(K, H, B, T, N)``."""
        Xk, Yk, kp, qp, _ = self._prepare(X, y)
        keys = project(Xk, self.W)  # (K, H, B, N, r)
        return normalize(self.scale * self.score(keys, Yk, kp, qp), self.normalizer)

    def forward(self, X: torch.Tensor, y: torch.Tensor | None = None) -> torch.Tensor:
        Xk, _, _, _, lone = self._prepare(X, y)
        p = self.probabilities(X, y)
        mixed = torch.einsum("khbtn,kbnd->kbthd", p, Xk.squeeze(1))  # X phi_h, (K, B, T, H, d)
        K, B, T, H, d = mixed.shape
        Mt = self.M.transpose(-1, -2).reshape(K, H * d, d)  # sum_h M_h (.)
        out = torch.matmul(mixed.reshape(K, B * T, H * d), Mt).reshape(K, B, T, d)
        return out.squeeze(-2) if lone else out


class MultiHeadAttention(StackedAttention):
    """H standard heads of rank r: ``sum_h W_O,h^T W_V,h X normalize(scale K_h^T Q_h)``.

    Parameters ``Wq, Wk, Wv, Wo``: ``(K, H, r, d)``; with ``bias=True`` also ``bq, bk, bv``
    ``(K, H, r)`` and ``bo`` ``(K, d)`` (the encoder layers of docs/paper.md §6 use biases).
    """

    def __init__(
        self,
        d: int,
        rank: int,
        heads: int,
        models: int = 1,
        normalizer: str = "softmax",
        scale: float = 1.0,
        bias: bool = False,
        generator: torch.Generator | None = None,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__(d, rank, heads, models, normalizer, scale)
        self.bias = bool(bias)
        shape = (models, heads, rank, d)
        self.Wq, self.Wk = nn.Parameter(torch.empty(shape)), nn.Parameter(torch.empty(shape))
        self.Wv, self.Wo = nn.Parameter(torch.empty(shape)), nn.Parameter(torch.empty(shape))
        if self.bias:
            self.bq = nn.Parameter(torch.zeros(models, heads, rank))
            self.bk = nn.Parameter(torch.zeros(models, heads, rank))
            self.bv = nn.Parameter(torch.zeros(models, heads, rank))
            self.bo = nn.Parameter(torch.zeros(models, d))
        self.reset_parameters(generator)
        self.to(dtype)

    def config(self) -> dict[str, Any]:
        return {**super().config(), "bias": self.bias}

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """Projections ~ N(0, 1/d); ``Wo`` ~ N(0, 1/(r H)) so the layer output is O(1)."""
        init_attention_weights(self, self.d, self.rank * self.heads, generator)

    @classmethod
    def from_weights(
        cls,
        Wq: torch.Tensor,
        Wk: torch.Tensor,
        Wv: torch.Tensor,
        Wo: torch.Tensor,
        normalizer: str = "softmax",
        scale: float = 1.0,
        biases: dict[str, torch.Tensor] | None = None,
    ) -> MultiHeadAttention:
        """Build a layer from explicit ``(K, H, r, d)`` (or ``(H, r, d)``) weights.

        ``biases`` (optional) maps ``bq, bk, bv`` to ``(K, H, r)`` and ``bo`` to ``(K, d)``
        tensors; any it omits are zero.
        """
        ws = [w if w.ndim == 4 else w.unsqueeze(0) for w in (Wq, Wk, Wv, Wo)]
        shape = ws[0].shape
        for name, w in zip(("Wq", "Wk", "Wv", "Wo"), ws):
            if w.ndim != 4 or w.shape != shape:
                raise ValueError(
                    f"{name} must have shape (K, H, r, d) = {tuple(shape)} (got {tuple(w.shape)})"
                )
        K, H, r, d = shape
        layer = cls(
            d,
            r,
            H,
            models=K,
            normalizer=normalizer,
            scale=scale,
            bias=biases is not None,
            dtype=ws[0].dtype,
        )
        with torch.no_grad():
            for name, w in zip(("Wq", "Wk", "Wv", "Wo"), ws):
                getattr(layer, name).copy_(w)
            for name, b in (biases or {}).items():
                if name not in ("bq", "bk", "bv", "bo"):
                    raise ValueError(f"biases must have keys among bq, bk, bv, bo (got {name!r})")
                want = tuple(getattr(layer, name).shape)
                b = b if b.ndim == len(want) else b.unsqueeze(0)
                if tuple(b.shape) != want:
                    raise ValueError(f"{name} must have shape {want} (got {tuple(b.shape)})")
                getattr(layer, name).copy_(b)
        return layer

    def probabilities(self, X: torch.Tensor, y: torch.Tensor | None = None) -> torch.Tensor:
        """Attention weights ``(K, H, B, T, N)``."""
        Xk, Yk, _, _, _ = self._prepare(X, y)
        q = project(Yk, self.Wq)  # (K, H, B, T, r)
        k = project(Xk, self.Wk)  # (K, H, B, N, r)
        if self.bias:
            q = q + self.bq[:, :, None, None, :]
            k = k + self.bk[:, :, None, None, :]
        return normalize(self.scale * pair_scores(q, k), self.normalizer)

    def forward(self, X: torch.Tensor, y: torch.Tensor | None = None) -> torch.Tensor:
        Xk, _, _, _, lone = self._prepare(X, y)
        p = self.probabilities(X, y)
        v = project(Xk, self.Wv)  # (K, H, B, N, r)
        if self.bias:
            v = v + self.bv[:, :, None, None, :]
        o = torch.einsum("khbtn,khbnr->kbthr", p, v)  # (K, B, T, H, r)
        K, B, T, H, r = o.shape
        out = torch.matmul(o.reshape(K, B * T, H * r), self.Wo.reshape(K, H * r, self.d))
        out = out.reshape(K, B, T, self.d)
        if self.bias:
            out = out + self.bo[:, None, None, :]
        return out.squeeze(-2) if lone else out

    def to_generalized(self) -> GeneralizedAttention:
        """The same layer written in Eq. 2 form: ``W = Wk``, ``Q = Wq``, ``M = Wo^T Wv``."""
        if self.bias:
            raise ValueError("bias must be False to rewrite the layer in generalized form")
        c = self.config()
        c.pop("bias")
        g = GeneralizedAttention(score="dot", dtype=self.Wq.dtype, **c)
        with torch.no_grad():
            g.W.copy_(self.Wk)
            assert isinstance(g.score, DotScore)
            g.score.Q.copy_(self.Wq)
            g.M.copy_(self.Wo.transpose(-1, -2) @ self.Wv)
        return g


def init_attention_weights(
    layer: nn.Module, d: int, wo_fan_in: int, generator: torch.Generator | None = None
) -> None:
    """Draw ``Wq, Wk, Wv`` ~ N(0, 1/d) and ``Wo`` ~ N(0, 1/wo_fan_in), in that order, in float64,
    and zero the biases ``bq, bk, bv, bo`` where present. Shared by every standard-attention
    layer so that equal seeds give equal weights whatever the layout."""
    params = dict(layer.named_parameters(recurse=False))
    with torch.no_grad():
        for name, fan_in in (("Wq", d), ("Wk", d), ("Wv", d), ("Wo", wo_fan_in)):
            w = torch.randn(params[name].shape, generator=generator, dtype=torch.float64)
            params[name].copy_(w / fan_in**0.5)
        for name in ("bq", "bk", "bv", "bo"):
            if name in params:
                params[name].zero_()


def stack_models(layers: Sequence[StackedAttention], index: int | None = None) -> Any:
    """Concatenate like layers along the model axis K (or take model ``index`` of one layer)."""
    if not layers:
        raise ValueError("layers must hold at least one layer")
    first = layers[0]
    base = {k: v for k, v in first.config().items() if k != "models"}
    for i, layer in enumerate(layers):
        other = {k: v for k, v in layer.config().items() if k != "models"}
        if type(layer) is not type(first) or other != base:
            raise ValueError(f"layers[{i}] must have the same type and configuration as layers[0]")
    states = [layer.state_dict() for layer in layers]
    if index is not None:
        states = [{k: v[index : index + 1] for k, v in states[0].items()}]
    merged = {k: torch.cat([s[k] for s in states], dim=0) for k in states[0]}
    K = next(iter(merged.values())).shape[0]
    dtype = next(iter(merged.values())).dtype
    layer_type: Callable[..., StackedAttention] = type(first)  # subclasses take ``dtype``
    out = layer_type(**base, models=K, dtype=dtype)
    out.load_state_dict(merged)
    return out.to(next(iter(merged.values())).device)


def param_count(layer: StackedAttention, convention: str = "paper") -> int:
    """Parameters of one model in the stack.

    ``paper``: ``H r d`` per layer, the paper's convention (§4: ``H r d`` in {d^2, d^2.5, d^3}).
    ``total``: every trainable number of one model.
    """
    check_choice("convention", convention, ("paper", "total"))
    if convention == "paper":
        return layer.heads * layer.rank * layer.d
    return sum(p.numel() for p in layer.parameters()) // layer.models


def _desc(t: object) -> str:
    if isinstance(t, torch.Tensor):
        return f"{t.dtype} tensor of shape {tuple(t.shape)}"
    return type(t).__name__
