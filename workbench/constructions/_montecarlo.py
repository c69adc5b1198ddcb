"""What the constructions share: the claimed error (PEPit's theoretical value) and the Monte
Carlo error of a construction's model against its target.

Means and intervals come from ``workbench.core.montecarlo`` (``Estimate``, named intervals): with
``bounds`` (the a-priori range of every value) the ``bounded`` interval, else the CLT one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, cast

import torch

from workbench.core.intervals import NONNEGATIVE, Estimate
from workbench.core.montecarlo import estimate_mean
from workbench.core.sphere import Generator


@dataclass(frozen=True)
class ClaimedError:
    """A construction's theoretical error claim (PEPit's ``theoretical_value``).

    ``relation`` says how the measured error must relate to ``value``: ``"<="`` for an upper
    bound, ``"=="`` for an exact value. ``lo``/``hi`` is the CI when ``method`` is
    ``"monte_carlo"``, else ``lo == hi == value``. A measured error contradicts an upper bound only
    when its CI lies entirely above ``hi``.
    """

    value: float
    relation: str
    method: str
    statement: str
    lo: float
    hi: float
    extra: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def exact(
        value: float, relation: str, method: str, statement: str, **extra: Any
    ) -> ClaimedError:
        v = float(value)
        return ClaimedError(v, relation, method, statement, v, v, dict(extra))

    @staticmethod
    def from_estimate(est: Estimate, relation: str, statement: str, **extra: Any) -> ClaimedError:
        return ClaimedError(
            est.mean,
            relation,
            "monte_carlo",
            statement,
            est.lo,
            est.hi,
            {"samples": est.n, **extra},
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def squared_error(out: torch.Tensor, ref: torch.Tensor) -> torch.Tensor:
    """``||out - ref||^2`` per sample (docs/paper.md §2: plain squared norm, not averaged)."""
    return ((out - ref) ** 2).sum(dim=-1)


def model_error(
    forward: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    target: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    d: int,
    N: int,
    samples: int,
    points: str = "orthonormal",
    queries: str = "uniform",
    generator: Generator = None,
    batch: int = 4096,
    level: float = 0.99,
    bounds: tuple[float, float] | None = None,
) -> Estimate:
    """Monte Carlo ``E ||target(X, y) - forward(X, y)||^2`` on fresh ``(X, y)`` with a CI.

    ``forward`` may return ``(B, d)`` or ``(1, B, d)`` (one model of a stacked layer).
    ``bounds``: the error's a-priori range (``(0, 4)`` when outputs lie in the unit ball;
    default ``NONNEGATIVE``: a CLT interval cut at 0, since an error is never negative).
    """
    from workbench.core.sphere import PointLaw, QueryLaw, sample_instances

    def draw(m: int, gen: torch.Generator | None) -> torch.Tensor:
        X, y = sample_instances(
            m, N, d, points=cast(PointLaw, points), queries=cast(QueryLaw, queries), generator=gen
        )
        with torch.no_grad():
            out = forward(X, y)
        if out.ndim == 3:
            out = out[0]
        return squared_error(out.to(torch.float64), target(X, y))

    return estimate_mean(
        draw, samples=samples, batch=batch, level=level, generator=generator,
        bounds=NONNEGATIVE if bounds is None else bounds,
    )[0]
