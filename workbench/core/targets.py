"""Target functions of the paper (docs/paper.md §2, §6) on batched inputs.

Shapes: keys ``X`` are ``(batch, N, d)`` and queries ``y`` are ``(batch, d)``. Ties in an
argmax are broken towards the lowest index.
"""

from __future__ import annotations

import math

import torch

from workbench.core.sphere import Device, Generator, as_generator, gaussian
from workbench.core.validation import check_int, check_temperature


def check_keys_query(X: object, y: object) -> tuple[torch.Tensor, torch.Tensor]:
    """Validate ``X`` ``(batch, N, d)`` and ``y`` ``(batch, d)`` and their agreement."""
    if not isinstance(X, torch.Tensor) or X.ndim != 3 or not X.is_floating_point():
        raise ValueError(f"X must be a floating tensor of shape (batch, N, d) (got {_desc(X)})")
    if not isinstance(y, torch.Tensor) or y.ndim != 2 or not y.is_floating_point():
        raise ValueError(f"y must be a floating tensor of shape (batch, d) (got {_desc(y)})")
    if y.shape[0] != X.shape[0] or y.shape[1] != X.shape[2]:
        raise ValueError(
            f"y must have shape (batch, d) = ({X.shape[0]}, {X.shape[2]}) to match X "
            f"(got {tuple(y.shape)})"
        )
    if X.shape[1] < 1:
        raise ValueError("N must be an integer >= 1 (got 0 keys in X)")
    return X, y


