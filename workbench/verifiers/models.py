"""Stacked models for the experiments of docs/paper.md §6: K independent models in one call.

Every parameter has a leading model axis K, so one forward/backward trains K models. Inputs may
be shared ``(B, ...)`` or per model ``(K, B, ...)``.

- ``EncoderStack``: post-norm encoder layers (attention of rank r with H heads and biases, then
  an FFN with ReLU), optional learned additive or concatenated positional encodings, and a
  linear readout to the target dimension [inferred: the paper's layers emit LayerNorm-scaled
  tokens, so a readout is needed to hit unit-norm targets]. With a lone query ``y`` it is
  appended as the last token and its output is returned (nearest task with L layers).
- ``RegressionStack``: the in-context regression model (Garg et al. 2022) [inferred reading]:
  token ``i`` is ``[x_i, y_i]`` (the query's ``y`` zeroed), read in linearly to ``width``,
  non-causal encoder layers, scalar readout at the query token.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

import torch
from torch import nn

from workbench.core.validation import check_choice, check_heads, check_int, check_rank
from workbench.models.layer_norm import stacked_layer_norm
from workbench.models.mixed_attention import MixedAttention
from workbench.models.stacked_affine import stacked_affine
from workbench.verifiers.chunked_ffn import chunked_ffn

POSITIONAL: tuple[str, ...] = ("none", "additive", "concat")


class StackedLinear(nn.Module):
    """``x W_k + b_k`` per model; ``W`` ``(K, din, dout)``, nn.Linear's uniform initialisation."""

    def __init__(self, din: int, dout: int, models: int = 1, bias: bool = True,
                 generator: torch.Generator | None = None) -> None:
        super().__init__()
        bound = 1 / math.sqrt(din)
        w = torch.rand(models, din, dout, generator=generator, dtype=torch.float64)
        self.weight = nn.Parameter((2 * w - 1).float() * bound)
        b = torch.rand(models, dout, generator=generator, dtype=torch.float64)
        self.bias = nn.Parameter((2 * b - 1).float() * bound) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        out = stacked_affine(x.reshape(shape[0], -1, shape[-1]), self.weight, self.bias)
        return out.view(self.weight.shape[0], *shape[1:-1], out.shape[-1])


