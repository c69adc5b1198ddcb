"""Streamed Monte Carlo means with named intervals (docs/derivations/intervals.md).

The one sampling engine of the workbench: constructions (their claimed errors), verifiers (the
error of a model on a task, ``workbench.verifiers.estimate``) and claims draw through
:func:`estimate_mean`, or summarise values already drawn with :func:`sample_mean`. Both return
``workbench.core.intervals.Estimate`` records.

- Streamed: batches of ``batch`` values, accumulated in float64 (Chan's parallel update), on the
  device of the draws.
- Interval: with ``bounds = (a, b)``, the a-priori range of every value (e.g. ``(0, 4)`` for
  squared distances of vectors of norm <= 1), the default is ``bounded`` (empirical Bernstein
  intersected with the Chernoff-KL bound), valid for every ``n`` and for rare-event means;
  ``bernstein``, ``chernoff`` and ``clopper_pearson`` (0/1 values) are available. Without a
  finite range: ``normal`` (CLT, asymptotic) or ``bootstrap`` (percentile bootstrap of the mean,
  which keeps the values on the CPU); a half-line range (``intervals.NONNEGATIVE``, that of every
  error) cuts their interval to it. A value outside ``bounds`` (beyond float32 rounding, 1e-6 of
  the range's finite width) is an error: the range was wrong.
- Early stop: with ``tol``, sampling stops once every row's normal half-width is ``<= tol`` (and
  at least ``min_samples`` were drawn). This is a sequential rule; the nominal level is then
  approximate.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from workbench.core.intervals import BOUNDED_INTERVALS, Estimate, mean_interval, z_value
from workbench.core.sphere import Generator, as_generator
from workbench.core.validation import check_choice, check_float, check_int

METHODS: tuple[str, ...] = ("auto", "normal", "bootstrap", *BOUNDED_INTERVALS)


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

    ``method="auto"`` is ``bounded`` when ``bounds`` is a finite range, else ``normal``; every
    interval is cut to ``bounds`` (``intervals.Estimate.within``).
    """
    samples = check_int("samples", samples, lo=2)
    batch = check_int("batch", batch, lo=1)
    z = z_value(level)
    check_choice("method", method, METHODS)
    bounds = _checked_range(bounds)
    if method == "auto":
        method = "bounded" if _finite(bounds) else "normal"
    if method in BOUNDED_INTERVALS and not _finite(bounds):
        raise ValueError(f"bounds must be a finite range (a, b) for method {method!r} "
                         f"(got {bounds})")
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
        if bounds is not None:
            vals = _check_range(vals, bounds)
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
        Estimate(float(mean[k]), float(lo[k]), float(hi[k]), level, n, float(std[k]),
                 method).within(bounds)
        for k in range(mean.shape[0])
    ]


def _checked_range(bounds: tuple[float, float] | None) -> tuple[float, float] | None:
    """``bounds`` as floats with ``a < b``: finite, or a half-line (an infinite end)."""
    if bounds is None:
        return None
    a, b = (float(v) if isinstance(v, int | float) and not isinstance(v, bool) else math.nan
            for v in bounds)
    if math.isnan(a) or math.isnan(b) or not a < b or a == math.inf or b == -math.inf:
        raise ValueError(f"bounds must be a range (a, b) with a < b, finite or a half-line "
                         f"(got {bounds})")
    return a, b


def _finite(bounds: tuple[float, float] | None) -> bool:
    return bounds is not None and math.isfinite(bounds[0]) and math.isfinite(bounds[1])


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


def _check_range(vals: torch.Tensor, bounds: tuple[float, float]) -> torch.Tensor:
    """Clamp ``vals`` into ``bounds`` after checking that they lie there up to float32 rounding
    (1e-6 of the range)."""
    slack = 1e-6 * (bounds[1] - bounds[0]) if _finite(bounds) else 0.0
    if bool((vals < bounds[0] - slack).any()) or bool((vals > bounds[1] + slack).any()):
        raise ValueError(
            f"bounds {bounds} must contain every value (got one in "
            f"[{float(vals.min())}, {float(vals.max())}])"
        )
    return vals.clamp(bounds[0], bounds[1])


def sample_mean(
    values: torch.Tensor,
    level: float = 0.999,
    method: str = "auto",
    bounds: tuple[float, float] | None = None,
) -> Estimate:
    """Mean of values already drawn, with an interval at ``level`` (``auto``: ``bounded`` when
    ``bounds`` is a finite range, else ``normal``), cut to ``bounds``."""
    x = values.detach().to(torch.float64).reshape(-1)
    n = check_int("values.numel()", x.numel(), lo=1)
    check_choice("method", method, ("auto", "normal", *BOUNDED_INTERVALS))
    bounds = _checked_range(bounds)
    if method == "auto":
        method = "bounded" if _finite(bounds) else "normal"
    if bounds is not None:
        x = _check_range(x, bounds)
    var = float(x.var(unbiased=True)) if n > 1 else 0.0
    return mean_interval(float(x.mean()), var, n, level, method, bounds)
