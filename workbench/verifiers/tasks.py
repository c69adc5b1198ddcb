"""Tasks: a distribution of inputs, a target, and the per-sample error (docs/paper.md §2, §6).

A task samples ``(inputs, target)`` and scores stacked predictions. ``error(pred, target)`` is
the paper's error, the plain squared Euclidean norm ``||f - A||^2`` (not averaged over
coordinates), so the zero model scores exactly 1 on every task here:

- ``nearest``: lone query ``y``, keys ``X``; target ``x_{argmax <x_i, y>}``. With
  ``points="orthonormal"`` and uniform queries this is ``D_N`` (Theorem 2 uses ``D_2``).
- ``farthest``: the sequence task of §4; every token queries, the label of token ``i`` is the
  point farthest from ``x_i``. Error: ``||.||^2`` averaged over the N tokens.
- ``regression``: in-context linear regression (Garg et al. 2022), ``N`` context pairs in
  dimension ``d``; error ``(w.x_q - pred)^2 / d`` (so predicting 0 scores 1).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, cast, runtime_checkable

import torch

from workbench.core.sphere import (
    POINT_LAWS,
    QUERY_LAWS,
    PointLaw,
    QueryLaw,
    sample_instances,
    sample_points,
)
from workbench.core.targets import (
    farthest_point_sequence,
    linear_regression_draw,
    linear_regression_labels,
    nearest_neighbour,
)
from workbench.core.validation import (
    check_choice,
    check_dim,
    check_int,
    check_orthonormal_keys,
    check_points,
)

TASKS: tuple[str, ...] = ("nearest", "farthest", "regression")
Inputs = tuple[torch.Tensor, ...]


class TaskLike(Protocol):
    """Anything the estimator can score: a sampler and a per-sample error."""

    def sample(
        self, batch: int, generator: torch.Generator | None, device: Any = None
    ) -> tuple[Inputs, torch.Tensor]: ...

    def error(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor: ...


@runtime_checkable
class StackableTask(TaskLike, Protocol):
    """A task whose ``sample`` is ``label(draw(...))``, ``label`` taking any leading batch dims."""

    def draw(self, batch: int, generator: torch.Generator | None, device: Any = None) -> Inputs: ...

    def label(self, draws: Inputs) -> tuple[Inputs, torch.Tensor]: ...


@dataclass(frozen=True)
class Task:
    """A task of the paper: ``name`` in ``TASKS``, dimension ``d``, ``N`` keys (or pairs)."""

    name: str = "nearest"
    d: int = 16
    N: int = 2
    points: str = "iid"
    queries: str = "uniform"

    def __post_init__(self) -> None:
        check_choice("task", self.name, TASKS)
        check_dim(self.d)
        check_points(self.N)
        check_choice("distribution", self.points, POINT_LAWS)
        check_choice("queries", self.queries, QUERY_LAWS)
        check_orthonormal_keys(self.points, self.N, self.d)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def sample(
        self, batch: int, generator: torch.Generator | None, device: Any = None
    ) -> tuple[Inputs, torch.Tensor]:
        """Fresh float32 ``(inputs, target)`` of batch size ``batch``."""
        return self.label(self.draw(batch, generator, device))

    def draw(self, batch: int, generator: torch.Generator | None, device: Any = None) -> Inputs:
        """The random part of a sample: ``(X, y)``, ``(X,)`` or regression's ``(xs, w)``."""
        batch = check_int("batch", batch, lo=1)
        f32 = torch.float32
        points, queries = cast(PointLaw, self.points), cast(QueryLaw, self.queries)
        if self.name == "nearest":
            return sample_instances(batch, self.N, self.d, points, queries, generator, device, f32)
        if self.name == "farthest":
            return (sample_points(batch, self.N, self.d, points, generator, device, f32),)
        return linear_regression_draw(batch, self.d, self.N, generator, device, f32)

    def label(self, draws: Inputs) -> tuple[Inputs, torch.Tensor]:
        """``(inputs, target)`` of ``draws`` with any leading batch dims (e.g. ``(K, B, ...)``).

        The leading dims are flattened into one batch: each sample's target is bit for bit the
        one ``sample`` gives it alone.
        """
        if self.name == "nearest":
            X, y = draws
            return draws, nearest_neighbour(X.flatten(0, -3), y.flatten(0, -2)).view_as(y)
        if self.name == "farthest":
            (X,) = draws
            return draws, farthest_point_sequence(X.flatten(0, -3)).view_as(X)
        xs, w = draws
        ys = linear_regression_labels(xs.flatten(0, -3), w.flatten(0, -2)).reshape(xs.shape[:-1])
        target = ys[..., -1].clone()
        ys[..., -1] = 0.0
        return (xs, ys), target

    def error(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """Per-sample error ``(K, B)`` of stacked predictions ``(K, B, ...)`` (or ``(B, ...)``)."""
        diff = pred - (target.unsqueeze(0) if pred.ndim == target.ndim + 1 else target)
        if self.name == "regression":
            err = diff.square() / self.d
        else:
            err = diff.square().sum(-1)
            err = err.mean(-1) if self.name == "farthest" else err
        return err if err.ndim == 2 else err.unsqueeze(0)


def sample_stacked(
    task: TaskLike, batch: int, generators: list[torch.Generator], device: Any = None
) -> tuple[Inputs, torch.Tensor]:
    """One independent batch per model, stacked along a leading K axis.

    Each model draws from its own generator. A ``StackableTask`` on the CPU then labels all K
    batches in one call where every model's block of a ``(B, ...)`` tensor starts 64-byte aligned,
    as a tensor of its own does: MKL's small matmuls round differently at other alignments, so
    the labels are bit for bit those of the model alone. Otherwise models are labelled one by one.
    """
    if isinstance(task, StackableTask):
        parts = [task.draw(batch, g, device) for g in generators]
        first = parts[0][0]
        if first.device.type == "cpu" and batch * first.element_size() % 64 == 0:
            return task.label(tuple(torch.stack(x) for x in zip(*parts)))
        draws = [task.label(p) for p in parts]
    else:
        draws = [task.sample(batch, g, device) for g in generators]
    inputs = tuple(torch.stack([d[0][i] for d in draws]) for i in range(len(draws[0][0])))
    return inputs, torch.stack([d[1] for d in draws])


@dataclass(frozen=True)
class TargetTask(Task):
    """The ``nearest`` inputs (keys ``X``, a lone query ``y``) labelled by another target
    (``workbench.core.profiles.Target`` at fixed parameters: soft-nearest, farthest, a
    plug-in; docs/derivations/soft_targets.md). ``fn(X, y)`` is the target's map; ``target``
    and ``target_params`` name it in records (``to_dict``), where ``fn`` is left out."""

    target: str = "nearest"
    target_params: tuple[tuple[str, Any], ...] = ()
    fn: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.name != "nearest":
            raise ValueError(f"a TargetTask draws the nearest task's inputs (got {self.name!r})")
        if not callable(self.fn):
            raise ValueError("fn must be the target's map (X, y) -> f(X, y)")

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "d": self.d, "N": self.N, "points": self.points,
                "queries": self.queries, "target": self.target,
                "target_params": dict(self.target_params)}

    def label(self, draws: Inputs) -> tuple[Inputs, torch.Tensor]:
        X, y = draws
        with torch.no_grad():
            f = self.fn(X.flatten(0, -3), y.flatten(0, -2))
        return draws, f.to(y.dtype).view_as(y)
