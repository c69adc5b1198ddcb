"""Hypothesis strategies over dimension, rank, heads and sequence length.

Exported so users can property-test their own constructions::

    from hypothesis import given
    from workbench.strategies import attention_configs

    @given(attention_configs(max_d=16))
    def test_mine(cfg): ...
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from workbench.core.sphere import sample_instances

__all__ = [
    "AttentionConfig",
    "attention_configs",
    "dims",
    "heads",
    "instances",
    "ranks",
    "seeds",
    "seq_lengths",
    "temperatures",
]


@dataclass(frozen=True)
class AttentionConfig:
    """A point ``(d, r, H, N)`` of the parameter domain (``1 <= r <= d``, ``N >= 1``)."""

    d: int
    r: int
    H: int
    N: int


def dims(min_d: int = 2, max_d: int = 32) -> st.SearchStrategy[int]:
    """Ambient dimension ``d >= 2``."""
    return st.integers(min_value=max(2, min_d), max_value=max_d)


def ranks(d: int) -> st.SearchStrategy[int]:
    """Rank ``r`` in ``1..d``, with the edge cases 1, d-1 and d favoured."""
    edge = sorted({1, max(1, d - 1), d})
    return st.one_of(st.sampled_from(edge), st.integers(1, d))


def heads(max_heads: int = 64) -> st.SearchStrategy[int]:
    """Head count ``H >= 1``."""
    return st.one_of(st.just(1), st.integers(1, max_heads))


def seq_lengths(max_n: int = 32) -> st.SearchStrategy[int]:
    """Number of keys ``N >= 1``, with 1 and 2 favoured (the paper's N = 2 theorems)."""
    return st.one_of(st.sampled_from([1, 2]), st.integers(1, max_n))


def temperatures(max_beta: float = 1e4) -> st.SearchStrategy[float]:
    """Finite inverse temperatures in ``[0, max_beta]``, including 0."""
    return st.one_of(st.just(0.0), st.floats(0.0, max_beta, allow_nan=False, allow_infinity=False))


def seeds() -> st.SearchStrategy[int]:
    return st.integers(0, 2**31 - 1)


@st.composite
def attention_configs(
    draw: st.DrawFn,
    max_d: int = 32,
    max_heads: int = 64,
    max_n: int = 32,
    orthonormal: bool = False,
) -> AttentionConfig:
    """``(d, r, H, N)``; with ``orthonormal=True``, ``N <= d`` so that ``D_N`` exists."""
    d = draw(dims(max_d=max_d))
    r = draw(ranks(d))
    H = draw(heads(max_heads))
    N = draw(seq_lengths(min(d, max_n) if orthonormal else max_n))
    return AttentionConfig(d, r, H, N)


@st.composite
def instances(
    draw: st.DrawFn,
    config: AttentionConfig,
    batch: int = 8,
    points: str = "iid",
    dtype: torch.dtype = torch.float64,
) -> tuple[torch.Tensor, torch.Tensor]:
    """A seeded batch ``(X, y)`` for ``config``."""
    seed = draw(seeds())
    return sample_instances(batch, config.N, config.d, points=points, generator=seed, dtype=dtype)  # type: ignore[arg-type]
