"""Score functions ``phi_h`` of generalized attention (docs/paper.md Eq. 2).

A score function sees the keys only through their rank-r projections ``W_h x_i`` and may depend
arbitrarily on the query ``y`` and on positions. This is exactly the class the lower bounds are
proved against. Every parameter and buffer is stacked with leading shape ``(K, H, ...)``.

Shapes: ``keys`` is ``(K, H, B, N, r)``, ``queries`` is ``(Kq, 1, B, T, d)`` with ``Kq`` in
``{1, K}``, positions are integer tensors ``(N,)`` and ``(T,)``; the result is ``(K, H, B, T, N)``.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from workbench.core.validation import check_choice, check_float, check_int

SCORE_KINDS: tuple[str, ...] = ("dot", "bias", "rope", "alibi", "mlp", "set")


def project(Z: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    """Map rows of ``Z`` by every head: ``Z`` ``(Kz, [1,] B, L, d)``, ``W`` ``(K, H, m, d)``.

    Returns ``(K, H, B, L, m)``. One large matmul per model instead of ``K H B`` tiny ones.
    """
    if Z.ndim == 5:
        Z = Z.squeeze(1)
    K, H, m, d = W.shape
    Kz, B, L, _ = Z.shape
    out = torch.matmul(Z.reshape(Kz, B * L, d), W.permute(0, 3, 1, 2).reshape(K, d, H * m))
    return out.reshape(K, B, L, H, m).permute(0, 3, 1, 2, 4)


def pair_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """``<q_t, k_n>`` for ``q`` ``(K, H, B, T, r)`` and ``k`` ``(K, H, B, N, r)``."""
    return torch.einsum("khbtr,khbnr->khbtn", q, k)


class ScoreFunction(nn.Module):
    """Base class: holds ``(K, H)`` and the rank ``r`` and ambient dimension ``d``."""

    kind = "abstract"

    def __init__(self, models: int, heads: int, rank: int, d: int) -> None:
        super().__init__()
        self.models, self.heads, self.rank, self.d = models, heads, rank, d

    def forward(
        self,
        keys: torch.Tensor,
        queries: torch.Tensor,
        key_pos: torch.Tensor,
        query_pos: torch.Tensor,
    ) -> torch.Tensor:
        raise NotImplementedError

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """Re-draw parameters (deterministic under ``generator``)."""

    def extra_config(self) -> dict[str, object]:
        """Constructor arguments beyond ``(models, heads, rank, d)``, used to clone."""
        return {}


class DotScore(ScoreFunction):
    """``s_i = <W_h x_i, Q_h y>``: the standard attention score."""

    kind = "dot"

    def __init__(self, models: int, heads: int, rank: int, d: int) -> None:
        super().__init__(models, heads, rank, d)
        self.Q = nn.Parameter(torch.empty(models, heads, rank, d))
        self.reset_parameters()

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        with torch.no_grad():
            self.Q.copy_(_normal(self.Q.shape, generator) / math.sqrt(self.d))

    def project_queries(self, queries: torch.Tensor) -> torch.Tensor:
        return project(queries, self.Q)  # (K, H, B, T, r)

    def forward(self, keys, queries, key_pos, query_pos):  # type: ignore[override]
        return pair_scores(self.project_queries(queries), keys)


class BiasScore(DotScore):
    """``s_i = <W_h x_i, Q_h y> + c_{h,i}``: dot product plus a learned bias per key position."""

    kind = "bias"

    def __init__(self, models: int, heads: int, rank: int, d: int, max_len: int = 64) -> None:
        self.max_len = check_int("max_len", max_len, lo=1)
        super().__init__(models, heads, rank, d)
        self.bias = nn.Parameter(torch.zeros(models, heads, self.max_len))

    def forward(self, keys, queries, key_pos, query_pos):  # type: ignore[override]
        n = keys.shape[-2]
        if n > self.max_len:
            raise ValueError(f"N must be an integer in 1..max_len = 1..{self.max_len} (got {n})")
        return super().forward(keys, queries, key_pos, query_pos) + self.bias[:, :, None, None, :n]

    def extra_config(self) -> dict[str, object]:
        return {"max_len": self.max_len}


class RoPEScore(DotScore):
    """Rotary positional scores: ``<R(p_i) W_h x_i, R(p_y) Q_h y>`` in the rank-r space.

    Coordinate pairs ``(2j, 2j+1)`` rotate by ``pos * base^(-2j/r)``; an odd last coordinate
    is left unrotated. A lone query sits at position ``N`` (after the keys).
    """

    kind = "rope"

    def __init__(self, models: int, heads: int, rank: int, d: int, base: float = 10000.0) -> None:
        self.base = check_float("base", base, lo=1.0, lo_open=True)
        super().__init__(models, heads, rank, d)

    def _rotate(self, v: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        half = self.rank // 2
        if half == 0:
            return v
        freq = self.base ** (-2.0 * torch.arange(half, dtype=v.dtype, device=v.device) / self.rank)
        ang = pos.to(v.dtype)[:, None] * freq  # (L, half)
        cos, sin = torch.cos(ang), torch.sin(ang)
        even, odd = v[..., 0 : 2 * half : 2], v[..., 1 : 2 * half : 2]
        rot = torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)
        return torch.cat((rot, v[..., 2 * half :]), dim=-1)

    def forward(self, keys, queries, key_pos, query_pos):  # type: ignore[override]
        q = self._rotate(self.project_queries(queries), query_pos)
        return pair_scores(q, self._rotate(keys, key_pos))

    def extra_config(self) -> dict[str, object]:
        return {"base": self.base}


class ALiBiScore(DotScore):
    """ALiBi: ``<W_h x_i, Q_h y> - m_h |p_y - p_i|`` with geometric slopes ``m_h = 2^(-8h/H)``."""

    kind = "alibi"

    def __init__(self, models: int, heads: int, rank: int, d: int) -> None:
        super().__init__(models, heads, rank, d)
        h = torch.arange(1, heads + 1, dtype=torch.get_default_dtype())
        self.register_buffer("slopes", (2.0 ** (-8.0 * h / heads)).expand(models, heads).clone())

    def forward(self, keys, queries, key_pos, query_pos):  # type: ignore[override]
        dist = (query_pos[:, None] - key_pos[None, :]).abs().to(keys.dtype)  # (T, N)
        penalty = self.slopes[:, :, None, None, None].to(keys.dtype) * dist
        return super().forward(keys, queries, key_pos, query_pos) - penalty


class MLPScore(ScoreFunction):
    """``s_i = v_h . relu(A_h W_h x_i + B_h y + c_h)``: a small MLP on (projected key, query)."""

    kind = "mlp"

    def __init__(self, models: int, heads: int, rank: int, d: int, hidden: int = 16) -> None:
        super().__init__(models, heads, rank, d)
        self.hidden = check_int("hidden", hidden, lo=1)
        self.A = nn.Parameter(torch.empty(models, heads, rank, self.hidden))
        self.B = nn.Parameter(torch.empty(models, heads, d, self.hidden))
        self.c = nn.Parameter(torch.zeros(models, heads, self.hidden))
        self.v = nn.Parameter(torch.empty(models, heads, self.hidden))
        self.reset_parameters()

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        with torch.no_grad():
            self.A.copy_(_normal(self.A.shape, generator) / math.sqrt(self.rank))
            self.B.copy_(_normal(self.B.shape, generator) / math.sqrt(self.d))
            self.c.zero_()
            self.v.copy_(_normal(self.v.shape, generator) / math.sqrt(self.hidden))

    def forward(self, keys, queries, key_pos, query_pos):  # type: ignore[override]
        hk = keys @ self.A.unsqueeze(2)  # (K, H, B, N, m)
        hq = project(queries, self.B.transpose(-1, -2)) + self.c[:, :, None, None, :]
        hidden = (hq.unsqueeze(-2) + hk.unsqueeze(-3)).relu_()  # (K, H, B, T, N, m), in place
        return torch.einsum("khbtnm,khm->khbtn", hidden, self.v)  # one batched matmul over m

    def extra_config(self) -> dict[str, object]:
        return {"hidden": self.hidden}


class SetScore(MLPScore):
    """``s_i = v_h . relu(A_h W_h x_i + B_h y + c_h + C_h g + D_h g')``: the MLP score with a
    context that sees every key, ``g`` (``g'``) the mean (max) over keys ``j`` of
    ``relu(E_h W_h x_j + F_h y + e_h)`` (one DeepSets layer). Still a function of
    ``(W_h X, y)``, so inside Eq. 2; for N >= 3 the Bayes score of a head needs all N keys
    (docs/derivations/witnesses_beyond_two.md)."""

    kind = "set"
    E: nn.Parameter
    F: nn.Parameter
    e: nn.Parameter
    C: nn.Parameter
    D: nn.Parameter

    def __init__(self, models: int, heads: int, rank: int, d: int, hidden: int = 16) -> None:
        ScoreFunction.__init__(self, models, heads, rank, d)
        self.hidden = h = check_int("hidden", hidden, lo=1)
        for name, shape in (("A", (rank, h)), ("B", (d, h)), ("c", (h,)), ("v", (h,)),
                            ("E", (rank, h)), ("F", (d, h)), ("e", (h,)), ("C", (h, h)),
                            ("D", (h, h))):
            setattr(self, name, nn.Parameter(torch.zeros(models, heads, *shape)))
        self.reset_parameters()

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        super().reset_parameters(generator)
        with torch.no_grad():
            self.E.copy_(_normal(self.E.shape, generator) / math.sqrt(self.rank))
            self.F.copy_(_normal(self.F.shape, generator) / math.sqrt(self.d))
            self.e.zero_()
            for P in (self.C, self.D):
                P.copy_(_normal(P.shape, generator) / (2 * math.sqrt(self.hidden)))

    def forward(self, keys, queries, key_pos, query_pos):  # type: ignore[override]
        ck = keys @ self.E.unsqueeze(2)  # (K, H, B, N, m)
        cq = project(queries, self.F.transpose(-1, -2)) + self.e[:, :, None, None, :]
        ctx = torch.relu(cq.unsqueeze(-2) + ck.unsqueeze(-3))  # (K, H, B, T, N, m)
        g = ctx.mean(-2) @ self.C.unsqueeze(2) + ctx.amax(-2) @ self.D.unsqueeze(2)
        hk = keys @ self.A.unsqueeze(2)
        hq = project(queries, self.B.transpose(-1, -2)) + self.c[:, :, None, None, :] + g
        hidden = torch.relu(hq.unsqueeze(-2) + hk.unsqueeze(-3))
        return (hidden * self.v[:, :, None, None, None, :]).sum(-1)


_KINDS: dict[str, type[ScoreFunction]] = {
    "dot": DotScore,
    "bias": BiasScore,
    "rope": RoPEScore,
    "alibi": ALiBiScore,
    "mlp": MLPScore,
    "set": SetScore,
}


def make_score(
    kind: str, models: int, heads: int, rank: int, d: int, **options: object
) -> ScoreFunction:
    """Build a score function by name (one of ``SCORE_KINDS``)."""
    check_choice("score", kind, SCORE_KINDS)
    return _KINDS[kind](models, heads, rank, d, **options)  # type: ignore[arg-type]


def _normal(shape: torch.Size, generator: torch.Generator | None) -> torch.Tensor:
    return torch.randn(shape, generator=generator, dtype=torch.float64)