def _gather(X: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """Rows ``X[b, idx[b, ...]]`` of ``X`` ``(batch, N, d)``: shape ``(*idx.shape, d)``.

    One ``index_select`` on the flattened rows (an exact copy, many times faster than ``gather``).
    """
    batch, N, d = X.shape
    offsets = torch.arange(batch, device=X.device).mul_(N).view(-1, *([1] * (idx.ndim - 1)))
    return X.reshape(batch * N, d).index_select(0, (idx + offsets).reshape(-1)).view(*idx.shape, d)


def _check_bias(bias: object, X: torch.Tensor) -> torch.Tensor:
    batch, N = X.shape[0], X.shape[1]
    if not isinstance(bias, torch.Tensor) or not bias.is_floating_point():
        raise ValueError(
            f"bias must be a floating tensor of shape (N,) or (batch, N) (got {_desc(bias)})"
        )
    if bias.shape not in {(N,), (batch, N)}:
        raise ValueError(
            f"bias must have shape (N,) = ({N},) or (batch, N) = ({batch}, {N}) "
            f"(got {tuple(bias.shape)})"
        )
    if not torch.isfinite(bias).all():
        raise ValueError("bias must be finite")
    return bias.to(X.dtype).expand(batch, N)


def nearest_neighbour(X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Hard target ``f(X, y) = x_{i*}``, ``i* = argmax_i <x_i, y>`` (docs/paper.md §2)."""
    X, y = check_keys_query(X, y)
    return _gather(X, torch.einsum("bnd,bd->bn", X, y).argmax(dim=-1))


def soft_nearest_neighbour(X: torch.Tensor, y: torch.Tensor, beta: float) -> torch.Tensor:
    """Soft target ``X softmax(beta X^T y)``: the full-rank head of Fact 1."""
    X, y = check_keys_query(X, y)
    beta = check_temperature(beta)
    p = torch.softmax(beta * torch.einsum("bnd,bd->bn", X, y), dim=-1)
    return torch.einsum("bn,bnd->bd", p, X)


def biased_nearest_neighbour(X: torch.Tensor, y: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """Biased target ``x_{argmax_i (<x_i, y> + b_i)}`` (Theorem 3's building block)."""
    X, y = check_keys_query(X, y)
    b = _check_bias(bias, X)
    return _gather(X, (torch.einsum("bnd,bd->bn", X, y) + b).argmax(dim=-1))


def soft_biased_nearest_neighbour(
    X: torch.Tensor, y: torch.Tensor, bias: torch.Tensor, beta: float
) -> torch.Tensor:
    """Softmax version: ``X softmax(beta (X^T y + b))``."""
    X, y = check_keys_query(X, y)
    b = _check_bias(bias, X)
    beta = check_temperature(beta)
    p = torch.softmax(beta * (torch.einsum("bnd,bd->bn", X, y) + b), dim=-1)
    return torch.einsum("bn,bnd->bd", p, X)


def farthest_point_sequence(X: torch.Tensor) -> torch.Tensor:
    """Sequence task of §4: every token queries; label of token i is ``argmin_j <x_j, x_i>``.

    Equivalently the nearest neighbour of ``-x_i``. Returns ``(batch, N, d)``.
    """
    if not isinstance(X, torch.Tensor) or X.ndim != 3 or not X.is_floating_point():
        raise ValueError(f"X must be a floating tensor of shape (batch, N, d) (got {_desc(X)})")
    if X.shape[1] < 1:
        raise ValueError("N must be an integer >= 1 (got 0 keys in X)")
    return _gather(X, torch.einsum("bnd,bmd->bnm", X, X).argmin(dim=-1))


def linear_regression_data(
    batch: int, n_dims: int, n_points: int, generator: Generator = None, device: Device = None,
    dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """In-context linear regression (Garg et al. 2022; docs/paper.md §6).

    Returns ``xs`` ``(batch, n_points + 1, n_dims)`` with ``x ~ N(0, I)``, ``ys = xs @ w`` of shape
    ``(batch, n_points + 1)`` and ``w ~ N(0, I)`` of shape ``(batch, n_dims)``. The first
    ``n_points`` pairs are the context; the last one is the query.
    """
    xs, w = linear_regression_draw(batch, n_dims, n_points, generator, device, dtype)
    return xs, linear_regression_labels(xs, w), w


def linear_regression_draw(
    batch: int, n_dims: int, n_points: int, generator: Generator = None, device: Device = None,
    dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The random part of :func:`linear_regression_data`: ``(xs, w)`` (same draws, same order)."""
    batch = check_int("batch", batch, lo=0)
    n_dims = check_int("n_dims", n_dims, lo=1)
    n_points = check_int("n_points", n_points, lo=1)
    gen = as_generator(generator)
    w = gaussian(batch, n_dims, generator=gen, device=device, dtype=dtype)
    xs = gaussian(batch, n_points + 1, n_dims, generator=gen, device=device, dtype=dtype)
    return xs, w


def linear_regression_labels(xs: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """``ys = xs @ w``: ``(batch, n_points + 1)`` from ``xs`` ``(batch, n_points + 1, n_dims)``."""
    return torch.einsum("bkn,bn->bk", xs, w)


def _desc(t: object) -> str:
    if isinstance(t, torch.Tensor):
        return f"{t.dtype} tensor of shape {tuple(t.shape)}"
    return type(t).__name__


def profile_target(X: torch.Tensor, y: torch.Tensor, psi: object) -> torch.Tensor:
    """The N = 2 target of a profile psi (docs/derivations/soft_targets.md, step S0):
    ``f = (x1 + x2)/2 + psi(<y, x1 - x2>/sqrt2) (x1 - x2)/2``, i.e. ``p1 - p2 = psi(<y, w>)``
    with ``w = (x1 - x2)/sqrt2``; ``psi`` maps numpy arrays to numpy arrays."""
    X, y = check_keys_query(X, y)
    if X.shape[1] != 2:
        raise ValueError(f"a profile target needs N = 2 keys (got N = {X.shape[1]})")
    if not callable(psi):
        raise ValueError(f"psi must be a function of a numpy array (got {_desc(psi)})")
    diff = X[:, 0] - X[:, 1]
    t = torch.einsum("bd,bd->b", diff, y) / math.sqrt(2)
    p = torch.as_tensor(psi(t.detach().cpu().double().numpy()), dtype=X.dtype, device=X.device)
    return (X[:, 0] + X[:, 1]) / 2 + p[:, None] * diff / 2
