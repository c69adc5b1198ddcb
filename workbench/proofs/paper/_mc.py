"""Small helpers shared by the paper's claim modules."""

from __future__ import annotations

import math

import torch

Z_999 = 3.2905267314918945  # two-sided 99.9% normal quantile


def mean_ci(samples: torch.Tensor, z: float = Z_999) -> tuple[float, tuple[float, float]]:
    """Sample mean with a CLT interval ``mean +- z * sd / sqrt(n)``."""
    x = samples.detach().double().flatten()
    n = x.numel()
    m = float(x.mean())
    half = z * float(x.std(unbiased=True)) / math.sqrt(n) if n > 1 else math.inf
    return m, (m - half, m + half)
