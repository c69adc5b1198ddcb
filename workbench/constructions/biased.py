"""Theorem 3 (upper-bound side): full-rank biased attention represents a fixed linear
combination of ``2d^2 + 1`` biased nearest-neighbour functions with ``O(d^2)`` heads.

docs/paper.md marks the definitions as inferred; the reading chosen here (docs/derivations/
constructions.md §4) is a parameterised family:

- building block: ``f_b(X, y) = x_{argmax_i (<x_i, y> + b_i)}`` (``workbench.core.targets``);
- ``J = 2 d^2 + 1`` bias vectors ``b_j = (0, tau_j, 0, ..., 0)`` with thresholds
  ``tau_j = j * spacing``, ``j = -d^2..d^2`` (default ``spacing = 4/d^2``), so for ``N = 2`` term
  ``j`` picks ``x_1`` iff ``<x_1 - x_2, y> > tau_j``;
- coefficients ``c_j``: ``alternating`` (``(-1)^j``, a square wave in ``<x_1 - x_2, y>`` with
  ``2 d^2`` jumps: high harmonic degree), ``ones`` or ``random_signs``;
- ``f* = sum_j c_j f_{b_j}``, queries Gaussian ``y ~ N(0, I_d)``, keys ``D_N`` or i.i.d.

Construction: head j is full rank (``W_j = Q_j = I``), bias ``b_j``, value ``M_j = c_j I``. With
hardmax it equals ``f*`` exactly (claim 0, up to the null set of ties); with softmax at
temperature ``beta`` the claim is ``E[(sum_j |c_j| 2 min(1, (N-1) e^{-beta gap_j}))^2]`` (Monte
Carlo with a CI), ``gap_j`` the top-1 minus top-2 biased score of term j.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import torch

from workbench.constructions._montecarlo import ClaimedError
from workbench.core.montecarlo import estimate_mean
from workbench.core.sphere import (
    Generator,
    PointLaw,
    as_generator,
    check_point_law,
    sample_instances,
)
from workbench.core.targets import biased_nearest_neighbour, check_keys_query
from workbench.core.validation import (
    check_choice,
    check_dim,
    check_float,
    check_int,
    check_points,
    check_temperature,
)
from workbench.models.attention import GeneralizedAttention
from workbench.models.scores import BiasScore

COEFFICIENT_LAWS: tuple[str, ...] = ("alternating", "ones", "random_signs")
NORMALIZERS: tuple[str, ...] = ("hardmax", "softmax")
STATEMENT_HARD = "Thm 3 (upper side): 2d^2+1 full-rank biased hardmax heads equal f* (err = 0)"
STATEMENT_SOFT = "Thm 3 (upper side): err <= E[(sum_j |c_j| 2 min(1, (N-1) exp(-beta gap_j)))^2]"


@dataclass(frozen=True)
class BiasedFamily:
    """``f* = sum_j coeffs[j] f_{biases[j]}`` with ``biases`` ``(J, N)`` and ``coeffs`` ``(J,)``."""

    d: int
    biases: torch.Tensor
    coeffs: torch.Tensor

    @property
    def N(self) -> int:
        return int(self.biases.shape[1])

    @property
    def terms(self) -> int:
        return int(self.biases.shape[0])

    def target(self, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Reference ``f*(X, y)`` ``(B, d)``, one biased nearest neighbour at a time."""
        X, y = check_keys_query(X, y)
        if X.shape[1] != self.N:
            raise ValueError(f"X must have N = {self.N} keys (got {X.shape[1]})")
        out = torch.zeros(X.shape[0], X.shape[2], dtype=X.dtype)
        for b, c in zip(self.biases.to(X.dtype), self.coeffs.to(X.dtype)):
            out += c * biased_nearest_neighbour(X, y, b)
        return out


