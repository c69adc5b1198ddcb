"""Helpers shared by the property modules (imported by name: pytest puts this folder on
the path)."""

from __future__ import annotations

import torch
from hypothesis import settings
from hypothesis import strategies as st

from tests.constructions import construction_cases

F64 = torch.float64

RF_DIMS = st.sampled_from([2, 3, 5, 8])
"""Dimensions for random-feature properties: tabulating b(c) costs ~1 s per new d (cached)."""


def fewer(divisor: int) -> settings:
    """The active profile's settings with ``max_examples`` divided by ``divisor`` (at least 3), for
    the properties whose single example costs much more than the rest."""
    return settings(max_examples=max(3, settings.default.max_examples // divisor))


def scores(X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``<x_i, y>``: ``(B, N)``."""
    return torch.einsum("bnd,bd->bn", X, y)


def gaps(X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Best minus second-best score per instance (``inf`` for ``N = 1``)."""
    s = scores(X, y)
    if s.shape[1] == 1:
        return torch.full((s.shape[0],), float("inf"), dtype=s.dtype)
    top = s.topk(2, dim=-1).values
    return top[:, 0] - top[:, 1]


def brute_nearest(X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``x_{argmax_i <x_i, y>}`` by an explicit loop (ties: lowest index), as a tensor like ``X``:
    the construction tests' reference interpreter."""
    return torch.from_numpy(construction_cases.brute_nearest(X, y)).to(X.dtype)
