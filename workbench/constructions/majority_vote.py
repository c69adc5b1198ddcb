"""Theorem 5: depth helps for short contexts. Majority voting with rank-1 heads.

Tokens are ``[content (d) | scratch]``: concatenated positional encodings give key ``j`` the
one-hot ``e_{P_j}`` in the scratch block and the query a constant 1 (coordinate ``one``). Only
the query token's residual stream is computed (a lone query); later layers read keys through
content and positional coordinates only, which no layer writes, so an encoder that also updates
the key tokens computes the same query output. "Rank 1" is the rank of every key/query map;
values follow Eq. 2 (``M_h`` any d x d matrix), see docs/derivations/constructions.md §3.

``N = 2`` (Theorem 5, two layers):

1. H standard rank-1 hardmax heads with random ``q = k``. Head h picks the key maximising
   ``<q,y><q,x_j>`` and writes ``+-1`` (value reads ``e_{P_1} - e_{P_2}``) into ``tally``. Votes
   are whole numbers so that a tied tally is exactly 0 (``+-1/H`` left a rounding residue).
2. One rank-1 head, query ``tally``, key ``e_{P_1} - e_{P_2}``: picks ``x_1`` iff tally > 0 (a tie
   picks ``x_1``), and copies its content.

Each head is right with probability ``1/2 + arcsin|t|/pi`` given ``t = <y, (x_1-x_2)/|x_1-x_2|>``,
independently, so the error averaged over head draws is exactly
``2 E_t[P(Bin(H,p) < H/2) + P(Bin(H,p) = H/2)/2]`` (``claimed``), ``~ sqrt(d/H)`` for large H.

``N >= 3``: a round-robin tournament in four rank-1 layers (positional biases mask keys):
pairwise votes (``H C(N,2)`` heads) -> pairwise signs into per-key counters (``C(N,2)`` heads) ->
Condorcet-winner index ``lambda`` (``N`` heads) -> copy key ``lambda`` (one head, bias
``-(j+1)^2/2`` makes ``argmax_j lambda (j+1) - (j+1)^2/2 = lambda - 1``).
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import combinations
from typing import cast

import numpy as np
import torch
from scipy import integrate, special
from torch import nn

from workbench.constructions._montecarlo import ClaimedError
from workbench.core.montecarlo import estimate_mean
from workbench.core.sphere import (
    POINT_LAWS,
    Generator,
    PointLaw,
    as_generator,
    sample_instances,
    uniform_sphere,
)
from workbench.core.validation import (
    check_choice,
    check_dim,
    check_heads,
    check_int,
    check_orthonormal_keys,
    check_points,
)
from workbench.models.attention import GeneralizedAttention, MultiHeadAttention, StackedAttention
from workbench.models.scores import BiasScore, DotScore

COPY_STYLES: tuple[str, ...] = ("generalized", "standard")
STATEMENT_2 = "Thm 5 (N=2): E_heads err = 2 E_t[P(Bin(H,p) < H/2) + P(Bin(H,p) = H/2)/2]"
STATEMENT_N = "tournament: E_heads err <= E[max_j |x_j - x*|^2 min(1, sum_j P(Bin(H,p_j) <= H/2))]"

_F64 = torch.float64


class ScratchLayout:
    """Coordinates of the token vectors: content, then scratch blocks (one-hot positions first)."""

    def __init__(self, d: int, N: int) -> None:
        self.d, self.N = d, N
        self.pairs = list(combinations(range(N), 2)) if N >= 3 else []
        i = d
        self.pos = list(range(i, i + N))
        i += N
        self.one = i
        i += 1
        if N == 2:
            self.tally = [i]
            i += 1
        else:
            self.tally = list(range(i, i + len(self.pairs)))
            i += len(self.pairs)
        self.counter = list(range(i, i + N)) if N >= 3 else []
        i += len(self.counter)
        self.lam = i if N >= 3 else -1
        i += 1 if N >= 3 else 0
        self.D = i

    @property
    def scratch(self) -> int:
        return self.D - self.d

    def embed(self, X: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Keys ``(B, N, D)`` and query ``(B, D)`` with concatenated positional encodings."""
        B, N, d = X.shape
        Z = torch.zeros(B, N, self.D, dtype=X.dtype)
        Z[..., :d] = X
        Z[:, torch.arange(N), torch.tensor(self.pos)] = 1.0
        z = torch.zeros(B, self.D, dtype=X.dtype)
        z[:, :d] = y
        z[:, self.one] = 1.0
        return Z, z


