"""The construction: tied rank-1 hardmax heads (``q_h = k_h``) whose directions come from a
deterministic design instead of a random draw, with the optimal values of ``C a = b``.

The design maps the Kronecker sequence ``(h alpha_1, ..., h alpha_d) mod 1`` (``alpha_k``
square roots of the primes) through the normal quantile and normalises: a low-discrepancy set
of directions that is the same on every run, so the claimed error needs no seed at all.
"""

from __future__ import annotations

import math

import torch
from scipy.stats import norm

from workbench.constructions import ClaimedError, rank_one
from workbench.plugins import Construction

_PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79,
           83, 89, 97, 101, 103, 107, 109, 113, 127, 131)


def design(heads: int, d: int, offset: float = 0.5) -> torch.Tensor:
    """``(heads, d)`` unit directions of the Kronecker design (float64)."""
    if not 2 <= d <= len(_PRIMES):
        raise ValueError(f"d must be an integer in 2..{len(_PRIMES)} (got {d})")
    if heads < 1:
        raise ValueError(f"heads must be an integer >= 1 (got {heads})")
    alpha = torch.tensor([math.sqrt(p) for p in _PRIMES[:d]], dtype=torch.float64)
    h = torch.arange(1, heads + 1, dtype=torch.float64)[:, None]
    u = torch.remainder(h * alpha + offset, 1.0).clamp(1e-12, 1 - 1e-12)
    z = torch.from_numpy(norm.ppf(u.numpy()))
    return z / z.norm(dim=1, keepdim=True)


def structured_heads(d: int, rank: int, heads: int, N: int, seed: int, *,
                     offset: float = 0.5) -> tuple[torch.nn.Module, ClaimedError]:
    """Tied rank-1 heads from the Kronecker design; values solve ``C a = b`` (exact D_2 error)."""
    if N != 2:
        raise ValueError(f"N must be 2 for structured heads (got {N})")
    Q = design(heads, d, offset)
    sol = rank_one.solve_heads(Q, Q)
    claimed = ClaimedError.exact(rank_one.exact_error(Q, Q, sol.a), "==", "exact_kernel",
                                 "tied Kronecker-design heads: err(D_2) == 1 - 2 a.b + a.C.a")
    return rank_one.rank_one_model(Q, Q, sol.a), claimed


STRUCTURED_HEADS = Construction(
    "structured-heads", structured_heads, params={"offset": 0.5},
    defaults={"d": 8, "rank": 1, "heads": 64, "N": 2},
    description="tied rank-1 heads from a deterministic (Kronecker) design, values from C a = b",
    source="workbench-structured-heads",
)
