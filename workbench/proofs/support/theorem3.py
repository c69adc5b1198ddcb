"""The documented reading of Theorem 3's biased target
(docs/paper.md#theorem-3-exponential-separation,
docs/derivations/constructions.md#4-theorem-3-the-biased-family-inferred-reading), rebuilt from the
formulas independently of ``workbench.constructions.biased`` so that the claims can check the
construction against it, and the per-degree energies of that target which Theorem 3's lower side
and Remark 4 confront models with (docs/derivations/biased_lower_bound.md).

``f* = sum_j c_j f_{b_j}`` with ``J = 2 d^2 + 1`` biased nearest-neighbour terms
``f_b(X, y) = x_{argmax_i (<x_i, y> + b_i)}``, ``b_j = tau_j e_2``, ``tau_j = 4 j / d^2``,
``c_j = (-1)^j`` (``j = -d^2..d^2``), Gaussian queries, ``D_N`` keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import workbench.core.bounds.biased as biased_bounds
from workbench.proofs.claim import CheckContext

if TYPE_CHECKING:
    import torch


# The unknown c of Theorem 3's hypothesis d H max||V_h||^2 < exp(c (d - r)), read as 1
# (docs/derivations/biased_lower_bound.md#what-the-claims-assert).
C_HYP = 1.0


def reading(d: int, coefficients: str = "alternating") -> tuple[torch.Tensor, torch.Tensor]:
    """Thresholds ``tau_j = 4 j / d^2`` and coefficients of the documented reading."""
    import torch
    j = torch.arange(-(d**2), d**2 + 1, dtype=torch.float64)
    tau = 4.0 * j / d**2
    if coefficients == "alternating":
        c = torch.where(j.remainder(2) == 0, 1.0, -1.0).to(torch.float64)
    elif coefficients == "ones":
        c = torch.ones_like(j)
    else:
        raise ValueError(f"coefficients must be 'alternating' or 'ones' (got {coefficients!r})")
    return tau, c


def reference_target(X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``f*(X, y) = sum_j c_j x_{argmax_i (<x_i, y> + tau_j [i = 2])}``, all terms at once: each
    key ``x_i`` weighted by the sum of the ``c_j`` of the terms that pick it."""
    import torch
    B, N, _ = X.shape
    tau, c = reading(X.shape[-1])
    s = torch.einsum("bnd,bd->bn", X, y)  # (B, N)
    bias = torch.zeros(len(tau), N, dtype=X.dtype)
    bias[:, 1] = tau.to(X.dtype)
    idx = (s[:, None, :] + bias).argmax(-1)  # (B, J): the key each term picks
    weights = torch.zeros(B, N, dtype=X.dtype).scatter_add_(
        1, idx, c.to(X.dtype).expand(B, -1).contiguous())  # (B, N)
    return torch.einsum("bn,bnd->bd", weights, X)


@dataclass(frozen=True)
class BiasedTask:
    """Gaussian queries, ``D_N`` keys, target :func:`reference_target` (a ``TaskLike``)."""

    d: int
    N: int

    def sample(
        self, batch: int, generator: torch.Generator | None, device: Any = None
    ) -> tuple[tuple[torch.Tensor, torch.Tensor], torch.Tensor]:
        from workbench.core.sphere import sample_instances
        X, y = sample_instances(batch, self.N, self.d, "orthonormal", "gaussian", generator, device)
        return (X, y), reference_target(X, y)

    def error(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        err = (pred - target).square().sum(-1)
        return err if err.ndim == 2 else err.unsqueeze(0)


def target_energies(d: int, ctx: CheckContext) -> biased_bounds.DegreeEnergies:
    """Per-degree energies of the documented target (thresholds and coefficients of
    :func:`reading`): degrees up to 300 over 1000 strata of ``rho`` (quick), 800 over 4000."""
    tau, c = reading(d)
    L, n = ctx.pick((300, 1000), (800, 4000))
    return biased_bounds.degree_energies(d, tau.numpy(), c.numpy(), max_degree=L, samples=n,
                                         seed=ctx.seed)