def theorem3_family(
    d: int,
    N: int = 2,
    spacing: float | None = None,
    coefficients: str = "alternating",
    generator: Generator = 0,
) -> BiasedFamily:
    """The inferred Theorem 3 target: ``2 d^2 + 1`` threshold terms (see module docstring)."""
    d, N = check_dim(d), check_points(N)
    if N < 2:
        raise ValueError(f"N must be an integer >= 2 for the biased family (got {N})")
    spacing = (
        4.0 / d**2 if spacing is None else check_float("spacing", spacing, lo=0.0, lo_open=True)
    )
    coefficients = check_choice("coefficients", coefficients, COEFFICIENT_LAWS)
    j = torch.arange(-(d**2), d**2 + 1, dtype=torch.float64)
    biases = torch.zeros(len(j), N, dtype=torch.float64)
    biases[:, 1] = j * spacing
    if coefficients == "alternating":
        coeffs = 1.0 - 2.0 * (j.abs() % 2)
    elif coefficients == "ones":
        coeffs = torch.ones_like(j)
    else:
        g = as_generator(generator)
        coeffs = torch.randint(0, 2, (len(j),), generator=g).to(torch.float64) * 2 - 1
    return BiasedFamily(d, biases, coeffs)


def biased_model(
    family: BiasedFamily, normalizer: str = "hardmax", beta: float = 1.0
) -> GeneralizedAttention:
    """Full-rank biased attention, one head per term: ``W = Q = I``, bias ``b_j``, ``M = c_j I``."""
    normalizer = check_choice("normalizer", normalizer, NORMALIZERS)
    beta = check_float("beta", beta, lo=0.0, lo_open=True)
    d, J, N = family.d, family.terms, family.N
    model = GeneralizedAttention(
        d,
        d,
        J,
        score="bias",
        score_options={"max_len": N},
        normalizer=normalizer,
        scale=beta if normalizer == "softmax" else 1.0,
        dtype=torch.float64,
    )
    eye = torch.eye(d, dtype=torch.float64)
    with torch.no_grad():
        model.W.copy_(eye.expand(1, J, d, d))
        score = cast(BiasScore, model.score)
        score.Q.copy_(eye.expand(1, J, d, d))
        score.bias.copy_(family.biases.reshape(1, J, N))
        model.M.copy_(family.coeffs.reshape(1, J, 1, 1) * eye)
    return model


def soft_bound_values(
    family: BiasedFamily, X: torch.Tensor, y: torch.Tensor, beta: float
) -> torch.Tensor:
    """Per-sample ``(sum_j |c_j| 2 min(1, (N-1) exp(-beta gap_j)))^2`` (pointwise bound)."""
    beta = check_temperature(beta)
    s = torch.einsum("bnd,bd->bn", X, y)[:, None, :] + family.biases.to(X.dtype)[None]  # (B, J, N)
    top = s.topk(2, dim=-1).values
    gap = top[..., 0] - top[..., 1]
    per = 2 * torch.clamp((family.N - 1) * torch.exp(-beta * gap), max=1.0)
    return (per * family.coeffs.abs().to(X.dtype)).sum(-1) ** 2


def biased(
    d: int,
    N: int = 2,
    normalizer: str = "hardmax",
    beta: float = 100.0,
    points: str = "orthonormal",
    spacing: float | None = None,
    coefficients: str = "alternating",
    generator: Generator = 0,
    claim_samples: int = 20_000,
) -> tuple[GeneralizedAttention, ClaimedError, BiasedFamily]:
    """Theorem 3's full-rank biased construction: ``(model, claimed, family)``.

    The third element carries the reference target ``family.target`` (Gaussian queries).
    """
    d, N = check_dim(d), check_points(N)
    points = check_point_law(points, N, d)
    family = theorem3_family(d, N, spacing, coefficients, generator)
    model = biased_model(family, normalizer, beta)
    if normalizer == "hardmax":
        claim = ClaimedError.exact(0.0, "==", "exact", STATEMENT_HARD, heads=family.terms)
        return model, claim, family

    def draw(m: int, g: torch.Generator | None) -> torch.Tensor:
        law = cast(PointLaw, points)
        X, y = sample_instances(m, N, d, points=law, queries="gaussian", generator=g)
        return soft_bound_values(family, X, y, beta)

    est = estimate_mean(draw, samples=check_int("claim_samples", claim_samples, lo=2),
                        batch=2048, level=0.99, generator=generator)[0]
    return (
        model,
        ClaimedError.from_estimate(est, "<=", STATEMENT_SOFT, heads=family.terms, beta=beta),
        family,
    )
