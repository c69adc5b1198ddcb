"""Monte Carlo error with honest confidence intervals.

Serves every ``monte_carlo`` / ``trained`` piece of evidence (docs/architecture.md): a bound is
``violated`` only when a CI from here lies entirely on the wrong side of it.

- Fresh samples only: ``estimate_error`` draws from its own generator, never from training data.
- Streamed: batches of ``batch`` samples, accumulated in float64 (Chan's parallel update), on
  the model's device.
- CI (``Estimate.method`` names it): with ``bounds = (a, b)``, the a-priori range of every
  per-sample error (e.g. ``(0, 4)`` for squared distances of vectors of norm <= 1), the default is
  ``bounded`` (empirical Bernstein intersected with the Chernoff-KL bound,
  ``workbench.core.intervals``), valid for every ``n`` and for rare-event errors; ``bernstein``
  and ``chernoff`` alone are available. Without a range: ``normal`` (CLT, ``mean +- z s /
  sqrt(n)``, asymptotic) or ``bootstrap`` (percentile bootstrap of the mean, which keeps the
  per-sample values on the CPU). A value outside ``bounds`` is an error: the range was wrong.
- Early stop: with ``tol``, sampling stops once every model's normal half-width is ``<= tol``
  (and at least ``min_samples`` were drawn). This is a sequential rule; the nominal level is
  then approximate.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import torch
from scipy.stats import norm

from workbench.core.intervals import mean_interval
from workbench.core.sphere import Generator, as_generator
from workbench.core.validation import check_choice, check_float, check_int
from workbench.verifiers.tasks import TaskLike

METHODS: tuple[str, ...] = ("auto", "normal", "bootstrap", "bernstein", "chernoff", "bounded")
BOUNDED_METHODS: tuple[str, ...] = ("bernstein", "chernoff", "bounded")


@dataclass(frozen=True)
class Estimate:
    """A Monte Carlo mean with a two-sided CI ``[lo, hi]`` at ``level``."""

    mean: float
    lo: float
    hi: float
    level: float
    n: int
    std: float
    method: str

    @property
    def half_width(self) -> float:
        return (self.hi - self.lo) / 2

    def covers(self, value: float) -> bool:
        """Whether ``value`` lies in the CI."""
        return self.lo <= value <= self.hi

    def below(self, bound: float) -> bool:
        """Whether the whole CI lies strictly below ``bound`` (a lower bound is contradicted)."""
        return self.hi < bound

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def z_value(level: float) -> float:
    """Two-sided normal quantile for a CI at ``level``."""
    level = check_float("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    return float(norm.ppf(0.5 + level / 2))


def estimate_mean(
    draw: Callable[[int, torch.Generator | None], torch.Tensor],
    *,
    samples: int = 100_000,
    batch: int = 4096,
    level: float = 0.95,
    method: str = "auto",
    tol: float | None = None,
    min_samples: int = 1000,
    resamples: int = 2000,
    generator: Generator = 0,
    bounds: tuple[float, float] | None = None,
) -> list[Estimate]:
    """CI for the means of ``draw(b, g) -> (K, b)`` per-sample values, one ``Estimate`` per row.

    ``method="auto"`` is ``bounded`` when ``bounds`` is given, else ``normal``.
    """
    samples = check_int("samples", samples, lo=2)
    batch = check_int("batch", batch, lo=1)
    z = z_value(level)
    check_choice("method", method, METHODS)
    if method == "auto":
        method = "bounded" if bounds is not None else "normal"
    if method in BOUNDED_METHODS and bounds is None:
        raise ValueError(f"bounds must be given (a, b) for method {method!r} (got None)")
    if bounds is not None:
        bounds = (check_float("bounds[0]", bounds[0]), check_float("bounds[1]", bounds[1]))
        if not bounds[0] < bounds[1]:
            raise ValueError(f"bounds must satisfy bounds[0] < bounds[1] (got {bounds})")
    resamples = check_int("resamples", resamples, lo=10)
    min_samples = check_int("min_samples", min_samples, lo=2)
    if tol is not None:
        tol = check_float("tol", tol, lo=0.0, lo_open=True)
    gen = as_generator(generator)
    n, mean, m2 = 0, None, None
    kept: list[torch.Tensor] = []
    while n < samples:
        b = min(batch, samples - n)
        vals = draw(b, gen).detach().to(torch.float64)
        if vals.ndim == 1:
            vals = vals.unsqueeze(0)
        if bounds is not None:  # rounding slack of float32 models: 1e-6 of the range
            slack = 1e-6 * (bounds[1] - bounds[0])
            if bool((vals < bounds[0] - slack).any()) or bool((vals > bounds[1] + slack).any()):
                raise ValueError(
                    f"bounds {bounds} must contain every value (got one in "
                    f"[{float(vals.min())}, {float(vals.max())}])"
                )
            vals = vals.clamp(bounds[0], bounds[1])
        if method == "bootstrap":
            kept.append(vals.cpu())
        bm = vals.mean(1)
        bm2 = (vals - bm[:, None]).square().sum(1)
        if mean is None or m2 is None:
            mean, m2 = bm, bm2
        else:  # Chan et al.: merge (n, mean, m2) with (b, bm, bm2)
            delta = bm - mean
            mean = mean + delta * b / (n + b)
            m2 = m2 + bm2 + delta.square() * n * b / (n + b)
        n += b
        if tol is not None and n >= min_samples:
            if float((z * (m2 / (n - 1)).sqrt() / math.sqrt(n)).max()) <= tol:
                break
    assert mean is not None and m2 is not None
    std = (m2 / (n - 1)).sqrt().cpu()
    mean = mean.cpu()
    if method == "normal":
        half = z * std / math.sqrt(n)
        lo, hi = mean - half, mean + half
    elif method == "bootstrap":
        lo, hi = _bootstrap(torch.cat(kept, dim=1), level, resamples, gen)
    else:
        ivs = [
            mean_interval(float(mean[k]), float(std[k]) ** 2, n, level, method, bounds)
            for k in range(mean.shape[0])
        ]
        lo = torch.tensor([iv.lo for iv in ivs], dtype=torch.float64)
        hi = torch.tensor([iv.hi for iv in ivs], dtype=torch.float64)
    return [
        Estimate(float(mean[k]), float(lo[k]), float(hi[k]), level, n, float(std[k]), method)
        for k in range(mean.shape[0])
    ]


def _bootstrap(
    vals: torch.Tensor, level: float, resamples: int, gen: torch.Generator | None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Percentile bootstrap of the mean, per row of ``vals`` ``(K, n)``."""
    n = vals.shape[1]
    cpu_gen = gen if gen is None or gen.device.type == "cpu" else None
    chunk = max(1, 4_000_000 // n)
    means = []
    for start in range(0, resamples, chunk):
        r = min(chunk, resamples - start)
        idx = torch.randint(n, (r, n), generator=cpu_gen)
        means.append(vals[:, idx].mean(-1))  # (K, r)
    m = torch.cat(means, dim=1)
    q = torch.tensor([0.5 - level / 2, 0.5 + level / 2], dtype=m.dtype)
    lo_hi = torch.quantile(m, q, dim=1)
    return lo_hi[0], lo_hi[1]


def estimate_error(
    model: Callable[..., torch.Tensor],
    task: TaskLike,
    *,
    samples: int = 100_000,
    batch: int = 4096,
    level: float = 0.95,
    method: str = "auto",
    tol: float | None = None,
    min_samples: int = 1000,
    resamples: int = 2000,
    generator: Generator = 0,
    device: str | torch.device | None = None,
    bounds: tuple[float, float] | None = None,
) -> list[Estimate]:
    """Error ``E ||f - A||^2`` of ``model`` on fresh samples of ``task``, one CI per stacked model.

    ``model(*inputs)`` returns ``(K, B, ...)`` (a stacked layer) or ``(B, ...)``. Inputs are drawn
    on ``device`` (default: the model's device, else the CPU) from ``generator`` and cast to the
    model's dtype. ``bounds``: the a-priori range of the per-sample error (see the module note).
    """
    params = list(model.parameters()) if isinstance(model, torch.nn.Module) else []
    dtype = params[0].dtype if params else torch.float32
    if device is None:
        device = params[0].device if params else torch.device("cpu")

    def draw(b: int, g: torch.Generator | None) -> torch.Tensor:
        inputs, target = task.sample(b, g, device)
        inputs = tuple(x.to(dtype) if x.is_floating_point() else x for x in inputs)
        with torch.no_grad():
            return task.error(model(*inputs), target.to(dtype))

    return estimate_mean(
        draw,
        samples=samples,
        batch=batch,
        level=level,
        method=method,
        tol=tol,
        min_samples=min_samples,
        resamples=resamples,
        generator=generator,
        bounds=bounds,
    )
