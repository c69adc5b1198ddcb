"""Seeded samplers on the unit sphere S^{d-1} (docs/paper.md §2, distributions).

Everything random takes ``generator``: a ``torch.Generator``, an int seed, or ``None`` for
torch's global RNG. With an int seed the numbers are drawn on the CPU and then moved to
``device``, so the same seed gives the same numbers whatever the device. A generator that lives
on ``device`` samples there directly (fast on a GPU).
"""

from __future__ import annotations

from typing import Literal

import torch

from workbench.core.validation import (
    check_choice,
    check_dim,
    check_int,
    check_orthonormal_keys,
    check_points,
)

Generator = torch.Generator | int | None
Device = str | torch.device | None
PointLaw = Literal["iid", "orthonormal"]
QueryLaw = Literal["uniform", "gaussian"]
POINT_LAWS: tuple[str, ...] = ("iid", "orthonormal")
GRAM_SCHMIDT_MAX_N = 6  # D_N keys: above it, N^2 row updates cost more than one batched QR
QUERY_LAWS: tuple[str, ...] = ("uniform", "gaussian")


def make_generator(seed: int, device: str | torch.device = "cpu") -> torch.Generator:
    """A ``torch.Generator`` on ``device`` seeded with ``seed``."""
    g = torch.Generator(device=torch.device(device))
    g.manual_seed(check_int("seed", seed, lo=0))
    return g


def gaussian(
    *shape: int, generator: Generator = None, device: Device = None,
    dtype: torch.dtype = torch.float64,
) -> torch.Tensor:
    """Standard normal entries of the given shape."""
    for i, s in enumerate(shape):
        check_int(f"shape[{i}]", s, lo=0)
    gen, sample_device = _resolve(generator, device)
    z = torch.randn(*shape, generator=gen, device=sample_device, dtype=dtype)
    return z.to(device) if device is not None else z


def uniform_sphere(
    *shape: int, d: int, generator: Generator = None, device: Device = None,
    dtype: torch.dtype = torch.float64,
) -> torch.Tensor:
    """I.i.d. uniform points on S^{d-1}: a tensor of shape ``(*shape, d)``."""
    d = check_dim(d)
    z = gaussian(*shape, d, generator=generator, device=device, dtype=dtype)
    return z / z.norm(dim=-1, keepdim=True)


def orthonormal_points(
    batch: int, N: int, d: int, generator: Generator = None, device: Device = None,
    dtype: torch.dtype = torch.float64,
) -> torch.Tensor:
    """``D_N`` keys: ``(batch, N, d)``, each row set a Haar-random orthonormal N-frame (N <= d)."""
    d = check_dim(d)
    N = check_orthonormal_keys("orthonormal", check_points(N), d)
    batch = check_int("batch", batch, lo=0)
    z = gaussian(batch, d, N, generator=generator, device=device, dtype=dtype)
    if N <= GRAM_SCHMIDT_MAX_N:
        return gram_schmidt(z.transpose(-1, -2))
    q, r = torch.linalg.qr(z)  # (batch, d, N), Haar after fixing the signs of diag(r)
    signs = torch.sign(torch.diagonal(r, dim1=-2, dim2=-1))
    signs = torch.where(signs == 0, torch.ones_like(signs), signs)
    return (q * signs.unsqueeze(-2)).transpose(-1, -2).contiguous()


def gram_schmidt(z: torch.Tensor) -> torch.Tensor:
    """The rows of ``z`` (``(..., N, d)``, independent) orthonormalised in order: the Q factor
    of ``z^T`` whose R has a positive diagonal, so Haar-random for Gaussian ``z``. Modified
    Gram-Schmidt with a second pass ("twice is enough") on contiguous rows, vectorised over the
    batch: the same frame as a sign-fixed QR to rounding, and several times faster for the small
    N of D_N."""
    rows: list[torch.Tensor] = []
    for j in range(z.shape[-2]):
        v = z[..., j, :].contiguous()
        for _ in range(2 if rows else 0):
            for q in rows:
                v = v - (q * v).sum(-1, keepdim=True) * q
        rows.append(v / torch.linalg.vector_norm(v, dim=-1, keepdim=True))
    return torch.stack(rows, -2)


def check_point_law(points: str, N: int, d: int) -> str:
    """A point law of ``POINT_LAWS`` for ``N`` keys in R^d (orthonormal points need N <= d)."""
    points = check_choice("points", points, POINT_LAWS)
    check_orthonormal_keys(points, N, d)
    return points


def sample_points(
    batch: int, N: int, d: int, law: PointLaw = "iid", generator: Generator = None,
    device: Device = None, dtype: torch.dtype = torch.float64,
) -> torch.Tensor:
    """Keys ``X`` of shape ``(batch, N, d)``: i.i.d. uniform, or ``D_N`` orthonormal."""
    check_choice("law", law, POINT_LAWS)
    if law == "orthonormal":
        return orthonormal_points(batch, N, d, generator, device, dtype)
    check_points(N)
    check_int("batch", batch, lo=0)
    return uniform_sphere(batch, N, d=d, generator=generator, device=device, dtype=dtype)


def sample_queries(
    batch: int, d: int, law: QueryLaw = "uniform", generator: Generator = None,
    device: Device = None, dtype: torch.dtype = torch.float64,
) -> torch.Tensor:
    """Queries ``y`` of shape ``(batch, d)``: uniform on S^{d-1}, or standard Gaussian."""
    check_choice("law", law, QUERY_LAWS)
    check_int("batch", batch, lo=0)
    if law == "gaussian":
        return gaussian(batch, check_dim(d), generator=generator, device=device, dtype=dtype)
    return uniform_sphere(batch, d=d, generator=generator, device=device, dtype=dtype)


def sample_instances(
    batch: int, N: int, d: int, points: PointLaw = "iid", queries: QueryLaw = "uniform",
    generator: Generator = None, device: Device = None, dtype: torch.dtype = torch.float64,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(X, y)`` with ``X`` ``(batch, N, d)`` and ``y`` ``(batch, d)`` independent of ``X``.

    ``points="orthonormal"`` with uniform queries is the paper's ``D_N``.
    """
    gen = as_generator(generator)
    X = sample_points(batch, N, d, points, gen, device, dtype)
    y = sample_queries(batch, d, queries, gen, device, dtype)
    return X, y


def as_generator(generator: Generator) -> torch.Generator | None:
    """Turn an int seed into one generator so consecutive draws are independent."""
    if isinstance(generator, bool):
        raise ValueError(
            f"generator must be a torch.Generator, an int seed or None (got {generator!r})"
        )
    if isinstance(generator, int):
        return make_generator(generator, "cpu")
    return generator


def _resolve(
    generator: Generator, device: Device
) -> tuple[torch.Generator | None, torch.device | None]:
    gen = as_generator(generator)
    if gen is None:
        return None, torch.device(device) if device is not None else None
    if not isinstance(gen, torch.Generator):
        raise ValueError(
            f"generator must be a torch.Generator, an int seed or None (got {type(gen).__name__})"
        )
    return gen, gen.device
