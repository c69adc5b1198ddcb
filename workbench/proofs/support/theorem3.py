"""The documented reading of Theorem 3's biased target (docs/paper.md, Theorem 3;
docs/derivations/constructions.md §4), rebuilt from the formulas independently of
``workbench.constructions.biased`` so that the claims can check the construction against it.

``f* = sum_j c_j f_{b_j}`` with ``J = 2 d^2 + 1`` biased nearest-neighbour terms
``f_b(X, y) = x_{argmax_i (<x_i, y> + b_i)}``, ``b_j = tau_j e_2``, ``tau_j = 4 j / d^2``,
``c_j = (-1)^j`` (``j = -d^2..d^2``), Gaussian queries, ``D_N`` keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from workbench.core.sphere import sample_instances


def reading(d: int, coefficients: str = "alternating") -> tuple[torch.Tensor, torch.Tensor]:
    """Thresholds ``tau_j = 4 j / d^2`` and coefficients of the documented reading."""
    j = torch.arange(-(d**2), d**2 + 1, dtype=torch.float64)
    tau = 4.0 * j / d**2
    if coefficients == "alternating":
        c = torch.where(j.remainder(2) == 0, 1.0, -1.0).to(torch.float64)
    elif coefficients == "ones":
        c = torch.ones_like(j)
    else:
        raise ValueError(f"coefficients must be 'alternating' or 'ones' (got {coefficients!r})")
    return tau, c


def reference_target(
    X: torch.Tensor, y: torch.Tensor, coefficients: str = "alternating"
) -> torch.Tensor:
    """``f*(X, y) = sum_j c_j x_{argmax_i (<x_i, y> + tau_j [i = 2])}``, all terms at once."""
    d = X.shape[-1]
    tau, c = reading(d, coefficients)
    s = torch.einsum("bnd,bd->bn", X, y)  # (B, N)
    scores = s[:, None, :].expand(-1, len(tau), -1).clone()  # (B, J, N)
    scores[:, :, 1] += tau.to(X.dtype)
    idx = scores.argmax(-1)  # (B, J)
    picked = torch.gather(X, 1, idx[..., None].expand(-1, -1, d))  # (B, J, d)
    return torch.einsum("j,bjd->bd", c.to(X.dtype), picked)


@dataclass(frozen=True)
class BiasedTask:
    """Gaussian queries, ``D_N`` keys, target :func:`reference_target` (a ``TaskLike``)."""

    d: int
    N: int
    coefficients: str = "alternating"

    def sample(
        self, batch: int, generator: torch.Generator | None, device: Any = None
    ) -> tuple[tuple[torch.Tensor, torch.Tensor], torch.Tensor]:
        X, y = sample_instances(batch, self.N, self.d, "orthonormal", "gaussian", generator, device)
        return (X, y), reference_target(X, y, self.coefficients)

    def error(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        err = (pred - target).square().sum(-1)
        return err if err.ndim == 2 else err.unsqueeze(0)
