"""Toy plug-ins the tests name as ``module:function`` (docs/extending.md): constructions whose
error is known exactly, and bounds.

On ``D_2`` (two orthonormal keys) the midpoint of the keys has error exactly
``||x_1 - x_2||^2 / 4 = 1/2`` whatever the query; the nearest neighbour itself has error 0.
"""

from __future__ import annotations

import torch

from workbench.constructions import ClaimedError
from workbench.plugins import Bound, Construction

MIDPOINT_ERROR = 0.5


class Midpoint(torch.nn.Module):
    """``(x_1 + ... + x_N) / N`` through a float32 linear map (a plain user module); records the
    dtype of its inputs."""

    def __init__(self, d: int, stacked: bool = False) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(d, d, bias=False)
        with torch.no_grad():
            self.lin.weight.copy_(torch.eye(d))
        self.stacked = stacked
        self.seen: list[torch.dtype] = []

    def forward(self, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        self.seen.append(X.dtype)
        out = self.lin(X.mean(1))
        return out[None] if self.stacked else out


def midpoint(d: int, rank: int, heads: int, N: int, seed: int, *, claim: float = 0.55,
             stacked: bool = False, copies: int = 1, label: str = "midpoint") -> tuple:
    """The midpoint of the keys (error 1/2 on D_2), claiming ``claim``."""
    return Midpoint(d, stacked), claim


def overclaimed(d: int, rank: int, heads: int, N: int, seed: int) -> tuple:
    """The midpoint of the keys claiming 0.45, which it cannot reach."""
    return Midpoint(d), 0.45


def first_key(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x[:, 0]


def copies_first_key(d: int, rank: int, heads: int, N: int, seed: int) -> tuple:
    """Copies the first key, measured against the first key: error 0 exactly."""
    return first_key, ClaimedError.exact(0.0, "==", "exact", "copies its target"), first_key


def oracle(d: int, rank: int, heads: int, N: int, seed: int) -> tuple:
    """The nearest neighbour itself (error 0): no model of the bounds' class does this."""
    from workbench.core.targets import nearest_neighbour

    return nearest_neighbour, 0.0


class _TooManyHeads(Midpoint):
    heads, rank = 1000, 1


def too_many_heads(d: int, rank: int, heads: int, N: int, seed: int) -> tuple:
    """The midpoint, in a model that says it has 1000 heads."""
    return _TooManyHeads(d), 0.55


def bound_0_3(d: int, rank: int, heads: int, N: int) -> float:
    return 0.3


def bound_0_6(d: int, rank: int, heads: int, N: int) -> float:
    return 0.6


UPPER = Bound("toy-upper", bound_0_6, side="upper", status="conjectured", law="any", N=None)


def _midpoint_bytes(d: int, rank: int, heads: int, N: int, **params: object) -> int:
    """As if each head held a d x d float64 map."""
    return 8 * heads * d * d


# the midpoint with a memory estimate (a byte count), and the same without one
SIZED = Construction("toy-sized", midpoint, params={"claim": 0.55}, memory=_midpoint_bytes)
UNSIZED = Construction("toy-unsized", midpoint, params={"claim": 0.55})
