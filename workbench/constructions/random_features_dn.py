"""Random features on D_N: the constructed upper side beyond two keys (docs/paper.md, "Beyond two
keys"; docs/derivations/witnesses_beyond_two.md).

``H`` random rank-1 heads of Eq. 2 attention (``W_h = k_h^T``, query map ``beta q_h^T``, softmax
over the N keys; ``(q_h, k_h)`` from ``random_features.sample_heads``) with values ``M_h = a_h I``
solved by least squares on ``n_solve`` samples of D_N (N orthonormal keys, uniform query; hardmax
nearest-neighbour target): ``C a = b`` with ``C = E[<F_h, F_h'>]``, ``b = E[<F_h, f>]`` and
``F_h = X phi_h`` the head's mixed key. The inverse temperature ``beta`` is chosen from ``betas``
on the solve sample (``beta = 0`` is uniform attention, whose error is ``1 - 1/N``) by the upper
end the fresh interval would have there (large values ``a`` widen it). The error is then
measured by the model itself on a fresh D_N stream, with an empirical-Bernstein interval
(the loss lies in ``[0, (1 + sum |a_h|)^2]``). Every such model is an Eq. 2 model of key-rank 1,
so it can never lie below a certified bound at N.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
import torch

from workbench.constructions.optimized import DELTA, STATE_METHODS, bernstein_ci
from workbench.constructions.random_features import sample_heads
from workbench.core.sphere import sample_instances
from workbench.core.targets import nearest_neighbour
from workbench.core.validation import check_dim, check_heads, check_int
from workbench.models.attention import GeneralizedAttention
from workbench.models.scores import DotScore

__all__ = ["BETAS", "METHOD", "RandomFeaturesDN", "random_features_dn"]

METHOD = STATE_METHODS[1]  # "random_features_solved": stored and replayed as a state dict
BETAS = (0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)


@dataclass
class RandomFeaturesDN:
    """The model, its values, the chosen ``beta``, the solve sample's error at each ``beta``, and
    the fresh measurement: ``error`` with its interval ``ci`` at ``1 - DELTA`` on ``n_eval``
    samples of the stream ``stream``."""

    model: GeneralizedAttention
    a: np.ndarray
    beta: float
    solve_errors: dict[float, float]
    error: float
    ci: tuple[float, float]
    n_eval: int
    stream: int


def _layer(Q: torch.Tensor, K: torch.Tensor, beta: float, a: torch.Tensor) -> GeneralizedAttention:
    H, d = Q.shape
    model = GeneralizedAttention(d, 1, H, score="dot", normalizer="softmax", dtype=torch.float64)
    with torch.no_grad():
        model.W.copy_(K.reshape(1, H, 1, d))
        cast(DotScore, model.score).Q.copy_(beta * Q.reshape(1, H, 1, d))
        model.M.copy_(a.reshape(1, H, 1, 1) * torch.eye(d, dtype=torch.float64))
    return model


def _features(model: GeneralizedAttention, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``F_h = X phi_h``: ``(B, H, d)``."""
    with torch.no_grad():
        p = model.probabilities(X, y)[0, :, :, 0, :]  # (H, B, N)
        return torch.einsum("hbn,bnd->bhd", p, X)


def _solve(F: torch.Tensor, f: torch.Tensor, n_eval: int) -> tuple[torch.Tensor, float, float]:
    """Least-squares values, the solve sample's error ``E||f - sum_h a_h F_h||^2`` and the
    upper end an ``n_eval``-sample Bernstein interval would have with that sample's variance."""
    n = F.shape[0]
    C = torch.einsum("bhd,bgd->hg", F, F) / n
    b = torch.einsum("bhd,bd->h", F, f) / n
    jitter = 1e-10 * float(C.diagonal().mean())
    a = torch.linalg.solve(C + jitter * torch.eye(len(b), dtype=C.dtype), b)
    loss = ((f - torch.einsum("h,bhd->bd", a, F)) ** 2).sum(-1)
    lg = float(np.log(4 / DELTA))
    bound = (1 + float(a.abs().sum())) ** 2
    half = float(np.sqrt(2 * float(loss.var()) * lg / n_eval)) + 7 * bound * lg / (3 * n_eval)
    return a, float(loss.mean()), float(loss.mean()) + half


def random_features_dn(d: int, H: int, N: int, *, n_solve: int = 20_000, n_eval: int = 100_000,
                       betas: tuple[float, ...] = BETAS, seed: int = 0,
                       chunk: int = 20_000) -> RandomFeaturesDN:
    """Random rank-1 softmax heads with solved values on D_N at ``(d, H, N)`` (module
    docstring); draws: heads from ``seed``, the solve sample from ``seed + 1``, the fresh
    measurement from ``seed + 2``."""
    d, H = check_dim(d), check_heads(H)
    N = check_int("N", N, lo=2, hi=d)
    n_solve = check_int("n_solve", n_solve, lo=H + 1)
    n_eval = check_int("n_eval", n_eval, lo=2)
    if not betas or any(not (b >= 0 and np.isfinite(b)) for b in betas):
        raise ValueError(f"betas must be finite numbers >= 0 (got {betas})")
    Q, K = sample_heads(H, d, "cosine_uniform", seed)
    X, y = sample_instances(n_solve, N, d, "orthonormal", "uniform", seed + 1)
    f = nearest_neighbour(X, y)
    ones = torch.ones(H, dtype=torch.float64)
    solved = {}
    for beta in betas:
        solved[float(beta)] = _solve(_features(_layer(Q, K, beta, ones), X, y), f, n_eval)
    beta = min(solved, key=lambda b: solved[b][2])
    a = solved[beta][0]
    model = _layer(Q, K, beta, a)
    gen = torch.Generator().manual_seed(seed + 2)
    losses = []
    with torch.no_grad():
        for start in range(0, n_eval, chunk):
            Xe, ye = sample_instances(min(chunk, n_eval - start), N, d, "orthonormal", "uniform",
                                      gen)
            losses.append(((model(Xe, ye)[0] - nearest_neighbour(Xe, ye)) ** 2).sum(-1))
    loss = torch.cat(losses).numpy()
    bound = (1 + float(a.abs().sum())) ** 2
    lo, hi = bernstein_ci(loss, bound, DELTA)
    return RandomFeaturesDN(model, a.numpy(), beta, {b: e for b, (_, e, _) in solved.items()},
                            float(loss.mean()), (lo, hi), n_eval, seed + 2)
