"""A construction given as a plain function: the zero model, whose error on unit keys is 1."""

from __future__ import annotations

from typing import Any

import torch


class Zero(torch.nn.Module):
    def forward(self, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(y)


def zero_model(d: int, rank: int, heads: int, N: int, seed: int) -> tuple[Any, float]:
    """The zero model, claiming error <= 1.05 (its error is 1: the keys are unit vectors)."""
    return Zero(), 1.05
