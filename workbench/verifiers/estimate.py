"""The error of a model on a task, on fresh samples, with an honest interval.

Serves every ``monte_carlo`` / ``trained`` piece of evidence (docs/architecture.md): a bound is
``violated`` only when an interval from here lies entirely on the wrong side of it. Fresh samples
only: ``estimate_error`` draws from its own generator, never from training data. The sampling
and the intervals are ``workbench.core.montecarlo.estimate_mean`` (see its module note).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from workbench.core.intervals import NONNEGATIVE, Estimate
from workbench.core.montecarlo import estimate_mean
from workbench.verifiers.tasks import TaskLike


def estimate_error(
    model: Callable[..., torch.Tensor],
    task: TaskLike,
    *,
    device: str | torch.device | None = None,
    **options: Any,
) -> list[Estimate]:
    """Error ``E ||f - A||^2`` of ``model`` on fresh samples of ``task``, one CI per stacked model.

    ``model(*inputs)`` returns ``(K, B, ...)`` (a stacked layer) or ``(B, ...)``. Inputs are drawn
    on ``device`` (default: the model's device, else the CPU) from ``generator`` and cast to the
    model's dtype. ``options`` are those of ``workbench.core.montecarlo.estimate_mean``, with its
    defaults: ``samples``, ``batch``, ``level``, ``method``, ``tol``, ``min_samples``,
    ``resamples``, ``generator`` (the fresh samples' seed) and ``bounds`` (the a-priori range of
    the per-sample error, default ``NONNEGATIVE``: an error is never negative, so every interval
    is cut at 0; see the module note).
    """
    options.setdefault("bounds", NONNEGATIVE)
    params = list(model.parameters()) if isinstance(model, torch.nn.Module) else []
    dtype = params[0].dtype if params else torch.float32
    if device is None:
        device = params[0].device if params else torch.device("cpu")

    def draw(b: int, g: torch.Generator | None) -> torch.Tensor:
        inputs, target = task.sample(b, g, device)
        inputs = tuple(x.to(dtype) if x.is_floating_point() else x for x in inputs)
        with torch.no_grad():
            return task.error(model(*inputs), target.to(dtype))

    return estimate_mean(draw, **options)