class StackedLayerNorm(nn.Module):
    """LayerNorm over the last axis with per-model affine parameters ``(K, dim)``."""

    def __init__(self, dim: int, models: int = 1, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(models, dim))
        self.bias = nn.Parameter(torch.zeros(models, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return stacked_layer_norm(x, self.weight, self.bias, self.eps)


class EncoderLayer(nn.Module):
    """Post-norm layer: ``x = LN(x + MHA(x)); x = LN(x + FFN(x))``, scores scaled by 1/sqrt(r).

    The FFN runs through ``workbench.verifiers.chunked_ffn`` (token chunks that stay in cache).

    ``ranks``/``heads``: one value per model (``H r`` equal for all), or ints for all alike.
    """

    def __init__(self, width: int, ranks: int | Sequence[int], heads: int | Sequence[int],
                 ffn_width: int, models: int = 1,
                 generator: torch.Generator | None = None) -> None:
        super().__init__()
        rs: list[int] = (
            list(ranks) if isinstance(ranks, (list, tuple)) else [cast(int, ranks)] * models
        )
        self.attn = MixedAttention(width, rs, heads, models, scale=[1 / math.sqrt(r) for r in rs],
                                   bias=True, generator=generator)
        self.ln1 = StackedLayerNorm(width, models)
        self.ff1 = StackedLinear(width, ffn_width, models, generator=generator)
        self.ff2 = StackedLinear(ffn_width, width, models, generator=generator)
        self.ln2 = StackedLayerNorm(width, models)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.ln1(x + self.attn(x))
        return self.ln2(x + self._ffn(x))

    def forward_last(self, x: torch.Tensor) -> torch.Tensor:
        """``forward(x)[..., -1:, :]`` computed for the last token alone: its query attends to
        every token, and the residuals, norms and FFN run on its row only."""
        y = x[..., -1:, :]
        y = self.ln1(y + self.attn(x, y))
        return self.ln2(y + self._ffn(y))

    def _ffn(self, x: torch.Tensor) -> torch.Tensor:
        b1, b2 = self.ff1.bias, self.ff2.bias
        if b1 is None or b2 is None or x.shape[0] != self.ff1.weight.shape[0]:
            return self.ff2(torch.relu(self.ff1(x)))
        flat = x.reshape(x.shape[0], -1, x.shape[-1])
        out = chunked_ffn(flat, self.ff1.weight, b1, self.ff2.weight, b2)
        return out.view(*x.shape[:-1], out.shape[-1])


class EncoderStack(nn.Module):
    """L post-norm encoder layers of rank ``rank`` with ``heads`` heads (docs/paper.md §6, Fig. 2).

    ``rank`` and ``heads`` may also be sequences of one value per model (mixed ranks in one
    stack, ``heads * rank`` equal for all models).

    ``length`` tokens at most; ``positional`` in ``none|additive|concat`` (``pos_dims`` extra
    coordinates for ``concat``); ``read_in`` maps ``d_in`` to ``width`` first (else width is
    ``d_in``). Output ``(K, B, T, d_out)``, or ``(K, B, d_out)`` for a lone query.
    """

    def __init__(self, d_in: int, d_out: int, rank: int | Sequence[int],
                 heads: int | Sequence[int], layers: int = 1,
                 models: int = 1, ffn_width: int = 2048, positional: str = "none",
                 pos_dims: int = 0, length: int = 64, read_in: bool = False,
                 width: int | None = None, generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.models = check_int("models", models, lo=1)
        self.layers_n = check_int("layers", layers, lo=1)
        self.positional = check_choice("positional", positional, POSITIONAL)
        self.pos_dims = check_int("pos_dims", pos_dims, lo=0) if positional == "concat" else 0
        self.length = check_int("length", length, lo=1)
        base = check_int("width", width, lo=1) if read_in and width is not None else d_in
        self.read_in = StackedLinear(d_in, base, models, generator=generator) if read_in else None
        self.width = base + self.pos_dims
        ranks = list(rank) if isinstance(rank, (list, tuple)) else [rank] * self.models
        heads_ = list(heads) if isinstance(heads, (list, tuple)) else [heads] * self.models
        for name, vals in (("rank", ranks), ("heads", heads_)):
            if len(vals) != self.models:
                raise ValueError(f"{name} must hold models = {self.models} values "
                                 f"(got {len(vals)})")
        self.ranks = tuple(check_rank(r, self.width, "rank") for r in ranks)
        self.head_counts = tuple(check_heads(h, "heads") for h in heads_)
        self.rank, self.heads = self.ranks[0], self.head_counts[0]  # model 0's (for display)
        pdim = self.pos_dims if positional == "concat" else base
        g = torch.randn(models, length, pdim, generator=generator, dtype=torch.float64)
        self.pos = nn.Parameter(0.02 * g.float()) if positional != "none" else None
        self.layers = nn.ModuleList(
            EncoderLayer(self.width, list(self.ranks), list(self.head_counts), ffn_width, models,
                         generator)
            for _ in range(self.layers_n)
        )
        self.readout = StackedLinear(self.width, d_out, models, generator=generator)

    def forward_tokens(self, tokens: torch.Tensor, last_only: bool = False) -> torch.Tensor:
        """``(B, T, d_in)`` or ``(K, B, T, d_in)`` tokens to ``(K, B, T, d_out)``; with
        ``last_only`` the last token's output alone, ``(K, B, 1, d_out)`` (the last layer computes
        no other row: the same numbers to float tolerance, a fraction of the work)."""
        x = tokens if tokens.ndim == 4 else tokens.unsqueeze(0)
        x = x.expand(self.models, *x.shape[1:])
        if self.read_in is not None:
            x = self.read_in(x)
        T = x.shape[-2]
        if T > self.length:
            raise ValueError(f"N must be an integer in 1..length = 1..{self.length} (got {T})")
        if self.pos is not None:
            p = self.pos[:, None, :T, :].expand(-1, x.shape[1], -1, -1)
            x = x + p if self.positional == "additive" else torch.cat((x, p), dim=-1)
        layers = cast(list[EncoderLayer], list(self.layers))
        for layer in layers[:-1] if last_only else layers:
            x = layer(x)
        if last_only:
            x = layers[-1].forward_last(x)
        return self.readout(x)

    def forward(self, X: torch.Tensor, y: torch.Tensor | None = None) -> torch.Tensor:
        if y is None:
            return self.forward_tokens(X)
        if X.ndim == 4 and y.ndim == 2:
            y = y.expand(X.shape[0], *y.shape)
        elif X.ndim == 3 and y.ndim == 3:
            X = X.expand(y.shape[0], *X.shape)
        tokens = torch.cat((X, y.unsqueeze(-2)), dim=-2)
        return self.forward_tokens(tokens, last_only=True)[..., -1, :]

    def paper_params(self) -> int:
        """``L * H * r * width``: the paper's count (§4: ``H r d`` per layer), equal for all K."""
        return self.layers_n * cast(EncoderLayer, self.layers[0]).attn.P * self.width


class RegressionStack(EncoderStack):
    """In-context linear regression model: ``forward(xs, ys) -> (K, B)`` predictions of ``y_q``."""

    def __init__(self, n_dims: int, rank: int | Sequence[int], heads: int | Sequence[int],
                 layers: int = 12, models: int = 1,
                 width: int = 48, ffn_width: int = 192, positional: str = "none",
                 pos_dims: int = 0, length: int = 64,
                 generator: torch.Generator | None = None) -> None:
        super().__init__(n_dims + 1, 1, rank, heads, layers, models, ffn_width, positional,
                         pos_dims, length, read_in=True, width=width, generator=generator)

    def forward(self, xs: torch.Tensor, ys: torch.Tensor | None = None) -> torch.Tensor:
        if ys is None:
            raise ValueError("ys must be given: (B, n_points + 1) context values")
        tokens = torch.cat((xs, ys.unsqueeze(-1)), dim=-1)
        return self.forward_tokens(tokens, last_only=True)[..., -1, 0]


def stack_modules(modules: list[nn.Module], target: nn.Module) -> nn.Module:
    """Load K one-model modules into ``target`` (built with ``models=K``), in order."""
    states = [m.state_dict() for m in modules]
    for key, v in states[0].items():
        if v.ndim == 0 or v.shape[0] != 1:
            raise ValueError(f"modules must be built with models=1 ({key} has shape {v.shape})")
    merged = {k: torch.cat([s[k] for s in states], dim=0) for k in states[0]}
    target.load_state_dict(merged)
    return target


def unstack_state(module: nn.Module, k: int) -> dict[str, torch.Tensor]:
    """The state of model ``k`` of a stacked module, with ``models=1`` shapes."""
    return {key: v[k : k + 1].clone() for key, v in module.state_dict().items()}