class VotingTransformer(nn.Module):
    """Residual stack of core attention layers evaluated for a lone query.

    ``forward(X (B, N, d), y (B, d)) -> (1, B, d)``: the content coordinates of the last layer's
    output (the earlier layers' outputs are added to the query's residual stream).
    """

    def __init__(self, layout: ScratchLayout, layers: list[StackedAttention], chunk: int = 512):
        super().__init__()
        self.layout = layout
        self.layers = nn.ModuleList(layers)
        self.chunk = check_int("chunk", chunk, lo=1)

    @property
    def heads(self) -> list[int]:
        return [cast(StackedAttention, layer).heads for layer in self.layers]

    def size(self) -> dict[str, int]:
        """Depth, heads per layer and in total, scratch dimensions, max key rank."""
        return {
            "layers": len(self.layers),
            "heads_total": sum(self.heads),
            "scratch_dims": self.layout.scratch,
            "rank": max(cast(StackedAttention, layer).rank for layer in self.layers),
        }

    def residual(self, X: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Query residual stream before the last layer, and the last layer's output ``(B, D)``."""
        Z, z = self.layout.embed(X.to(_F64), y.to(_F64))
        for layer in self.layers[:-1]:
            z = z + layer(Z, z)[0]
        return z, self.layers[-1](Z, z)[0]

    def forward(self, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if (
            X.ndim != 3
            or y.ndim != 2
            or X.shape[-1] != self.layout.d
            or X.shape[1] != self.layout.N
        ):
            raise ValueError(
                f"X must have shape (B, N, d) = (B, {self.layout.N}, {self.layout.d}) and y (B, d)"
                f" (got {tuple(X.shape)} and {tuple(y.shape)})"
            )
        outs = []
        for s in range(0, X.shape[0], self.chunk):
            outs.append(self.residual(X[s : s + self.chunk], y[s : s + self.chunk])[1])
        out = torch.cat(outs, dim=0) if outs else torch.zeros(0, self.layout.D, dtype=_F64)
        return out[None, :, : self.layout.d]


def _unit_row(D: int, idx: list[int], vals: list[float]) -> torch.Tensor:
    v = torch.zeros(D, dtype=_F64)
    for i, a in zip(idx, vals):
        v[i] += a
    return v


def _copy_layer(
    L: ScratchLayout, key: torch.Tensor, query: torch.Tensor, bias: torch.Tensor | None, style: str
) -> StackedAttention:
    """One rank-1 head with key map ``key`` and query map ``query`` copying the content."""
    D, d = L.D, L.d
    if style == "standard" and bias is None:  # d standard rank-1 heads, value e_i -> e_i
        Wq = query.expand(1, d, 1, D).clone()
        Wk = key.expand(1, d, 1, D).clone()
        E = torch.zeros(1, d, 1, D, dtype=_F64)
        E[0, torch.arange(d), 0, torch.arange(d)] = 1.0
        return MultiHeadAttention.from_weights(Wq, Wk, E, E.clone(), normalizer="hardmax")
    score = "dot" if bias is None else "bias"
    opts = None if bias is None else {"max_len": L.N}
    layer = GeneralizedAttention(
        D, 1, 1, score=score, score_options=opts, normalizer="hardmax", dtype=_F64
    )
    with torch.no_grad():
        layer.W.copy_(key.reshape(1, 1, 1, D))
        cast(DotScore, layer.score).Q.copy_(query.reshape(1, 1, 1, D))
        M = torch.zeros(D, D, dtype=_F64)
        M[:d, :d] = torch.eye(d, dtype=_F64)
        layer.M.copy_(M.reshape(1, 1, D, D))
        if bias is not None:
            cast(BiasScore, layer.score).bias.copy_(bias.reshape(1, 1, L.N))
    return layer


def _two_key_model(d: int, H: int, gen: torch.Generator | None, style: str) -> VotingTransformer:
    L = ScratchLayout(d, 2)
    D = L.D
    q = uniform_sphere(H, d=d, generator=gen)
    Wq = torch.zeros(1, H, 1, D, dtype=_F64)
    Wq[0, :, 0, :d] = q
    Wv = _unit_row(D, L.pos, [1.0, -1.0]).expand(1, H, 1, D).clone()
    Wo = _unit_row(D, L.tally, [1.0]).expand(1, H, 1, D).clone()  # whole votes: exact ties
    votes = MultiHeadAttention.from_weights(Wq, Wq.clone(), Wv, Wo, normalizer="hardmax")
    copy = _copy_layer(
        L, _unit_row(D, L.pos, [1.0, -1.0]), _unit_row(D, L.tally, [1.0]), None, style
    )
    return VotingTransformer(L, [votes, copy])


def _biased_layer(
    D: int, N: int, W: torch.Tensor, Q: torch.Tensor, bias: torch.Tensor, M: torch.Tensor
) -> GeneralizedAttention:
    H = W.shape[0]
    layer = GeneralizedAttention(
        D, 1, H, score="bias", score_options={"max_len": N}, normalizer="hardmax", dtype=_F64
    )
    with torch.no_grad():
        layer.W.copy_(W.reshape(1, H, 1, D))
        score = cast(BiasScore, layer.score)
        score.Q.copy_(Q.reshape(1, H, 1, D))
        score.bias.copy_(bias.reshape(1, H, N))
        layer.M.copy_(M.reshape(1, H, D, D))
    return layer


def _tournament_model(d: int, N: int, H: int, gen: torch.Generator | None) -> VotingTransformer:
    L = ScratchLayout(d, N)
    D, P = L.D, len(L.pairs)
    # layer 1: H voting heads per pair (i, j), masked to keys i and j
    q = uniform_sphere(P, H, d=d, generator=gen)  # (P, H, d)
    W1 = torch.zeros(P, H, D, dtype=_F64)
    W1[..., :d] = q
    bias1 = torch.full((P, H, N), -4.0, dtype=_F64)
    M1 = torch.zeros(P, H, D, D, dtype=_F64)
    for p, (i, j) in enumerate(L.pairs):
        bias1[p, :, [i, j]] = 0.0
        M1[p, :, L.tally[p], L.pos[i]] = 1.0  # whole votes: a tied tally is exactly 0
        M1[p, :, L.tally[p], L.pos[j]] = -1.0
    votes = _biased_layer(
        D,
        N,
        W1.reshape(P * H, D),
        W1.reshape(P * H, D).clone(),
        bias1.reshape(P * H, N),
        M1.reshape(P * H, D, D),
    )
    # layer 2: sign of each tally -> +-(e_{C_i} - e_{C_j})
    W2 = torch.zeros(P, D, dtype=_F64)
    Q2 = torch.zeros(P, D, dtype=_F64)
    bias2 = torch.full((P, N), -4.0, dtype=_F64)
    M2 = torch.zeros(P, D, D, dtype=_F64)
    for p, (i, j) in enumerate(L.pairs):
        W2[p, L.pos[i]], W2[p, L.pos[j]] = 1.0, -1.0
        Q2[p, L.tally[p]] = 1.0
        bias2[p, [i, j]] = 0.0
        for a, sa in ((L.counter[i], 1.0), (L.counter[j], -1.0)):
            M2[p, a, L.pos[i]], M2[p, a, L.pos[j]] = sa, -sa
    signs = _biased_layer(D, N, W2, Q2, bias2, M2)
    # layer 3: key i is the Condorcet winner iff counter_i = N-1 (> N-2); writes i+1 into lambda
    W3 = torch.zeros(N, D, dtype=_F64)
    W3[:, L.pos[0]], W3[:, L.pos[1]] = 1.0, -1.0
    Q3 = torch.zeros(N, D, dtype=_F64)
    bias3 = torch.full((N, N), -4.0 * N, dtype=_F64)
    bias3[:, :2] = 0.0
    M3 = torch.zeros(N, D, D, dtype=_F64)
    for i in range(N):
        Q3[i, L.counter[i]], Q3[i, L.one] = 1.0, -(N - 2.0)
        M3[i, L.lam, L.pos[0]] = i + 1.0
    winner = _biased_layer(D, N, W3, Q3, bias3, M3)
    # layer 4: copy key lambda - 1
    idx = torch.arange(1, N + 1, dtype=_F64)
    key4 = _unit_row(D, L.pos, idx.tolist())
    copy = _copy_layer(L, key4, _unit_row(D, [L.lam], [1.0]), -(idx**2) / 2, "generalized")
    return VotingTransformer(L, [votes, signs, winner, copy])


def _single_key_model(d: int) -> VotingTransformer:
    L = ScratchLayout(d, 1)
    copy = _copy_layer(
        L, _unit_row(L.D, L.pos, [1.0]), _unit_row(L.D, [L.one], [1.0]), None, "generalized"
    )
    return VotingTransformer(L, [copy])


# --- claims ---------------------------------------------------------------------------------


def _tail_wrong(H: int, p: np.ndarray, ties_half: bool) -> np.ndarray:
    """``P(Bin(H, p) < H/2) + c P(Bin(H,p) = H/2)`` with ``c = 1/2`` or 1."""
    k = math.ceil(H / 2) - 1
    below = special.bdtr(k, H, p) if k >= 0 else np.zeros_like(p)
    if H % 2:
        return below
    tie = special.bdtr(H // 2, H, p) - below
    return below + (0.5 if ties_half else 1.0) * tie


def ensemble_error(d: int, H: int) -> float:
    """Exact ``E_heads E_data err`` of the ``N = 2`` construction on ``D_2`` (and i.i.d. points).

    ``2 E_t[P(Bin(H,p) < H/2) + P(= H/2)/2]``, ``p = 1/2 + arcsin|t|/pi``, ``|t| = cos phi`` with
    density ``sin^{d-2} phi`` on ``[0, pi/2]`` (adaptive quadrature).
    """
    return _ensemble_error(check_dim(d), check_heads(H))


@lru_cache(maxsize=4096)
def _ensemble_error(d: int, H: int) -> float:
    def f(phi: float) -> float:
        p = 0.5 + math.asin(math.cos(phi)) / math.pi
        return float(_tail_wrong(H, np.array([p]), True)[0]) * math.sin(phi) ** (d - 2)

    half = math.pi / 2
    cut = max(0.0, half - 20.0 / math.sqrt(H))
    num = integrate.quad(f, 0.0, cut, epsabs=0, epsrel=1e-10, limit=200)[0] if cut > 0 else 0.0
    num += integrate.quad(f, cut, half, epsabs=0, epsrel=1e-10, limit=200)[0]
    norm = (
        math.exp(0.5 * math.log(math.pi) + special.gammaln((d - 1) / 2) - special.gammaln(d / 2))
        / 2
    )
    return 2 * num / norm


def hoeffding_bound(d: int, H: int) -> float:
    """``2 E_t exp(-2 H (arcsin|t|/pi)^2)`` >= :func:`ensemble_error` (Hoeffding)."""
    d, H = check_dim(d), check_heads(H)

    def f(phi: float) -> float:
        return math.exp(-2 * H * (math.asin(math.cos(phi)) / math.pi) ** 2) * math.sin(phi) ** (
            d - 2
        )

    half = math.pi / 2
    num = integrate.quad(
        f, 0.0, half, epsabs=0, epsrel=1e-10, limit=200, points=[half - 1 / math.sqrt(H)]
    )[0]
    norm = (
        math.exp(0.5 * math.log(math.pi) + special.gammaln((d - 1) / 2) - special.gammaln(d / 2))
        / 2
    )
    return 2 * num / norm


def tournament_bound_values(X: torch.Tensor, y: torch.Tensor, H: int) -> torch.Tensor:
    """Per-sample ``max_j |x_j - x*|^2 min(1, sum_{j != i*} P(Bin(H, p_{i*j}) <= H/2))``."""
    s = torch.einsum("bnd,bd->bn", X, y)
    istar = s.argmax(-1)
    xs = X[torch.arange(X.shape[0]), istar]  # (B, d)
    w = xs[:, None, :] - X  # (B, N, d)
    nw = w.norm(dim=-1)
    t = (torch.einsum("bnd,bd->bn", w, y) / nw.clamp(min=1e-300)).abs().clamp(max=1.0)
    p = 0.5 + torch.asin(t) / math.pi
    wrong = torch.from_numpy(_tail_wrong(H, p.numpy(), ties_half=False))
    wrong[torch.arange(X.shape[0]), istar] = 0.0
    return (nw**2).amax(-1) * wrong.sum(-1).clamp(max=1.0)


def majority_vote(
    d: int,
    H: int,
    N: int = 2,
    points: str = "orthonormal",
    copy_style: str = "generalized",
    generator: Generator = 0,
    claim_samples: int = 100_000,
) -> tuple[VotingTransformer, ClaimedError]:
    """Theorem 5's majority-vote transformer (``N = 2``) or its tournament extension (``N >= 3``).

    The claim is about the error averaged over the random head draws: exact (quadrature) for
    ``N <= 2``, a Monte Carlo union bound with a CI for ``N >= 3``.
    """
    d, H, N = check_dim(d), check_heads(H), check_points(N)
    points = check_choice("points", points, POINT_LAWS)
    copy_style = check_choice("copy_style", copy_style, COPY_STYLES)
    check_orthonormal_keys(points, N, d)
    gen = as_generator(generator)
    if N == 1:
        model = _single_key_model(d)
        return model, ClaimedError.exact(0.0, "==", "exact", "N = 1: the only key is the target")
    if N == 2:
        model = _two_key_model(d, H, gen, copy_style)
        v = ensemble_error(d, H)
        claim = ClaimedError.exact(
            v,
            "==",
            "quadrature",
            STATEMENT_2,
            hoeffding=hoeffding_bound(d, H),
            sqrt_d_over_H=math.sqrt(d / H),
        )
        return model, claim
    model = _tournament_model(d, N, H, gen)

    def draw(m: int, g: torch.Generator | None) -> torch.Tensor:
        X, y = sample_instances(m, N, d, points=cast(PointLaw, points), generator=g)
        return tournament_bound_values(X, y, H)

    est = estimate_mean(draw, samples=check_int("claim_samples", claim_samples, lo=2),
                        batch=8192, level=0.99, generator=gen, bounds=(0.0, 4.0))[0]
    return model, ClaimedError.from_estimate(est, "<=", STATEMENT_N)


# --- scaling studies --------------------------------------------------------------------------


def fit_exponents(ds: list[int], Hs: list[int], max_error: float = 0.25) -> dict[str, object]:
    """Least-squares fit ``log err = c + alpha log H + gamma log d`` of :func:`ensemble_error`.

    Only points with ``err <= max_error`` (the asymptotic regime) enter the fit. The derived
    heuristic ``H ~ d / eps^2`` means ``alpha = -1/2``, ``gamma = +1/2``.
    """
    rows = [(d, H, ensemble_error(d, H)) for d in ds for H in Hs]
    used = [(d, H, e) for d, H, e in rows if 0 < e <= max_error]
    if len(used) < 3:
        raise ValueError("max_error must leave at least 3 grid points in the fit")
    A = np.array([[1.0, math.log(H), math.log(d)] for d, H, _ in used])
    z = np.log([e for _, _, e in used])
    coef, *_ = np.linalg.lstsq(A, z, rcond=None)
    resid = z - A @ coef
    return {
        "alpha_H": float(coef[1]),
        "gamma_d": float(coef[2]),
        "log_c": float(coef[0]),
        "rms_log_residual": float(np.sqrt(np.mean(resid**2))),
        "points": [{"d": d, "H": H, "error": e, "used": (0 < e <= max_error)} for d, H, e in rows],
    }


def tournament_size(N: int, H: int) -> dict[str, int]:
    """Layers, heads and scratch dimensions for ``N`` keys and ``H`` votes per pair."""
    N, H = check_points(N), check_heads(H)
    if N == 1:
        return {"layers": 1, "heads_total": 1, "scratch_dims": 1, "rank": 1}
    if N == 2:
        return {"layers": 2, "heads_total": H + 1, "scratch_dims": 4, "rank": 1}
    P = N * (N - 1) // 2
    return {
        "layers": 4,
        "heads_total": H * P + P + N + 1,
        "scratch_dims": N + 1 + P + N + 1,
        "rank": 1,
    }


def votes_needed(
    d: int,
    N: int,
    eps: float,
    points: str = "iid",
    samples: int = 20_000,
    generator: Generator = 0,
    max_heads: int = 1 << 20,
) -> int:
    """Least power-of-two H whose (upper-CI) claimed tournament error is ``<= eps``."""
    H = 1
    while H <= max_heads:

        def draw(m: int, g: torch.Generator | None, H: int = H) -> torch.Tensor:
            X, y = sample_instances(m, N, d, points=cast(PointLaw, points), generator=g)
            return tournament_bound_values(X, y, H)

        est = estimate_mean(draw, samples=samples, batch=8192, level=0.99, generator=generator,
                            bounds=(0.0, 4.0))[0]
        if est.hi <= eps:
            return H
        H *= 2
    raise ValueError(f"eps must be reachable with at most {max_heads} votes per pair (got {eps})")
