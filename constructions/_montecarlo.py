"""Private helpers shared by the constructions: Monte Carlo means with CIs and claimed errors.

Kept inside ``constructions/`` because the layering forbids importing ``verifiers/`` here.
The CI is named by ``Estimate.interval``: with ``bounds`` (the a-priori range of every value) the
``bounded`` interval of ``workbench.core.intervals`` (empirical Bernstein intersected with the
Chernoff-KL bound: valid for every ``n`` and for rare-event errors); without, the CLT interval
``mean +- z * s / sqrt(n)`` (``z = 2.576`` for 99 %), labelled ``normal``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, cast

import torch
from scipy.stats import norm

from workbench.core.intervals import mean_interval
from workbench.core.sphere import Generator, as_generator
from workbench.core.validation import check_float, check_int

Z99 = 2.5758293035489004


@dataclass(frozen=True)
class Estimate:
    """A Monte Carlo mean and its two-sided CI ``[lo, hi]``."""

    mean: float
    stderr: float
    lo: float
    hi: float
    samples: int
    z: float = Z99
    interval: str = "normal"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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
            {"samples": est.samples, **extra},
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def mc_mean(
    draw: Callable[[int, torch.Generator | None], torch.Tensor],
    samples: int,
    generator: Generator = None,
    batch: int = 8192,
    z: float = Z99,
    bounds: tuple[float, float] | None = None,
) -> Estimate:
    """Mean of i.i.d. values ``draw(n, gen) -> (n,)`` with a CI at the level of ``z``, streamed.

    With ``bounds = (a, b)`` (every value's a-priori range; a value outside raises) the CI is the
    ``bounded`` interval, else the CLT one.
    """
    samples = check_int("samples", samples, lo=2)
    batch = check_int("batch", batch, lo=1)
    z = check_float("z", z, lo=0.0)
    gen = as_generator(generator)
    n, total, total_sq = 0, 0.0, 0.0
    while n < samples:
        m = min(batch, samples - n)
        v = draw(m, gen).detach().to(torch.float64).reshape(-1)
        if v.numel() != m:
            raise ValueError(f"draw must return {m} values (got {v.numel()})")
        if bounds is not None:
            slack = 1e-6 * (bounds[1] - bounds[0])
            if float(v.min()) < bounds[0] - slack or float(v.max()) > bounds[1] + slack:
                raise ValueError(f"bounds {bounds} must contain every value drawn")
            v = v.clamp(bounds[0], bounds[1])
        total += float(v.sum())
        total_sq += float((v * v).sum())
        n += m
    mean = total / n
    var = max(total_sq / n - mean * mean, 0.0) * n / (n - 1)
    se = math.sqrt(var / n)
    if bounds is not None:
        iv = mean_interval(mean, var, n, 2 * float(norm.cdf(z)) - 1, "bounded", bounds)
        return Estimate(mean, se, iv.lo, iv.hi, n, z, iv.method)
    return Estimate(mean, se, mean - z * se, mean + z * se, n, z)


def pooled(values: list[float], level: float = 0.99) -> Estimate:
    """Student-t CI for the mean of independent replicate values (e.g. per-seed errors)."""
    from scipy.stats import t as student_t

    k = len(values)
    if k < 1:
        raise ValueError("values must hold at least one value")
    level = check_float("level", level, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    mean = sum(values) / k
    if k == 1:
        return Estimate(mean, float("nan"), float("nan"), float("nan"), 1, float("nan"))
    var = sum((v - mean) ** 2 for v in values) / (k - 1)
    se = math.sqrt(var / k)
    q = float(student_t.ppf(0.5 + level / 2, k - 1))
    return Estimate(mean, se, mean - q * se, mean + q * se, k, q, "student_t")


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
    z: float = Z99,
    bounds: tuple[float, float] | None = None,
) -> Estimate:
    """Monte Carlo ``E ||target(X, y) - forward(X, y)||^2`` on fresh ``(X, y)`` with a CI.

    ``forward`` may return ``(B, d)`` or ``(1, B, d)`` (one model of a stacked layer).
    ``bounds``: the error's a-priori range (``(0, 4)`` when outputs lie in the unit ball).
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

    return mc_mean(draw, samples, generator, batch=batch, z=z, bounds=bounds)
