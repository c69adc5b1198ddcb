"""Small helpers shared by the paper's claim modules: means with named confidence intervals
(``workbench.core.intervals``)."""

from __future__ import annotations

import math

import torch
from scipy.stats import norm

from workbench.core.intervals import mean_interval

Z_999 = 3.2905267314918945  # two-sided 99.9% normal quantile


def mean_ci(samples: torch.Tensor, z: float = Z_999) -> tuple[float, tuple[float, float]]:
    """Sample mean with a CLT interval ``mean +- z * sd / sqrt(n)`` (label it ``normal``)."""
    x = samples.detach().double().flatten()
    n = x.numel()
    m = float(x.mean())
    half = z * float(x.std(unbiased=True)) / math.sqrt(n) if n > 1 else math.inf
    return m, (m - half, m + half)


def bounded_mean_ci(
    samples: torch.Tensor, bounds: tuple[float, float], z: float = Z_999, method: str = "bounded"
) -> tuple[float, tuple[float, float]]:
    """Sample mean with an interval valid for every ``n`` when every value lies in ``bounds``
    (``bounded``: empirical Bernstein and Chernoff-KL; ``clopper_pearson`` for 0/1 values).
    A value outside ``bounds`` raises: the a-priori range was wrong."""
    x = samples.detach().double().flatten()
    slack = 1e-9 * (bounds[1] - bounds[0])
    if float(x.min()) < bounds[0] - slack or float(x.max()) > bounds[1] + slack:
        raise ValueError(f"bounds {bounds} must contain every sample")
    x = x.clamp(bounds[0], bounds[1])
    n = x.numel()
    var = float(x.var(unbiased=True)) if n > 1 else 0.0
    iv = mean_interval(float(x.mean()), var, n, 2 * float(norm.cdf(z)) - 1, method, bounds)
    return iv.mean, (iv.lo, iv.hi)
